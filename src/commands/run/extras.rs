//! What `qsweep run` writes besides its CSV and `.meta.json`: `-o -` (the
//! rows on stdout), `-o x.json|.md|.parquet` (converted once the run
//! completes) and `--hist FILE`, each checked before anything runs.

use std::path::PathBuf;

use anyhow::{Context, Result};

use qsweep_core::export::hist::HistSink;
use qsweep_core::export::{Format, Table};
use qsweep_core::output;
use qsweep_core::run::session::Session;
use qsweep_core::run::PointResult;
use qsweep_core::spec::Spec;

use super::RunArgs;

/// What `qsweep run` writes besides its CSV and meta (see
/// [`super::run_command`]).
#[derive(Default)]
pub struct Extras {
    /// `-o -`: rows to stdout as they come; the CSV itself goes to a
    /// temporary folder, removed at the end.
    stdout: Option<StdoutRows>,
    /// `-o x.json|.md|.parquet`: written from the CSV when the run completes.
    export: Option<(PathBuf, Format)>,
    /// An output name with an unknown extension: refused once the session
    /// has made its own checks (an output that is the spec, say, is named
    /// as such).
    bad_out: Option<qsweep_core::UsageError>,
    /// `--hist FILE`, opened at the first point (so bad input leaves no file).
    hist_path: Option<(PathBuf, bool, bool)>,
    hist: Option<HistSink>,
}

/// Checks `--hist FILE` before anything runs (issue 25): `-` is refused
/// (it made a file named `-`), so is a file that is one of the run's inputs
/// (the spec, the meta it comes from, an empirical data file), its output
/// CSV or that CSV's meta (`--hist s.toml --force` overwrote the spec), and
/// a path whose folder does not exist (which failed only after the first
/// point was simulated).
fn check_hist(hist: &std::path::Path, args: &RunArgs) -> Result<()> {
    let bad = |msg: String| -> anyhow::Error { qsweep_core::UsageError(msg).into() };
    if hist == std::path::Path::new("-") {
        return Err(bad(
            "--hist: '-' (stdout) is not supported; expected a file path for the histogram \
             rows"
                .into(),
        ));
    }
    qsweep_core::files::regular_output(hist, "--hist")?;
    let parent = match hist.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad(format!(
            "--hist: '{}' is in a folder that does not exist ('{}'); expected a path in an \
             existing folder",
            hist.display(),
            parent.display()
        )));
    }
    let spec = Spec::load(&args.sweep).ok();
    let mut taken: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(s) = &args.sweep.spec {
        taken.push(("the spec", s.clone()));
    }
    if let Some(m) = &args.from_meta {
        taken.push(("the --from-meta file", m.clone()));
    }
    let out = args
        .sweep
        .out
        .clone()
        .or_else(|| spec.as_ref().and_then(|s| s.run.out.clone()));
    if let Some(out) = out.filter(|o| o != std::path::Path::new("-")) {
        // `-o x.json` writes its rows to x.csv first.
        if let Ok(format) = Format::of_path(&out) {
            let csv = qsweep_core::export::csv_beside(&out, format);
            taken.push((
                "the output's meta file",
                qsweep_core::provenance::meta_path(&csv),
            ));
            taken.push(("the output", csv));
        }
        taken.push(("the output", out));
    }
    if let Some(spec) = &spec {
        for p in spec.points() {
            for d in [&p.arrival, &p.service] {
                if let Some(f) = d.data_file() {
                    taken.push(("an empirical data file", f.to_path_buf()));
                }
            }
        }
    }
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    for (what, path) in &taken {
        if same(hist, path) {
            return Err(bad(format!(
                "--hist: '{}' is {what} of this run; expected a new path for the histogram rows",
                hist.display()
            )));
        }
    }
    Ok(())
}

/// `-o -`: the CSV on stdout.
struct StdoutRows {
    writer: csv::Writer<std::io::Stdout>,
    header_written: bool,
    /// Holds the run's CSV and meta (every run has them).
    tmp: PathBuf,
}

impl Drop for StdoutRows {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

impl Extras {
    /// Reads what the output asks for and rewrites `args` for the run
    /// itself (its CSV: a temporary one for `-o -`, `x.csv` for `x.json`).
    /// Every check runs here, before anything is simulated or written.
    pub(super) fn prepare(args: &RunArgs) -> Result<(RunArgs, Extras)> {
        let mut args = args.clone();
        let mut extras = Extras::default();
        let force = args.sweep.force;
        if let Some(hist) = &args.hist {
            check_hist(hist, &args)?;
            if !args.resume {
                qsweep_core::export::check_new(hist, force)
                    .map_err(|e| qsweep_core::UsageError(e.0.replacen("out:", "--hist:", 1)))?;
            }
            extras.hist_path = Some((hist.clone(), force, args.resume));
        }
        // The output named by -o, else by the spec file's `out`.
        let out = match (&args.sweep.out, &args.from_meta) {
            (Some(out), _) => Some(out.clone()),
            (None, None) => Spec::load(&args.sweep).ok().and_then(|s| s.run.out),
            (None, Some(_)) => None,
        };
        let Some(out) = out else {
            return Ok((args, extras));
        };
        if out == std::path::Path::new("-") {
            if args.resume {
                return Err(qsweep_core::UsageError(
                    "--resume: -o - streams to stdout, which cannot be resumed; expected a \
                     file for --out"
                        .into(),
                )
                .into());
            }
            let tmp = std::env::temp_dir().join(format!(
                "qsweep-stdout-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
            args.sweep.out = Some(tmp.join("results.csv"));
            extras.stdout = Some(StdoutRows {
                writer: csv::Writer::from_writer(std::io::stdout()),
                header_written: false,
                tmp,
            });
            return Ok((args, extras));
        }
        if out.to_string_lossy().ends_with(".meta.json") {
            // Not a JSON export: the session refuses a meta file's name.
            return Ok((args, extras));
        }
        let format = match Format::of_path(&out) {
            Ok(f) => f,
            Err(e) => {
                extras.bad_out = Some(e);
                return Ok((args, extras));
            }
        };
        if format != Format::Csv {
            if !args.resume {
                qsweep_core::export::check_new(&out, force)?;
            }
            args.sweep.out = Some(qsweep_core::export::csv_beside(&out, format));
            extras.export = Some((out, format));
        }
        Ok((args, extras))
    }

    /// Refuses an output name with an unknown extension (see `bad_out`).
    pub(super) fn check_out(&mut self) -> Result<()> {
        match self.bad_out.take() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// A finished point's row (and histogram).
    pub(super) fn point(
        &mut self,
        session: &Session,
        fields: &[String],
        r: &PointResult<'_>,
    ) -> Result<()> {
        if let Some(s) = self.stdout.as_mut() {
            let mut write = || -> csv::Result<()> {
                if !s.header_written {
                    let extra = session.extra_columns();
                    let header = output::COLUMNS.iter().copied();
                    s.writer
                        .write_record(header.chain(extra.iter().map(String::as_str)))?;
                    s.header_written = true;
                }
                s.writer.write_record(fields)?;
                Ok(s.writer.flush()?)
            };
            write().context("writing to stdout")?;
        }
        if let Some((path, force, append)) = self.hist_path.take() {
            // Resumed: the histogram keeps the rows of the points whose rows
            // the CSV kept (written before them), and only those.
            let kept: std::collections::BTreeSet<u32> = session
                .rows
                .iter()
                .filter_map(|row| row.first()?.parse().ok())
                .collect();
            self.hist = Some(HistSink::open(&path, force, append.then_some(&kept))?);
        }
        if let Some(h) = self.hist.as_mut() {
            h.write(r.point.grid.index, &r.hist, r.point.scale, r.stats.max_wait)?;
        }
        Ok(())
    }

    /// The run is complete and `csv` holds every row.
    pub(super) fn finish(&mut self, csv: &std::path::Path) -> Result<()> {
        if let Some(s) = self.stdout.as_mut() {
            if !s.header_written {
                // No row ran: the header alone, as the CSV holds it.
                let table = Table::read_csv(csv)?;
                s.writer
                    .write_record(&table.header)
                    .and_then(|()| Ok(s.writer.flush()?))
                    .context("writing to stdout")?;
                s.header_written = true;
            }
        }
        if let Some((out, format)) = &self.export {
            let table = Table::read_csv(csv)?.ci_beside_estimates();
            qsweep_core::export::write_output(out, &table.encode(*format)?, true)?;
            eprintln!(
                "qsweep: wrote {} ({} rows as {}, CI columns beside their estimates; from {})",
                out.display(),
                table.rows.len(),
                format.extension(),
                csv.display()
            );
        }
        Ok(())
    }

    /// Where the rows went, as the last line says it.
    pub(super) fn shown_out(&self, csv: &std::path::Path) -> String {
        match (&self.stdout, &self.export) {
            (Some(_), _) => "stdout".to_string(),
            (None, Some((out, _))) => format!("{} and {}", csv.display(), out.display()),
            (None, None) => csv.display().to_string(),
        }
    }

    /// The summary table: on stdout, unless the CSV is there.
    pub(super) fn summary(&self, table: &str) -> Result<()> {
        if self.stdout.is_some() {
            eprint!("{table}");
            Ok(())
        } else {
            output::to_stdout(table)
        }
    }
}
