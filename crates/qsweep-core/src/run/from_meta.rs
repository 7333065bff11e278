//! `qsweep run --from-meta`: a run whose spec is the one recorded in a
//! `.meta.json`, with only the flags that do not change the numbers
//! (output, backend, adapter, threads) allowed beside it.

use std::path::Path;

use anyhow::Result;

use super::resume::Shard;
use crate::provenance::{self, Meta};
use crate::spec::{Backend, Spec, SweepArgs};
use crate::usage;

/// Whether `csv` (a meta's `csv` field) is a plain file name whose
/// `.meta.json` is `meta_file`: no folder, no `..`, not itself a meta.
fn is_csv_of(csv: &str, meta_file: &Path) -> bool {
    let name = Path::new(csv);
    let plain = name.components().count() == 1
        && matches!(
            name.components().next(),
            Some(std::path::Component::Normal(_))
        )
        && !csv.ends_with(".meta.json");
    plain && provenance::meta_path(name).file_name() == meta_file.file_name()
}

/// `qsweep run --from-meta`: the recorded spec, with the flags that may
/// change applied; its shard; the directory its `file=` paths resolve in.
pub(super) fn load_from_meta(path: &Path, a: &SweepArgs) -> Result<(Spec, Option<Shard>, String)> {
    let mut given = Vec::new();
    if a.spec.is_some() {
        given.push("SPEC".to_string());
    }
    for (name, set) in [
        ("routing", !a.axes.routing.is_empty()),
        ("servers", !a.axes.servers.is_empty()),
        ("workers", !a.axes.workers.is_empty()),
        ("arrival", !a.axes.arrival.is_empty()),
        ("lambda", !a.axes.lambda.is_empty()),
        ("rho", !a.axes.rho.is_empty()),
        ("service", !a.axes.service.is_empty()),
        ("choices", !a.axes.choices.is_empty()),
        ("routers", !a.axes.routers.is_empty()),
        ("reps", a.reps.is_some()),
        ("customers", a.customers.is_some()),
        ("warmup", a.warmup.is_some()),
        ("precision", a.precision.is_some()),
        ("max-customers", a.max_customers.is_some()),
        ("seed", a.seed.is_some()),
        ("allow-unstable", a.allow_unstable),
        ("units", a.units.is_some()),
        ("quantiles", !a.quantiles.is_empty()),
    ] {
        if set {
            given.push(format!("--{name}"));
        }
    }
    if !given.is_empty() {
        return Err(usage(format!(
            "--from-meta: the spec comes from '{}'; expected no {} (only --out, --backend, \
             --adapter, --threads, --shard, --force, --resume, --quiet)",
            path.display(),
            given.join(", ")
        )));
    }
    let meta = Meta::read(path)?;
    let mut spec = super::resume::recorded_spec(&meta, path)?;
    spec.source = meta.spec_source.clone();
    let beside = path.parent().unwrap_or(Path::new("")).join(&meta.csv);
    if a.out.is_none() && !is_csv_of(&meta.csv, path) {
        // The `csv` field is not covered by the spec hash: an edited one
        // must not choose what this run (with --force) overwrites.
        return Err(usage(format!(
            "--from-meta: '{}' names the CSV '{}', which is not the CSV beside it; expected the \
             meta file of that CSV (or pass --out)",
            path.display(),
            meta.csv
        )));
    }
    spec.run.out = Some(a.out.clone().unwrap_or(beside));
    if let Some(b) = &a.backend {
        let b = b.trim();
        spec.run.backend = b.parse().map_err(|_| {
            usage(format!(
                "--backend: '{b}' is not a valid value; expected {}",
                Backend::EXPECTED
            ))
        })?;
    }
    if let Some(name) = &a.adapter {
        spec.run.adapter = Some(name.clone());
    }
    if let Some(t) = &a.threads {
        spec.run.threads = t.trim().parse().map_err(|_| {
            usage(format!(
                "--threads: '{t}' is not a valid value; expected an integer >= 0 (0 = all cores)"
            ))
        })?;
    }
    spec.run.force = a.force;
    let shard = meta.shard.as_deref().map(Shard::parse).transpose()?;
    Ok((spec, shard, meta.spec_dir))
}
