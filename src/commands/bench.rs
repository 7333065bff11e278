//! `qsweep bench`: customers/s of every policy on every backend, side by side.

use std::path::PathBuf;

use anyhow::{Context, Result};

use qsweep_core::output::{self, num};

/// Flags of `qsweep bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Backends to measure: auto (the CPU and every usable GPU adapter), gpu or cpu
    #[arg(long, default_value = "auto", value_parser = qsweep_core::spec::Words::new(|| vec!["auto", "gpu", "cpu"]), hide_possible_values = true)]
    pub backend: String,
    /// Only the GPU adapter whose name contains this text
    #[arg(long)]
    pub adapter: Option<String>,
    /// Seconds each timed measurement should last, at least
    #[arg(long, default_value_t = 2.0, value_hint = clap::ValueHint::Other)]
    pub seconds: f64,
    /// Also write the table as CSV here (refused if it exists, unless --force)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Overwrite --out
    #[arg(long)]
    pub force: bool,
    /// Worker threads of the CPU engine (0 = all cores)
    #[arg(long, short = 'j', default_value_t = 0, value_hint = clap::ValueHint::Other)]
    pub threads: usize,
    /// Only cases whose name contains this text (e.g. "central")
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub only: Option<String>,
}

/// `qsweep bench`: customers/s per policy and backend, in one run.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let opts = qsweep_backend::bench::BenchOptions {
        backend: args
            .backend
            .parse()
            .map_err(|e| qsweep_core::UsageError(format!("--backend: {e}")))?,
        adapter: args.adapter.clone(),
        seconds: args.seconds,
        threads: args.threads,
        only: args.only.clone(),
    };
    opts.check()?;
    // Refuse an existing --out before measuring anything.
    let mut sink = match &args.out {
        Some(path) => {
            let file = output::create_file(path, args.force, " (pass --force to overwrite)")?;
            let mut w = csv::Writer::from_writer(file);
            w.write_record(qsweep_backend::bench::BENCH_COLUMNS)
                .with_context(|| format!("writing {}", path.display()))?;
            Some(w)
        }
        None => None,
    };
    let report = qsweep_backend::bench::run(&opts, &mut |row| {
        eprintln!(
            "qsweep: bench: {} done ({})",
            row.case,
            num(row.customers_per_s)
        );
    })?;
    output::to_stdout(report.table())?;
    if let Some(w) = sink.as_mut() {
        let path = args.out.as_ref().expect("out");
        let named = || format!("writing {}", path.display());
        for r in &report.rows {
            w.write_record(r.fields()).with_context(named)?;
        }
        w.flush().with_context(named)?;
        eprintln!(
            "qsweep: wrote {}",
            args.out.as_ref().expect("out").display()
        );
    }
    Ok(())
}
