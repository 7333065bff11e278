//! What lets a long sweep survive: which points a run owns (`--shard K/N`),
//! what an existing results CSV already holds (`--resume`, `qsweep merge`),
//! and carrying on when an engine fails mid-run ([`run_surviving`]).
//!
//! Rows are flushed whole and in increasing point order, so a run killed at
//! any moment leaves a CSV whose rows are all complete except perhaps the
//! last, which [`scan_csv`] reports as torn and [`truncate`] cuts off.

use std::collections::{BTreeSet, HashSet};
use std::fs::OpenOptions;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};

use super::point::{PointResult, PreparedPoint};
use super::rounds::{self, Interrupted};
use crate::engine::Engine;
use crate::export::Kind;
use crate::output::COLUMNS;
use crate::UsageError;

/// `--shard K/N`: the points whose index is ≡ K (mod N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` with `0 <= K < N`.
    pub fn parse(s: &str) -> Result<Shard, UsageError> {
        let bad = || {
            UsageError(format!(
                "--shard: '{s}' is not a valid shard; expected K/N with N >= 1 and 0 <= K < N \
                 (e.g. --shard 0/16 ... --shard 15/16)"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if n == 0 || k >= n {
            return Err(bad());
        }
        Ok(Shard { index: k, count: n })
    }

    pub fn contains(&self, point: u32) -> bool {
        point % self.count == self.index
    }

    /// Points of a grid of `total` that fall in this shard.
    pub fn size(&self, total: u64) -> u64 {
        let (k, n) = (u64::from(self.index), u64::from(self.count));
        if total > k {
            (total - k).div_ceil(n)
        } else {
            0
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What [`scan_csv`] found.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Whole rows, in file order.
    pub rows: Vec<Vec<String>>,
    /// Their point indices.
    pub points: BTreeSet<u32>,
    /// Bytes of the file that are a whole header and whole rows.
    pub good_len: u64,
    /// The header is missing or cut short (a run killed as it started).
    pub no_header: bool,
    /// A last line cut short (no newline, or the wrong number of fields):
    /// its 1-based line number and length in bytes.
    pub torn: Option<(usize, u64)>,
    /// Rows of failed points (an `error` column that is set), among
    /// `rows`: (point, the row's byte range in the file).
    pub failed: Vec<(u32, std::ops::Range<u64>)>,
    /// Columns after the standard ones (`--quantiles`), as the header names
    /// them.
    pub extra: Vec<String>,
}

/// The axis columns a row of point `i` must hold: (column index, value).
pub type AxisFields<'a> = &'a dyn Fn(u32) -> Vec<(usize, String)>;

/// What a CSV's rows must agree with.
pub struct Expect<'a> {
    /// Points in the whole grid.
    pub total: u64,
    pub shard: Option<Shard>,
    pub seed: u64,
    /// The spec's axis values per point (`output::axis_fields`), so a row
    /// kept from another spec is refused even if a meta file claims it.
    pub axes: Option<AxisFields<'a>>,
    /// The spec's customers per replication, and its replications (`None`
    /// under `--precision`, where each point has its own): a kept row that
    /// says otherwise was edited or written by another run (issue 25).
    pub customers: Option<u32>,
    pub reps: Option<u32>,
    /// Check that every result column holds a value of its type
    /// ([`Kind::known`]) or nothing.
    pub numbers: bool,
}

/// Reads a results CSV written by `qsweep run`: checks the header, that
/// every row is whole with a valid, unique point of the expected shard and
/// the expected seed, and reports a torn last line instead of failing on it.
/// Errors are [`UsageError`]s naming the file and line.
pub fn scan_csv(path: &Path, expect: &Expect<'_>) -> Result<Scanned> {
    // A FIFO would block the read forever (issue 25).
    crate::files::regular_input(path, "csv")?;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let shown = path.display();
    let standard = COLUMNS.join(",");
    let mut out = Scanned::default();
    if bytes.len() <= standard.len() && standard.as_bytes().starts_with(&bytes) {
        out.no_header = true;
        return Ok(out);
    }
    let not_header = || -> anyhow::Error {
        UsageError(format!(
            "'{shown}': line 1 is not the header qsweep writes; expected a results CSV from \
             qsweep run (same version)"
        ))
        .into()
    };
    let first_line = match bytes.iter().position(|&b| b == b'\n') {
        Some(nl) => &bytes[..nl],
        None => {
            // A header cut short in its `--quantiles` columns.
            if bytes.starts_with(standard.as_bytes()) && bytes[standard.len()] == b',' {
                out.no_header = true;
                return Ok(out);
            }
            return Err(not_header());
        }
    };
    // The standard columns, then any `--quantiles` and `--slo` columns.
    let extra: Vec<String> = std::str::from_utf8(first_line)
        .ok()
        .and_then(|l| l.strip_prefix(standard.as_str()))
        .and_then(|rest| match rest {
            "" => Some(Vec::new()),
            _ => rest
                .strip_prefix(',')
                .map(|r| r.split(',').map(str::to_string).collect()),
        })
        .filter(|e: &Vec<String>| e.iter().all(|c| crate::output::is_extra_column(c)))
        .ok_or_else(not_header)?;
    let header = format!("{}\n", String::from_utf8_lossy(first_line));
    let width = COLUMNS.len() + extra.len();
    out.extra = extra;
    let body = &bytes[header.len()..];
    out.good_len = header.len() as u64;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body);
    let mut rec = csv::ByteRecord::new();
    let point_col = col("point");
    let seed_col = col("seed");
    let error_col = col("error");
    let mut line_of: std::collections::HashMap<u32, usize> = Default::default();
    loop {
        let start = rdr.position().byte() as usize;
        let line = rdr.position().line() as usize + 1;
        let res = rdr.read_byte_record(&mut rec);
        let end = rdr.position().byte() as usize;
        let at_end = end >= body.len();
        match res {
            Ok(false) => break,
            Ok(true) => {}
            Err(_) if at_end => {
                out.torn = Some((line, (body.len() - start) as u64));
                break;
            }
            Err(e) => {
                return Err(UsageError(format!("'{shown}': line {line}: {e}")).into());
            }
        }
        // The reader skips blank lines: find where this record starts.
        let start = start + body[start..end].iter().take_while(|&&b| b == b'\n').count();
        let whole = end > 0 && body[end - 1] == b'\n';
        if !whole || rec.len() != width {
            if at_end {
                out.torn = Some((line, (end - start) as u64));
                break;
            }
            return Err(UsageError(format!(
                "'{shown}': line {line} has {} fields; expected {width} (the file is damaged; \
                 only its last line may be cut short)",
                rec.len(),
            ))
            .into());
        }
        let field = |i: usize| String::from_utf8_lossy(&rec[i]).into_owned();
        let bad = |what: String| -> anyhow::Error {
            UsageError(format!("'{shown}': line {line}: {what}")).into()
        };
        let point: u32 = field(point_col)
            .parse()
            .map_err(|_| bad(format!("point '{}' is not a point index", field(point_col))))?;
        if u64::from(point) >= expect.total {
            return Err(bad(format!(
                "point {point} is outside the grid; expected 0..{} (a different spec?)",
                expect.total
            )));
        }
        if let Some(s) = expect.shard {
            if !s.contains(point) {
                return Err(bad(format!(
                    "point {point} is not in shard {s}; expected points ≡ {} (mod {})",
                    s.index, s.count
                )));
            }
        }
        if field(seed_col) != expect.seed.to_string() {
            return Err(bad(format!(
                "seed {} differs from this run's seed {}",
                field(seed_col),
                expect.seed
            )));
        }
        if let Some(axes) = expect.axes {
            for (c, want) in axes(point) {
                let got = field(c);
                if got != want {
                    return Err(bad(format!(
                        "{} '{got}' differs from the spec's '{want}' for point {point}; expected \
                         rows of this spec (a different spec wrote this file?)",
                        COLUMNS[c]
                    )));
                }
            }
        }
        let failed_row = !rec[error_col].is_empty();
        for (name, want) in [("customers", expect.customers), ("reps", expect.reps)] {
            let want = match want {
                // A failed point's row is run again whatever it says.
                Some(w) if !(failed_row && name == "reps") => w.to_string(),
                _ => continue,
            };
            let got = field(col(name));
            if got != want {
                return Err(bad(format!(
                    "{name} '{got}' differs from the spec's {want} for point {point}; expected \
                     rows of this spec (an edited file?)"
                )));
            }
        }
        for c in 0..rec.len() {
            let name = match COLUMNS.get(c) {
                Some(n) => *n,
                None => out.extra[c - COLUMNS.len()].as_str(),
            };
            // The axes were compared with the spec above; every other column
            // is typed by name as `export` types it (the patience law, a
            // capacity or a fleet is text, `none` where a point has none).
            let axis = matches!(
                crate::output::TABLE.get(c).map(|t| &t.value),
                Some(crate::output::Value::Axis(_))
            );
            let kind = Kind::known(name).unwrap_or(Kind::Text);
            let v = field(c);
            if expect.numbers && !axis && !v.is_empty() && !kind.accepts(&v) {
                return Err(bad(format!(
                    "{name} '{v}' is not {} (point {point}); expected the values qsweep \
                     wrote (an edited file?)",
                    kind.described()
                )));
            }
        }
        if let Some(first) = line_of.insert(point, line) {
            return Err(bad(format!(
                "point {point} appears twice (lines {first} and {line})"
            )));
        }
        out.points.insert(point);
        if failed_row {
            let at = header.len() as u64;
            out.failed.push((point, at + start as u64..at + end as u64));
        }
        out.rows.push((0..rec.len()).map(field).collect());
        out.good_len = (header.len() + end) as u64;
    }
    Ok(out)
}

fn col(name: &str) -> usize {
    crate::output::column_index(name).expect("known column")
}

/// Cuts `path` to `len` bytes (dropping a torn last line) and syncs it.
pub fn truncate(path: &Path, len: u64) -> Result<()> {
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open '{}'", path.display()))?;
    f.set_len(len)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot truncate '{}'", path.display()))?;
    Ok(())
}

/// `--resume` over a CSV with failed points: rewrites it without their rows,
/// so that those points run again (and `scanned` no longer holds them).
/// The new file is written in full beside the old one, locked, synced and
/// renamed over it, so a crash leaves one or the other whole; the returned
/// handle holds its lock (the old file's lock dies with the old file).
pub fn drop_failed_rows(path: &Path, scanned: &mut Scanned) -> Result<std::fs::File> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let mut kept = Vec::with_capacity(bytes.len());
    let mut at = 0usize;
    for (_, range) in &scanned.failed {
        kept.extend_from_slice(&bytes[at..range.start as usize]);
        at = range.end as usize;
    }
    kept.extend_from_slice(&bytes[at..(scanned.good_len as usize).max(at)]);
    let mut name = path.as_os_str().to_owned();
    name.push(".resume.tmp");
    let tmp = std::path::PathBuf::from(name);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&tmp)
        .with_context(|| format!("cannot create '{}'", tmp.display()))?;
    if let Err(std::fs::TryLockError::WouldBlock) = file.try_lock() {
        return Err(UsageError(format!(
            "out: '{}' is being written by another qsweep run; expected a different --out for \
             each run at the same time",
            path.display()
        ))
        .into());
    }
    use std::io::Write;
    file.set_len(0)
        .and_then(|_| file.write_all(&kept))
        .and_then(|_| file.sync_all())
        .with_context(|| format!("cannot write '{}'", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    let failed: BTreeSet<u32> = scanned.failed.drain(..).map(|(p, _)| p).collect();
    let point = col("point");
    scanned
        .rows
        .retain(|r| r[point].parse().is_ok_and(|p| !failed.contains(&p)));
    scanned.points.retain(|p| !failed.contains(p));
    scanned.good_len = kept.len() as u64;
    scanned.torn = None;
    Ok(file)
}

/// Makes the engine that takes over after a failure, given the error and the
/// number of points still to run (and says so to the user).
/// Makes the engine that takes over from a failed one: gets the failure, the
/// number of points left and the failed engine (whose `device_report` the
/// caller may keep for the `.meta.json`).
pub type Fallback<'a> =
    &'a mut dyn FnMut(&anyhow::Error, usize, &dyn Engine) -> Result<Box<dyn Engine>>;

/// [`rounds::run_points_until`] that survives one engine failure: when the
/// engine fails and `fallback` is given, the points not yet reported run on
/// the engine it makes. `on_point` gets each finished point and the label of
/// the engine that simulated it. Errors from `on_point` and [`Interrupted`]
/// end the run at once.
pub fn run_surviving(
    mut points: Vec<PreparedPoint>,
    table: &[f32],
    reps: u32,
    engine: &mut Box<dyn Engine>,
    mut fallback: Option<Fallback<'_>>,
    on_point: &mut dyn FnMut(PointResult<'_>, &str) -> Result<()>,
    stop: &AtomicBool,
) -> Result<()> {
    loop {
        let label = engine.label();
        let mut done = HashSet::new();
        let mut callback_failed = false;
        // While another engine can take over, a failure is the engine's;
        // after that, it is the failing point's alone.
        let isolate = fallback.is_none();
        let result = rounds::run_points_until(
            &points,
            table,
            reps,
            engine.as_mut(),
            &mut |r: PointResult<'_>| {
                let index = r.point.grid.index;
                on_point(r, &label).inspect_err(|_| callback_failed = true)?;
                done.insert(index);
                Ok(())
            },
            stop,
            isolate,
        );
        let err = match result {
            Ok(()) => return Ok(()),
            Err(e) if callback_failed || e.is::<Interrupted>() => return Err(e),
            Err(e) => e,
        };
        let Some(make) = fallback.take() else {
            return Err(err);
        };
        points.retain(|p| !done.contains(&p.grid.index));
        *engine = make(&err, points.len(), engine.as_ref())?;
    }
}

/// The spec a `.meta.json` records, rebuilt, checked against its hash.
pub fn recorded_spec(meta: &crate::provenance::Meta, path: &Path) -> Result<crate::spec::Spec> {
    let spec = crate::spec::Spec::from_toml_str(
        &meta.spec_toml,
        &format!("{} spec_toml", path.display()),
        Path::new(&meta.spec_dir),
    )?;
    let (_, table) = super::prepare(&spec, spec.points());
    let hash = crate::provenance::spec_hash(&spec, &table);
    if hash != meta.spec_hash {
        return Err(UsageError(format!(
            "'{}': its spec_toml hashes to {hash}, not to the spec_hash {} it records (edited, \
             or its empirical data files changed); expected the meta file as qsweep wrote it",
            path.display(),
            meta.spec_hash
        ))
        .into());
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cpu::CpuEngine;
    use crate::engine::{Batch, BatchOutput};
    use crate::spec::{Spec, SweepArgs};

    #[test]
    fn shards_parse_and_partition() {
        let s = Shard::parse("2/5").unwrap();
        assert_eq!((s.index, s.count), (2, 5));
        assert_eq!(s.to_string(), "2/5");
        assert!(s.contains(7) && !s.contains(8));
        for bad in ["5/5", "1/0", "x", "1/", "/3", "-1/3", "1/3/4", ""] {
            let e = Shard::parse(bad).unwrap_err().0;
            assert!(e.starts_with("--shard: "), "{e}");
        }
        for total in 0..30u64 {
            for n in 1..7 {
                let sizes: u64 = (0..n)
                    .map(|k| Shard { index: k, count: n }.size(total))
                    .sum();
                assert_eq!(sizes, total);
                let k = n - 1;
                let s = Shard { index: k, count: n };
                let count = (0..total as u32).filter(|&p| s.contains(p)).count() as u64;
                assert_eq!(s.size(total), count);
            }
        }
    }

    fn row(point: u32, seed: u64) -> String {
        fields(point, seed).join(",")
    }

    fn fields(point: u32, seed: u64) -> Vec<String> {
        let mut f: Vec<String> = (0..COLUMNS.len()).map(|i| format!("v{i}")).collect();
        f[col("point")] = point.to_string();
        f[col("seed")] = seed.to_string();
        f[col("service")] = "\"weibull(shape=0.5,median=1)\"".to_string();
        f[col("error")] = String::new();
        f
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const ANY: Expect = Expect {
        total: 10,
        shard: None,
        seed: 1,
        axes: None,
        customers: None,
        reps: None,
        numbers: false,
    };

    #[test]
    fn scan_reads_whole_rows_and_reports_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let header = format!("{}\n", COLUMNS.join(","));
        let whole = format!("{header}{}\n{}\n", row(0, 1), row(1, 1));
        let p = write(dir.path(), "a.csv", &whole);
        let s = scan_csv(&p, &ANY).unwrap();
        assert_eq!(s.points.iter().copied().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(s.good_len, whole.len() as u64);
        assert_eq!(s.rows[1][col("service")], "weibull(shape=0.5,median=1)");
        assert!(s.torn.is_none() && !s.no_header);
        // Cut anywhere inside the last row: torn, and the good part stays.
        let r2 = row(2, 1);
        for cut in [1, 5, r2.len() - 1, r2.len()] {
            let text = format!("{whole}{}", &r2[..cut]);
            let p = write(dir.path(), "b.csv", &text);
            let s = scan_csv(&p, &ANY).unwrap();
            assert_eq!(s.points.len(), 2, "cut {cut}");
            assert_eq!(s.good_len, whole.len() as u64);
            assert_eq!(s.torn, Some((4, cut as u64)), "cut {cut}");
            truncate(&p, s.good_len).unwrap();
            assert_eq!(std::fs::read_to_string(&p).unwrap(), whole);
        }
        // Inside a quoted field.
        let q = r2.find('"').unwrap() + 3;
        let p = write(dir.path(), "c.csv", &format!("{whole}{}", &r2[..q]));
        assert_eq!(scan_csv(&p, &ANY).unwrap().good_len, whole.len() as u64);
        // A whole row with too few fields at the end: torn as well.
        let p = write(dir.path(), "d.csv", &format!("{whole}1,2,3\n"));
        assert_eq!(scan_csv(&p, &ANY).unwrap().torn, Some((4, 6)));
        // Header cut short or absent.
        for cut in [0, 1, header.len() - 1] {
            let p = write(dir.path(), "e.csv", &header[..cut]);
            let s = scan_csv(&p, &ANY).unwrap();
            assert!(s.no_header && s.rows.is_empty() && s.good_len == 0);
        }
    }

    #[test]
    fn failed_rows_are_found_and_dropped_for_resume() {
        let dir = tempfile::tempdir().unwrap();
        let header = format!("{}\n", COLUMNS.join(","));
        let failed = |point: u32| {
            let mut f = fields(point, 1);
            // A field with a comma and quotes, as errors may hold.
            f[col("error")] = "\"grid point 1: \"\"x\"\", y\"".to_string();
            f.join(",")
        };
        let (r0, r1, r2, r3) = (row(0, 1), failed(1), row(2, 1), failed(3));
        let text = format!("{header}{r0}\n{r1}\n{r2}\n{r3}\n{}", &row(4, 1)[..9]);
        let p = write(dir.path(), "f.csv", &text);
        let mut s = scan_csv(&p, &ANY).unwrap();
        let points: Vec<u32> = s.failed.iter().map(|f| f.0).collect();
        assert_eq!(points, [1, 3]);
        assert_eq!(s.rows[1][col("error")], "grid point 1: \"x\", y");
        let r1_at = (header.len() + r0.len() + 1) as u64;
        assert_eq!(s.failed[0].1, r1_at..r1_at + r1.len() as u64 + 1);
        assert_eq!(s.points.len(), 4);
        let lock = drop_failed_rows(&p, &mut s).unwrap();
        let kept = format!("{header}{r0}\n{r2}\n");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), kept);
        assert_eq!(s.points.iter().copied().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(
            (s.good_len, s.torn, s.failed.len()),
            (kept.len() as u64, None, 0)
        );
        assert!(!dir.path().join("f.csv.resume.tmp").exists());
        // The rewritten file is the one locked for the run.
        let other = std::fs::File::open(&p).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(lock);
        assert!(other.try_lock().is_ok());
    }

    #[test]
    fn scan_refuses_damaged_or_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let header = format!("{}\n", COLUMNS.join(","));
        let err = |text: &str, expect: &Expect| {
            let p = write(dir.path(), "x.csv", text);
            let e = scan_csv(&p, expect).unwrap_err();
            assert!(e.is::<UsageError>());
            e.to_string()
        };
        assert!(err("a,b\n1,2\n", &ANY).contains("line 1 is not the header"));
        let mid = format!("{header}1,2\n{}\n", row(1, 1));
        assert!(err(&mid, &ANY).contains("line 2 has 2 fields"));
        let dup = format!("{header}{}\n{}\n", row(1, 1), row(1, 1));
        assert!(err(&dup, &ANY).contains("point 1 appears twice (lines 2 and 3)"));
        let seed = format!("{header}{}\n", row(1, 2));
        assert!(err(&seed, &ANY).contains("seed 2 differs"));
        let outside = format!("{header}{}\n", row(10, 1));
        assert!(err(&outside, &ANY).contains("outside the grid"));
        let shard = Expect {
            shard: Some(Shard { index: 1, count: 2 }),
            ..ANY
        };
        let p = write(dir.path(), "ok.csv", &format!("{header}{}\n", row(3, 1)));
        assert!(scan_csv(&p, &shard).is_ok());
        let other = format!("{header}{}\n", row(2, 1));
        assert!(err(&other, &shard).contains("not in shard 1/2"));
        // A row whose axis values are not the spec's.
        let service = col("service");
        let weibull = |_: u32| vec![(service, "weibull(shape=0.5,median=1)".to_string())];
        let exp = |_: u32| vec![(service, "exp(mean=1)".to_string())];
        let p = write(dir.path(), "ax.csv", &format!("{header}{}\n", row(3, 1)));
        let with = |axes: AxisFields<'_>| {
            scan_csv(
                &p,
                &Expect {
                    axes: Some(axes),
                    ..ANY
                },
            )
        };
        assert!(with(&weibull).is_ok());
        let e = with(&exp).unwrap_err().to_string();
        assert!(
            e.contains("line 2: service 'weibull(shape=0.5,median=1)' differs from the spec's 'exp(mean=1)' for point 3"),
            "{e}"
        );
    }

    /// Fails every call after the first `ok` ones.
    struct Flaky {
        inner: CpuEngine,
        ok: usize,
    }

    impl Engine for Flaky {
        fn label(&self) -> String {
            "flaky".into()
        }
        fn run(&mut self, batch: &Batch) -> Result<BatchOutput> {
            if self.ok == 0 {
                anyhow::bail!("device lost");
            }
            self.ok -= 1;
            self.inner.run(batch)
        }
    }

    fn tiny() -> Spec {
        let args = SweepArgs {
            axes: crate::spec::AxisArgs {
                servers: vec!["1,2,3".into()],
                routing: vec!["random".into()],
                lambda: vec!["0.5".into()],
                service: vec!["exp(mean=0.2)".into()],
                ..crate::spec::AxisArgs::default()
            },
            // Over half a call's replications a point: the first call ends
            // inside point 1, the failing second one holds points 1 and 2.
            reps: Some((crate::run::CHUNK_REPS / 2 + 1).to_string()),
            customers: Some("3".into()),
            warmup: Some("0".into()),
            ..SweepArgs::default()
        };
        Spec::load(&args).unwrap()
    }

    /// (point, engine, mean wait, error) of each reported point.
    type Got = Vec<(u32, String, f64, Option<String>)>;

    fn collect(engine: Box<dyn Engine>, fallback: bool) -> (Result<()>, Got) {
        let spec = tiny();
        let (prepared, table) = crate::run::prepare(&spec, spec.points());
        let mut engine = engine;
        let mut got = Vec::new();
        let mut calls = 0;
        let mut make =
            |e: &anyhow::Error, left: usize, failed: &dyn Engine| -> Result<Box<dyn Engine>> {
                calls += 1;
                assert!(
                    format!("{e:#}").contains("flaky failed on grid points 1..=2"),
                    "{e:#}"
                );
                assert_eq!(left, 2);
                // The failed engine, whose device report the caller keeps.
                assert_eq!(failed.label(), "flaky");
                Ok(Box::new(CpuEngine::new(1)))
            };
        let r = run_surviving(
            prepared,
            &table,
            spec.run.reps,
            &mut engine,
            if fallback { Some(&mut make) } else { None },
            &mut |p, label| {
                got.push((
                    p.point.grid.index,
                    label.to_string(),
                    p.stats.mean_wait,
                    p.error.clone(),
                ));
                Ok(())
            },
            &AtomicBool::new(false),
        );
        assert!(calls <= 1);
        (r, got)
    }

    #[test]
    fn engine_failure_falls_back_for_the_remaining_points() {
        let flaky = || {
            Box::new(Flaky {
                inner: CpuEngine::new(1),
                ok: 1,
            })
        };
        let (r, reference) = collect(Box::new(CpuEngine::new(1)), false);
        r.unwrap();
        let (r, got) = collect(flaky(), true);
        r.unwrap();
        let labels: Vec<&str> = got.iter().map(|g| g.1.as_str()).collect();
        assert_eq!(labels, ["flaky", "cpu", "cpu"]);
        // The same numbers as a run on one engine.
        let strip = |v: &Got| v.iter().map(|g| (g.0, g.2)).collect::<Vec<_>>();
        assert_eq!(strip(&got), strip(&reference));
        assert!(got.iter().all(|g| g.3.is_none()));
        // Without a fallback a failure is the point's: each point the
        // engine fails on is reported with the error, and the run goes on.
        let (r, got) = collect(flaky(), false);
        r.unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].0, &got[0].3), (0, &None));
        assert_eq!(got[0].2, reference[0].2);
        for g in &got[1..] {
            let e = g.3.as_deref().expect("an error");
            assert!(
                e.contains("flaky failed on grid points") && e.contains("device lost"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_set_stop_flag_interrupts_between_chunks() {
        let spec = tiny();
        let (prepared, table) = crate::run::prepare(&spec, spec.points());
        let stop = AtomicBool::new(false);
        let mut engine: Box<dyn Engine> = Box::new(CpuEngine::new(1));
        let mut n = 0;
        let r = run_surviving(
            prepared,
            &table,
            spec.run.reps,
            &mut engine,
            None,
            &mut |_, _| {
                n += 1;
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            },
            &stop,
        );
        assert!(r.unwrap_err().is::<Interrupted>());
        assert_eq!(n, 1);
    }
}
