//! `qsweep merge`: the CSVs of a sharded sweep (`--shard K/N` on N machines)
//! into one, sorted by point, as one unsharded run would have written it.
//!
//! Each piece must have its `.meta.json`: all must carry one spec hash, and
//! together their rows must hold every point of the grid exactly once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::output::{failed_points, CsvSink};
use crate::provenance::{self, meta_path, Invocation, Meta, Piece, Status, META_FORMAT};
use crate::run::resume::{scan_csv, Expect, Shard};
use crate::usage;

/// What [`merge`] wrote.
pub struct Merged {
    pub rows: Vec<Vec<String>>,
    pub meta: PathBuf,
}

/// Refuses an output that merge must not write (issue 25): a name whose
/// format is not CSV (merge writes CSV; `qsweep export` converts it), a
/// `.meta.json` name (a piece's provenance would be overwritten), a FIFO,
/// device or directory, an output whose `.meta.json` is a piece's, and an
/// existing `.meta.json` without `force` (even when the CSV is gone).
fn check_out(out: &Path, pieces: &[PathBuf], force: bool) -> Result<()> {
    let format = crate::export::Format::of_path(out)
        .map_err(|e| usage(e.0.replacen("out:", "merge: OUT", 1)))?;
    if format != crate::export::Format::Csv {
        return Err(usage(format!(
            "merge: OUT '{}' names a .{} file, but merge writes CSV; expected OUT.csv (then \
             `qsweep export OUT.csv {}`)",
            out.display(),
            format.extension(),
            out.display()
        )));
    }
    crate::files::regular_output(out, "merge: OUT")?;
    let mp = meta_path(out);
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    if let Some(p) = pieces.iter().find(|p| same(&meta_path(p), &mp)) {
        return Err(usage(format!(
            "merge: OUT '{}' would write '{}', the meta file of the piece '{}'; expected \
             another name for the merged CSV",
            out.display(),
            mp.display(),
            p.display()
        )));
    }
    if !force && mp.symlink_metadata().is_ok() {
        return Err(already_exists(&mp));
    }
    Ok(())
}

fn already_exists(path: &Path) -> anyhow::Error {
    usage(format!(
        "merge: '{}' already exists; expected a new output (pass --force to overwrite it)",
        path.display()
    ))
}

/// Merges `pieces` into `out` (refused if it exists, unless `force`) and
/// writes `out`'s `.meta.json`. Every check runs before anything is written.
pub fn merge(out: &Path, pieces: &[PathBuf], force: bool) -> Result<Merged> {
    if pieces.is_empty() {
        return Err(usage(
            "merge: no pieces given; expected OUT.csv PIECE.csv...".into(),
        ));
    }
    let same_file = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    check_out(out, pieces, force)?;
    for p in pieces {
        if same_file(p, out) {
            return Err(usage(format!(
                "merge: the output '{}' is also a piece; expected a new file for the merged CSV",
                out.display()
            )));
        }
    }
    let mut metas: Vec<Meta> = Vec::new();
    for p in pieces {
        let mp = meta_path(p);
        if !mp.exists() {
            return Err(usage(format!(
                "merge: piece '{}' has no '{}' beside it; expected pieces written by qsweep run \
                 (the meta file says which spec they come from)",
                p.display(),
                mp.display()
            )));
        }
        let meta = Meta::read(&mp)?;
        if let Some(first) = metas.first() {
            if meta.spec_hash != first.spec_hash {
                let why = if meta.seed != first.seed {
                    format!("seed {} vs {}", meta.seed, first.seed)
                } else {
                    format!("spec hash {} vs {}", meta.spec_hash, first.spec_hash)
                };
                return Err(usage(format!(
                    "merge: '{}' comes from a different spec than '{}' ({why}); expected pieces \
                     of one sweep",
                    p.display(),
                    pieces[0].display()
                )));
            }
        }
        metas.push(meta);
    }
    // Every kept row is checked against the spec the metas record (and that
    // spec against the hash they carry: an edited spec_toml is refused).
    let spec = crate::run::resume::recorded_spec(&metas[0], &meta_path(&pieces[0]))?;
    let grid = spec.points();
    for (p, m) in pieces.iter().zip(&metas) {
        if m.points_total != grid.len() as u64 {
            // Rows are checked against the grid by index (issue 25: a
            // meta claiming more points panicked on a row beyond it).
            return Err(usage(format!(
                "merge: '{}' claims {} points, its spec has {}; expected the meta file qsweep \
                 wrote (an edited file?)",
                meta_path(p).display(),
                m.points_total,
                grid.len()
            )));
        }
    }
    let axes = |i: u32| crate::output::axis_fields(&grid[i as usize]);
    let total = metas[0].points_total;
    // point -> (piece, row)
    let mut by_point: BTreeMap<u32, (usize, Vec<String>)> = BTreeMap::new();
    let mut piece_rows = vec![0u64; pieces.len()];
    // `--quantiles` columns (one spec hash: the same in every piece).
    let mut extra: Vec<String> = Vec::new();
    for (i, (p, meta)) in pieces.iter().zip(&metas).enumerate() {
        let shard = meta.shard.as_deref().map(Shard::parse).transpose()?;
        let scanned = scan_csv(
            p,
            &Expect {
                total,
                shard,
                seed: meta.seed,
                axes: Some(&axes),
                customers: Some(spec.run.customers),
                reps: spec.run.precision.is_none().then_some(spec.run.reps),
                numbers: true,
            },
        )?;
        if let Some((line, _)) = scanned.torn {
            return Err(usage(format!(
                "merge: '{}' line {line} is cut short (was its run killed?); expected whole \
                 pieces: finish it with `qsweep run --from-meta {} --resume`",
                p.display(),
                meta_path(p).display()
            )));
        }
        piece_rows[i] = scanned.rows.len() as u64;
        extra = scanned.extra;
        for row in scanned.rows {
            let point: u32 = row[0].parse().expect("scan_csv checked the point");
            if let Some((j, _)) = by_point.get(&point) {
                return Err(usage(format!(
                    "merge: point {point} is in both '{}' and '{}'; expected each point in \
                     exactly one piece",
                    pieces[*j].display(),
                    p.display()
                )));
            }
            by_point.insert(point, (i, row));
        }
    }
    let missing: Vec<u64> = (0..total)
        .filter(|&k| !by_point.contains_key(&(k as u32)))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(10).map(u64::to_string).collect();
        let more = if missing.len() > 10 { ", ..." } else { "" };
        let unfinished: Vec<String> = pieces
            .iter()
            .zip(&metas)
            .zip(&piece_rows)
            .filter(|((_, m), &rows)| m.run.status != Status::Complete || rows < m.points)
            .map(|((p, m), rows)| {
                format!(
                    "'{}' ({}, {rows} of {} rows)",
                    p.display(),
                    m.run.status,
                    m.points
                )
            })
            .collect();
        let hint = if unfinished.is_empty() {
            " (a piece not given?)".to_string()
        } else {
            format!("; unfinished: {}", unfinished.join(", "))
        };
        return Err(usage(format!(
            "merge: {} of {total} points missing (points {}{more}){hint}; expected every point \
             in exactly one piece",
            missing.len(),
            shown.join(", ")
        )));
    }

    // Whole or not at all (issue 40): with --force on a full disk the old
    // merged CSV, and the meta file that describes it, stay as they were.
    let staged = crate::files::Staged::new(out, force);
    let unwritten = |e: anyhow::Error| {
        e.context(format!(
            "merge: cannot write '{}' (nothing was written; an existing file is as it was)",
            out.display()
        ))
    };
    staged.create().map_err(|e| {
        usage(format!(
            "merge: cannot create '{}': {e}; expected a path in a folder that exists",
            out.display()
        ))
    })?;
    let mut sink = CsvSink::create_with(staged.path(), true, &extra)?;
    let mut rows = Vec::with_capacity(by_point.len());
    for (_, (_, row)) in by_point {
        sink.write(&row).map_err(unwritten)?;
        rows.push(row);
    }
    // Synced when committed, below.
    drop(sink);

    let now = provenance::now_rfc3339();
    let distinct = |f: &dyn Fn(&Meta) -> String| {
        let mut v: Vec<String> = Vec::new();
        for m in &metas {
            let s = f(m);
            if !v.contains(&s) {
                v.push(s);
            }
        }
        v.join(", ")
    };
    let first = &metas[0];
    let meta = Meta {
        format: META_FORMAT.to_string(),
        csv: provenance::file_name(out),
        spec_hash: first.spec_hash.clone(),
        seed: first.seed,
        spec_toml: first.spec_toml.clone(),
        spec_source: first.spec_source.clone(),
        spec_dir: first.spec_dir.clone(),
        points_total: total,
        shard: None,
        points: total,
        points_done: rows.len() as u64,
        failed_points: failed_points(&rows),
        backend: distinct(&|m| m.backend.clone()),
        adapter: first.adapter.clone(),
        run: Invocation {
            command: provenance::command_line(),
            cwd: provenance::cwd(),
            host: provenance::hostname(),
            qsweep_version: provenance::VERSION.to_string(),
            git_revision: provenance::git_revision().to_string(),
            engine: distinct(&|m| m.run.engine.clone()),
            started: now.clone(),
            ended: Some(now),
            status: Status::Complete,
            points_run: 0,
            device: None,
        },
        first_started: metas
            .iter()
            .map(|m| m.first_started.clone())
            .min()
            .unwrap_or_default(),
        error: None,
        previous_runs: Vec::new(),
        replaces: None,
        pieces: pieces
            .iter()
            .zip(&metas)
            .zip(&piece_rows)
            .map(|((p, m), &rows)| Piece {
                csv: p.display().to_string(),
                shard: m.shard.clone(),
                rows,
                host: m.run.host.clone(),
                engine: m.run.engine.clone(),
                started: m.first_started.clone(),
                ended: m.run.ended.clone(),
            })
            .collect(),
    };
    let mp = meta_path(out);
    // Both files are written before either is put in place (renames need
    // no space): a full disk leaves the old pair, never a meta file that
    // describes rows that are not there. check_out refused an existing meta
    // file without --force.
    let staged_meta = crate::files::Staged::new(&mp, true);
    meta.write(staged_meta.path()).map_err(unwritten)?;
    staged.commit().map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            already_exists(out)
        } else {
            unwritten(e.into())
        }
    })?;
    staged_meta.commit().map_err(|e| unwritten(e.into()))?;
    Ok(Merged { rows, meta: mp })
}
