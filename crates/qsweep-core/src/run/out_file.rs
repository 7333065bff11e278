//! The files around a run's output: the `.partial` that `--force` writes
//! beside it, the lock that keeps a second run off it, the check that it is
//! none of the run's inputs, and the `-o` flag a resume command leaves out.
//! Apart from the session's lifecycle ([`super::session`]) because each is
//! a rule about paths, tested on its own.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::provenance;
use crate::spec::Spec;
use crate::usage;

/// `OUT.partial`: where `--force` writes while the old CSV stays intact.
/// An output without an extension (`plain`) gets `plain.partial.csv`
/// instead: `plain.partial` would have the `.meta.json` of `plain` itself
/// ([`provenance::meta_path`] replaces the extension), and finishing the run
/// deleted the new provenance, or an interrupted run left `plain.meta.json`
/// describing the partial rows (issue 25).
pub(super) fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".partial");
    let partial = PathBuf::from(name);
    if provenance::meta_path(&partial) == provenance::meta_path(out) {
        let mut name = partial.into_os_string();
        name.push(".csv");
        return PathBuf::from(name);
    }
    partial
}

/// Whether `args` (a command line) has `-o -` (or `--out -`, `--out=-`,
/// `-o-`): the rows stream to stdout.
pub(super) fn streams_to_stdout(args: &[String]) -> bool {
    args.windows(2)
        .any(|w| (w[0] == "-o" || w[0] == "--out") && w[1] == "-")
        || args.iter().any(|a| a == "--out=-" || a == "-o-")
}

/// `args` without `-o X`, `--out X`, `--out=X` or `-oX`.
pub(super) fn without_out_flag(args: Vec<String>) -> Vec<String> {
    let mut kept = Vec::with_capacity(args.len());
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
        } else if a == "-o" || a == "--out" {
            skip_next = true;
        } else if !(a.starts_with("--out=") || (a.starts_with("-o") && a.len() > 2)) {
            kept.push(a);
        }
    }
    kept
}

/// Opens and exclusively locks an existing output for this run's lifetime:
/// a second run on the same CSV (a job array that forgot a per-task `-o`)
/// is refused instead of interleaving its rows. None if `out` is new.
pub(super) fn lock_existing(out: &Path) -> Result<Option<std::fs::File>> {
    let file = match std::fs::File::open(out) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Ok(None),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(usage(format!(
            "out: '{}' is being written by another qsweep run; expected a different --out for \
             each run at the same time (e.g. one per --shard)",
            out.display()
        ))),
        // A file system without locks: carry on as before.
        Err(std::fs::TryLockError::Error(_)) => Ok(Some(file)),
    }
}

/// Refuses an output that is one of the run's inputs (the spec, the meta it
/// comes from, an empirical data file) or a `.meta.json`.
pub(super) fn refuse_inputs_as_output(
    out: &Path,
    spec: &Spec,
    spec_file: Option<&Path>,
) -> Result<()> {
    let name = out.to_string_lossy();
    if name.ends_with(".meta.json") || name.ends_with(".meta.json.tmp") {
        return Err(usage(format!(
            "out: '{}' is a .meta.json name; expected a CSV path (its .meta.json is written \
             beside it)",
            out.display()
        )));
    }
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    let meta = provenance::meta_path(out);
    let mut inputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(s) = spec_file {
        inputs.push(("the spec", s.to_path_buf()));
    }
    // (The --from-meta file may be the output's own meta: that is how a
    // run is resumed from its meta alone; `out` ending in .meta.json is
    // refused above.)
    for p in spec.points() {
        for d in [&p.arrival, &p.service] {
            if let Some(f) = d.data_file() {
                if !inputs.iter().any(|(_, q)| q == f) {
                    inputs.push(("an empirical data file", f.to_path_buf()));
                }
            }
        }
    }
    for (what, input) in &inputs {
        if same(out, input) || same(&meta, input) {
            return Err(usage(format!(
                "out: '{}' (or its .meta.json) is {what} of this run; expected a new path for \
                 the results",
                out.display()
            )));
        }
    }
    Ok(())
}
