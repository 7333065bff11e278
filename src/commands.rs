//! The subcommands: glue between the CLI and the library.

use std::path::{Path, PathBuf};

use anyhow::Result;

use qsweep::analytic;
use qsweep::backend;
use qsweep::engine::gpu::list_adapters;
use qsweep::output::{self, num, CsvSink, Row};
use qsweep::plot::{plot_csv, PlotOptions};
use qsweep::spec::{default_out_path, Spec, SweepArgs, SEED_SOURCE};
use qsweep::sweep::{self, PointResult};

/// `qsweep run`: simulate the grid, one CSV row per point.
pub fn run(args: &SweepArgs, quiet: bool) -> Result<()> {
    let spec = Spec::load(args)?;
    let points = spec.points();
    let out = match &spec.run.out {
        Some(p) => p.clone(),
        None => default_out_path(Path::new(".")),
    };
    let chosen = backend::choose(
        &spec.run.backend,
        spec.run.adapter.as_deref(),
        spec.run.threads,
    )?;
    eprintln!("qsweep: backend: {}", chosen.reason);
    let mut engine = chosen.engine;
    let label = engine.label();
    let mut sink = CsvSink::create(&out, spec.run.force)?;
    let total = points.len();
    if !quiet {
        eprintln!(
            "qsweep: {} points × {} replications × {} customers (+{} warm-up) from {} → {}",
            total,
            spec.run.reps,
            spec.run.customers,
            spec.run.warmup,
            spec.source,
            out.display()
        );
    }
    let (prepared, table) = sweep::prepare(&spec, points);
    let mut rows = Vec::new();
    let mut simulated = 0.0;
    let mut sim_seconds = 0.0;
    let started = std::time::Instant::now();
    sweep::run_points(
        &prepared,
        &table,
        spec.run.reps,
        engine.as_mut(),
        &mut |r: PointResult| {
            let baseline = sweep::baseline(&r.point.grid);
            let row = Row {
                point: &r.point.grid,
                reps: spec.run.reps,
                customers: spec.run.customers,
                warmup: spec.run.warmup,
                seed: spec.run.seed,
                stats: &r.stats,
                analytic: &baseline,
                backend: &label,
                seconds: r.seconds,
            };
            let fields = row.fields();
            sink.write(&fields)?;
            simulated += f64::from(spec.run.reps) * f64::from(spec.run.customers + spec.run.warmup);
            sim_seconds += r.seconds;
            if !quiet {
                let theory = baseline
                    .mean_wait
                    .map(|m| format!(" (theory {})", num(m)))
                    .unwrap_or_default();
                eprintln!(
                    "[{}/{}] {} rho={}: mean wait {} ± {}{theory}, p99 {}",
                    sink.rows,
                    total,
                    spec.describe(&r.point.grid),
                    num(r.point.grid.rho),
                    num(r.stats.mean_wait),
                    r.stats
                        .mean_wait_ci95
                        .map(num)
                        .unwrap_or_else(|| "?".into()),
                    num(r.stats.wait_pct[3]),
                );
                if r.stats.failed_reps > 0 {
                    eprintln!(
                        "qsweep: warning: point {}: {} replications hit a sampler bound",
                        r.point.grid.index, r.stats.failed_reps
                    );
                }
            }
            rows.push(fields);
            Ok(())
        },
    )?;
    print!("{}", output::summary_table(&rows));
    output::flush_stdout();
    eprintln!(
        "qsweep: wrote {} rows to {} in {:.1} s ({:.3e} customers/s on {label})",
        sink.rows,
        sink.path().display(),
        started.elapsed().as_secs_f64(),
        simulated / sim_seconds.max(1e-9)
    );
    Ok(())
}

/// `qsweep analytic`: the grid's analytic baselines, no simulation.
pub fn analytic(args: &SweepArgs) -> Result<()> {
    let spec = Spec::load(args)?;
    let points = spec.points();
    let header = [
        "point",
        "routing",
        "servers",
        "workers",
        "lambda",
        "rho",
        "analytic_mean_wait",
        "analytic_p99_wait",
        "analytic_method",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &points {
        let b = sweep::baseline(p);
        rows.push(vec![
            p.index.to_string(),
            p.routing.to_string(),
            p.servers.to_string(),
            p.workers.to_string(),
            num(p.lambda),
            num(p.rho),
            b.mean_wait.map(num).unwrap_or_default(),
            b.p99_wait.map(num).unwrap_or_default(),
            b.method,
        ]);
    }
    if let Some(out) = &spec.run.out {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(spec.run.force)
            .truncate(spec.run.force)
            .create_new(!spec.run.force)
            .open(out)
            .map_err(|e| {
                qsweep::UsageError(format!("out: cannot create '{}': {e}", out.display()))
            })?;
        let mut w = csv::Writer::from_writer(file);
        w.write_record(header)?;
        for r in &rows {
            w.write_record(r)?;
        }
        w.flush()?;
        eprintln!("qsweep: wrote {} rows to {}", rows.len(), out.display());
    }
    print!("{}", align(&header, &rows));
    if spec.source == SEED_SOURCE {
        println!(
            "\nThe published analysis beside exact theory (λ = 150/s, μ = 3/s; mean wait in ms):"
        );
        let h = [
            "R",
            "published random",
            "M/M/1 at λ/R",
            "published central",
            "1/(Rμ−λ)",
            "Erlang C M/M/R",
        ];
        let r: Vec<Vec<String>> = analytic::seed_comparison_rows()
            .iter()
            .map(|r| {
                vec![
                    r.servers.to_string(),
                    num(r.published_dumb_ms),
                    format!("{:.2}", r.mm1_mean_wait_ms),
                    num(r.published_smart_ms),
                    format!("{:.3}", r.one_over_spare_capacity_ms),
                    format!("{:.3e}", r.erlang_c_mean_wait_ms),
                ]
            })
            .collect();
        print!("{}", align(&h, &r));
        println!("The published central-queue row is 1/(Rμ−λ): Erlang C's wait with P(wait) set to 1. The exact M/M/R wait is C(R, λ/μ)/(Rμ−λ).");
    }
    Ok(())
}

fn align(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut all = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    all.extend(rows.iter().cloned());
    let widths: Vec<usize> = (0..header.len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{v:>w$}", w = widths[c]))
            .collect();
        out.push_str(&line.join("  "));
        out.push('\n');
    }
    out
}

/// `qsweep adapters`: every adapter wgpu sees.
pub fn adapters() -> Result<()> {
    let list = list_adapters();
    if list.is_empty() {
        println!("no GPU adapters (qsweep will use its CPU engine)");
        return Ok(());
    }
    let header = ["name", "backend", "type", "driver"];
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.backend.clone(),
                a.device_type.clone(),
                a.driver.clone(),
            ]
        })
        .collect();
    print!("{}", align(&header, &rows));
    Ok(())
}

/// Flags of `qsweep plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Results CSV written by `qsweep run`
    pub csv: PathBuf,
    /// Output figure, .svg or .png (default: the CSV's name with .svg)
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Column on the x axis
    #[arg(long, default_value = "servers")]
    pub x: String,
    /// Columns on the y axis, one panel each (comma-separated)
    #[arg(long, default_value = "mean_wait,p99_wait", value_delimiter = ',')]
    pub y: Vec<String>,
    /// One line per distinct value of this column ("" for one line per panel)
    #[arg(long, default_value = "routing")]
    pub by: String,
    /// One row of panels per distinct value of this column
    #[arg(long)]
    pub facet: Option<String>,
    /// Logarithmic x axis
    #[arg(long)]
    pub log_x: bool,
    /// Logarithmic y axis (the default)
    #[arg(long, conflicts_with = "linear_y")]
    pub log_y: bool,
    /// Linear y axis
    #[arg(long)]
    pub linear_y: bool,
    /// Draw the analytic_* columns as dashed lines
    #[arg(long)]
    pub analytic: bool,
    /// Time unit of the spec, for axis labels (e.g. s, ms)
    #[arg(long)]
    pub time_unit: Option<String>,
    /// Figure title
    #[arg(long)]
    pub title: Option<String>,
    /// Width and height in SVG pixels (0: automatic)
    #[arg(long, default_value_t = 0)]
    pub width: u32,
    #[arg(long, default_value_t = 0)]
    pub height: u32,
}

/// `qsweep plot`: a results CSV as a figure.
pub fn plot(args: &PlotArgs) -> Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.csv.with_extension("svg"));
    let opts = PlotOptions {
        x: args.x.clone(),
        y: args.y.iter().filter(|s| !s.is_empty()).cloned().collect(),
        by: args.by.clone(),
        facet: args.facet.clone(),
        log_x: args.log_x,
        log_y: !args.linear_y,
        analytic: args.analytic,
        width: args.width,
        height: args.height,
        title: args.title.clone(),
        time_unit: args.time_unit.clone(),
    };
    let summary = plot_csv(&args.csv, &out, &opts)?;
    for note in &summary.notes {
        eprintln!("note: {note}");
    }
    eprintln!(
        "qsweep: wrote {} ({} series)",
        out.display(),
        summary.series.len()
    );
    Ok(())
}
