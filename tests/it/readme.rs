//! The statements of `README.md` and of the pages in `docs/` (`docs/*.md`)
//! about the shipped results, checked against `data/seed-results.csv`,
//! `data/weibull-results.csv`, `data/bursts-results.csv` and
//! `data/fleet-results.csv` (issue 16, item 7; issue 43, item 7 moved most
//! of the README into `docs/`).
//!
//! The test reads both the documentation and the CSVs, so it checks claims,
//! not frozen numbers: after the studies are re-run, every statement that
//! the new rows still support passes, and one that they no longer support
//! fails with what the CSV says instead (for the results table, the row as
//! it should read). Numbers the documentation prints are compared at the
//! precision printed (half a unit of the last digit shown). Statements about
//! speed (seconds, customers/s) depend on the machine and are not checked.
//! A statement is looked for in the file that holds it, wherever that is:
//! each file is searched on its own, and no statement may run from one file
//! into the next.

use std::collections::HashMap;
use std::path::Path;

use qsweep_core::stats::student_t_quantile;

type Row = HashMap<String, String>;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rows(file: &str) -> Vec<Row> {
    let mut r = csv::Reader::from_path(root().join(file)).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// Stands between two files in [`readme`]'s text: no statement contains
/// it, so none is found running from one file into the next.
const FILE_BREAK: char = '\u{1E}';

/// The documentation, `README.md` and then every `docs/*.md` in name order,
/// each with every run of whitespace made one space, joined by
/// [`FILE_BREAK`].
fn readme() -> String {
    let mut files = vec![root().join("README.md")];
    let mut pages: Vec<_> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "no docs/*.md");
    files.extend(pages);
    files
        .iter()
        .map(|file| {
            let text =
                std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(!text.contains(FILE_BREAK), "{}", file.display());
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join(&format!(" {FILE_BREAK} "))
}

/// The text between `start` and `end` in `text`, within one file (panics,
/// naming the statement, when neither the README nor docs/ says it).
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let i = text
        .find(start)
        .unwrap_or_else(|| panic!("README.md and docs/ no longer say \"{start}\""));
    let rest = &text[i + start.len()..];
    let j = rest
        .find(end)
        .unwrap_or_else(|| panic!("README.md and docs/: no \"{end}\" after \"{start}\""));
    let found = &rest[..j];
    assert!(
        !found.contains(FILE_BREAK),
        "README.md and docs/: no \"{end}\" after \"{start}\" in the same file"
    );
    found
}

fn number(s: &str) -> f64 {
    s.trim()
        .replace(' ', "")
        .parse()
        .unwrap_or_else(|_| panic!("'{s}' is not a number"))
}

fn f(row: &Row, col: &str) -> f64 {
    row.get(col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .parse()
        .unwrap_or_else(|_| panic!("{col} = '{}' is not a number", row[col]))
}

fn opt(row: &Row, col: &str) -> Option<f64> {
    let v = row.get(col).unwrap_or_else(|| panic!("no column {col}"));
    (!v.is_empty()).then(|| f(row, col))
}

/// Half a unit of the last digit `printed` shows ("16.54" → 0.005,
/// "7.9e-6" → 0.05e-6, "75" → 0.5).
fn half_unit(printed: &str) -> f64 {
    let printed = printed.trim();
    let (mantissa, exp) = match printed.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap()),
        None => (printed, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    0.5 * 10f64.powi(exp - decimals)
}

/// `printed` is `actual` at the precision printed ("0" is exactly 0).
fn agrees(printed: &str, actual: f64) -> bool {
    if printed.trim() == "0" {
        return actual == 0.0;
    }
    (number(printed) - actual).abs() <= half_unit(printed) * (1.0 + 1e-9)
}

/// `printed` is the upper bound `actual` rounded up at the precision
/// printed.
fn bounds(printed: &str, actual: f64) -> bool {
    let x = number(printed);
    x >= actual && x - actual <= 2.0 * half_unit(printed) * (1.0 + 1e-9)
}

/// `x` with `sig` significant digits, as the table prints it (plain
/// decimals from 1e-4 up, else `a.be-n` with two digits).
fn fmt_sig(x: f64, sig: i32) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if mag < -4 {
        format!("{x:.1e}")
    } else {
        format!("{:.*}", (sig - 1 - mag).max(0) as usize, x)
    }
}

/// An upper bound printed with two significant digits, rounded up.
fn fmt_bound(x: f64) -> String {
    let mag = x.log10().floor() as i32;
    let unit = 10f64.powi(mag - 1);
    format!("{:.1e}", (x / unit).ceil() * unit)
}

/// "mean ± ci" as the table prints it: the CI to 2 digits, the mean to the
/// same decimal place.
fn fmt_mean_ci(mean: f64, ci: f64) -> String {
    let mag = ci.log10().floor() as i32;
    if mean.abs() < 1e-4 {
        return format!("{} ± {}", fmt_sig(mean, 2), fmt_sig(ci, 2));
    }
    let decimals = (1 - mag).max(0) as usize;
    format!("{mean:.decimals$} ± {ci:.decimals$}")
}

/// The standard error behind a row's mean-wait CI.
fn se(row: &Row) -> f64 {
    f(row, "mean_wait_ci95") / student_t_quantile(0.975, f(row, "reps") - 1.0)
}

fn exact(row: &Row) -> bool {
    row["analytic_method"].starts_with("exact:")
}

/// The rows that resolve their mean wait against an exact baseline.
fn resolved_exact(rows: &[Row]) -> Vec<&Row> {
    rows.iter()
        .filter(|r| exact(r) && f(r, "waited") > 0.0)
        .collect()
}

/// "within 4 standard errors", checked on the CSV's own `z_mean_wait` and
/// recomputed from the mean, its CI and the replications; the misses of
/// the 95% CIs as many as chance allows (binomial upper tail > 0.1%).
fn check_within_4_se(file: &str, rows: &[Row]) {
    let resolved = resolved_exact(rows);
    assert!(!resolved.is_empty(), "{file}: no row to check");
    let t = |r: &Row| student_t_quantile(0.975, f(r, "reps") - 1.0);
    let mut misses = 0;
    for r in &resolved {
        let z = (f(r, "mean_wait") - f(r, "analytic_mean_wait")) / se(r);
        let col = opt(r, "z_mean_wait").expect("z_mean_wait of a resolved exact row");
        // The CSV prints 7 significant digits: each value read back is off
        // by at most 5e-7 of itself.
        let tol = 5e-7
            * ((f(r, "mean_wait").abs() + f(r, "analytic_mean_wait").abs()) / se(r)
                + 3.0 * z.abs().max(col.abs()));
        assert!(
            (z - col).abs() <= tol,
            "{file} point {}: z_mean_wait {col}, recomputed {z}",
            r["point"]
        );
        assert!(
            z.abs() <= 4.0,
            "{file} point {} ({} servers={}): mean {} ± {} is {z:.2} standard errors from \
             the exact {}: the documentation says every one is within 4",
            r["point"],
            r["routing"],
            r["servers"],
            r["mean_wait"],
            r["mean_wait_ci95"],
            r["analytic_mean_wait"]
        );
        misses += usize::from(z.abs() > t(r));
    }
    // P(X >= misses) for X ~ Binomial(n, 0.05).
    let n = resolved.len();
    let tail: f64 = (misses..=n)
        .map(|k| {
            let ln_choose = qsweep_core::stats::ln_gamma(n as f64 + 1.0)
                - qsweep_core::stats::ln_gamma(k as f64 + 1.0)
                - qsweep_core::stats::ln_gamma((n - k) as f64 + 1.0);
            (ln_choose + k as f64 * 0.05f64.ln() + (n - k) as f64 * 0.95f64.ln()).exp()
        })
        .sum();
    eprintln!("{file}: {misses} of {n} resolved exact rows outside their 95% CI");
    assert!(
        tail > 1e-3,
        "{file}: {misses} of {n} CIs miss the exact value: more than 'one time in twenty' \
         allows (binomial tail {tail:.1e})"
    );
}

#[test]
fn the_default_study_says_what_its_csv_holds() {
    let text = readme();
    let rows = rows("data/seed-results.csv");
    let row = |routing: &str, servers: u32| -> &Row {
        rows.iter()
            .find(|r| r["routing"] == routing && r["servers"] == servers.to_string())
            .unwrap_or_else(|| panic!("no {routing} row with {servers} servers"))
    };

    // "(512 replications × 200 000 customers after 50 000 warm-up, per
    // point; CPU engine, 2 cores, 20 s for the 20 points, ...)"
    let setup = between(&text, "`qsweep run -o data/seed-results.csv` (", ")");
    let reps = number(between(setup, "", " replications"));
    let customers = number(between(setup, "× ", " customers"));
    let warmup = number(between(setup, "after ", " warm-up"));
    let points = number(between(setup, "for the ", " points"));
    assert!(setup.contains("CPU engine"), "{setup}");
    assert_eq!(rows.len() as f64, points, "rows in the CSV");
    for r in &rows {
        assert_eq!(
            (f(r, "reps"), f(r, "customers"), f(r, "warmup")),
            (reps, customers, warmup),
            "point {}",
            r["point"]
        );
        assert_eq!(r["backend"], "cpu", "point {}", r["point"]);
    }

    // The table: every cell at the precision it prints.
    let table = between(
        &text,
        "| R | random: mean wait ± 95% CI | exact M/M/1 | random p99 | central: mean wait ± 95% \
         CI | exact Erlang C | central p99 | |---:|---:|---:|---:|---:|---:|---:| ",
        " Wherever",
    );
    let mut wrong = Vec::new();
    let mut canonical = Vec::new();
    for line in table.split("| |") {
        let cells: Vec<&str> = line.trim_matches(['|', ' ']).split(" | ").collect();
        assert_eq!(cells.len(), 7, "table row '{line}'");
        let servers: u32 = cells[0].parse().unwrap();
        let (rnd, cen) = (row("random", servers), row("central", servers));
        // A "mean ± CI" cell, or "< bound" where nobody waited (the 95%
        // upper bound, rounded up).
        let mean_ci = |cell: &str, r: &Row| -> bool {
            match cell.strip_prefix("< ") {
                Some(bound) => f(r, "waited") == 0.0 && bounds(bound, f(r, "mean_wait_upper95")),
                None => {
                    let (m, ci) = cell.split_once(" ± ").unwrap_or((cell, "0"));
                    agrees(m, f(r, "mean_wait")) && agrees(ci, f(r, "mean_wait_ci95"))
                }
            }
        };
        let ok = mean_ci(cells[1], rnd)
            && agrees(cells[2], f(rnd, "analytic_mean_wait"))
            && agrees(cells[3], f(rnd, "p99_wait"))
            && mean_ci(cells[4], cen)
            && agrees(cells[5], f(cen, "analytic_mean_wait"))
            && agrees(cells[6], f(cen, "p99_wait"));
        let central = if f(cen, "waited") == 0.0 {
            format!("< {}", fmt_bound(f(cen, "mean_wait_upper95")))
        } else {
            fmt_mean_ci(f(cen, "mean_wait"), f(cen, "mean_wait_ci95"))
        };
        let should = format!(
            "| {servers} | {} | {} | {} | {central} | {} | {} |",
            fmt_mean_ci(f(rnd, "mean_wait"), f(rnd, "mean_wait_ci95")),
            fmt_sig(f(rnd, "analytic_mean_wait"), 5),
            fmt_sig(f(rnd, "p99_wait"), 3),
            fmt_sig(f(cen, "analytic_mean_wait"), 4),
            fmt_sig(f(cen, "p99_wait"), 3),
        );
        if !ok {
            wrong.push(format!("  README: {line}\n  CSV:    {should}"));
        }
        canonical.push(should);
    }
    assert!(
        wrong.is_empty(),
        "README's results table disagrees with data/seed-results.csv:\n{}\n\nThe table from \
         the CSV:\n{}",
        wrong.join("\n"),
        canonical.join("\n")
    );

    // "Wherever anyone waited, every simulated mean lies within 4 standard
    // errors of the exact value ... misses ... about one time in twenty".
    assert!(text.contains(
        "Wherever anyone waited, every simulated mean lies within 4 standard errors of the \
         exact value"
    ));
    check_within_4_se("data/seed-results.csv", &rows);

    // "nobody among the 10⁸ customers simulated per point waits from
    // R = 100 on (`waited` is 0)", and what such rows say instead.
    let from: u32 = number(between(
        &text,
        "With a central queue nobody among the 10⁸ customers simulated per point waits from R = ",
        " on",
    )) as u32;
    for r in rows.iter().filter(|r| r["routing"] == "central") {
        let n = f(r, "reps") * f(r, "customers");
        assert_eq!(n.log10().floor(), 8.0, "10⁸ customers per point: {n}");
        let nobody = f(r, "waited") == 0.0;
        assert_eq!(
            nobody,
            f(r, "servers") >= f64::from(from),
            "central, {} servers: waited = {}",
            r["servers"],
            r["waited"]
        );
        if nobody {
            // "leaves rel_err_mean_wait blank", "the rule of three, 3 / 10⁸",
            // "every exact value lies below its bound".
            assert_eq!(r["rel_err_mean_wait"], "", "servers {}", r["servers"]);
            let p = f(r, "p_wait_upper95");
            assert!(
                (p * n / 3.0 - 1.0).abs() < 0.01,
                "p_wait_upper95 {p} vs 3/{n}"
            );
            assert!(
                f(r, "analytic_mean_wait") <= f(r, "mean_wait_upper95"),
                "servers {}: exact {} above the bound {}",
                r["servers"],
                r["analytic_mean_wait"],
                r["mean_wait_upper95"]
            );
        }
    }
    assert!(text.contains("leaves `rel_err_mean_wait` blank"));
    assert!(text.contains("every exact value lies below its bound"));

    // "With random routing the 99th percentile is still 2.6 s at R = 100
    // and 0.57 s at R = 1000."
    let claim = between(
        &text,
        "With random routing the 99th percentile is still ",
        ". The full CSV",
    );
    for part in claim.split(" and ") {
        let (p99, r) = part
            .split_once(" s at R = ")
            .unwrap_or_else(|| panic!("'{part}'"));
        let servers = number(r) as u32;
        let actual = f(row("random", servers), "p99_wait");
        assert!(
            agrees(p99, actual),
            "README: random p99 {p99} s at R = {servers}; the CSV: {actual}"
        );
    }
    assert!(root().join("data/seed-results.svg").exists());
}

#[test]
fn the_weibull_study_says_what_its_csv_holds() {
    let text = readme();
    let rows = rows("data/weibull-results.csv");
    // "(shape 0.46, median 50 ms, clamped to [10 ms, 30 s]) at utilisations
    // 0.5–0.95 for 1, 10 and 51 servers"
    let law = "weibull(shape=0.46,median=0.05,min=0.01,max=30)";
    assert!(text.contains(&format!("`{law}`")));
    assert!(rows.iter().all(|r| r["service"] == law));
    let loads = between(&text, "at utilisations ", " for");
    let (lo, hi) = loads.split_once('–').unwrap();
    let rhos: Vec<f64> = rows.iter().map(|r| f(r, "rho")).collect();
    let (min, max) = (
        rhos.iter().copied().fold(f64::INFINITY, f64::min),
        rhos.iter().copied().fold(0.0, f64::max),
    );
    assert!(agrees(lo, min) && agrees(hi, max), "{loads}: {min}..{max}");
    let fleets = between(&text, &format!("at utilisations {loads} for "), " servers");
    let mut said: Vec<String> = fleets
        .replace(" and ", ", ")
        .split(", ")
        .map(str::to_string)
        .collect();
    let mut have: Vec<String> = rows.iter().map(|r| r["servers"].clone()).collect();
    have.sort_by_key(|s| s.parse::<u32>().unwrap());
    have.dedup();
    said.sort_by_key(|s| s.parse::<u32>().unwrap());
    assert_eq!(said, have, "servers");

    // "Each dyno of random routing, and the one-server queue, is an M/G/1
    // queue with an exact Pollaczek–Khinchine mean, and every simulated
    // mean lies within 4 standard errors of it."
    assert!(text.contains(
        "Each dyno of random routing, and the one-server queue, is an M/G/1 queue with an \
         exact Pollaczek–Khinchine mean, and every simulated mean lies within 4 standard \
         errors of it."
    ));
    for r in &rows {
        let mg1 = r["routing"] == "random" || r["servers"] == "1";
        assert_eq!(
            r["analytic_method"] == "exact:pollaczek_khinchine",
            mg1,
            "point {}: {}",
            r["point"],
            r["analytic_method"]
        );
    }
    check_within_4_se("data/weibull-results.csv", &rows);

    // "The central queues of 10 and 51 servers have only the Allen–Cunneen
    // approximation, and their simulated means are 5–46% below it".
    let range = between(
        &text,
        "The central queues of 10 and 51 servers have only the Allen–Cunneen approximation, \
         and their simulated means are ",
        "% below it",
    );
    let (lo, hi) = range.split_once('–').unwrap();
    let below: Vec<f64> = rows
        .iter()
        .filter(|r| r["routing"] == "central" && r["servers"] != "1")
        .map(|r| {
            assert_eq!(r["analytic_method"], "approx:allen_cunneen");
            -100.0 * f(r, "rel_err_mean_wait")
        })
        .collect();
    assert_eq!(below.len(), 8);
    let (min, max) = (
        below.iter().copied().fold(f64::INFINITY, f64::min),
        below.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    assert!(
        agrees(lo, min) && agrees(hi, max),
        "docs: {range}% below Allen–Cunneen; the CSV: {min:.1}–{max:.1}%"
    );
    assert!(root().join("data/weibull-results.svg").exists());
}

#[test]
fn the_comparison_helpers_round_as_printed() {
    assert!(agrees("16.54", 16.54087) && !agrees("16.54", 16.5451));
    assert!(agrees("7.9e-6", 7.918171e-6) && !agrees("7.9e-6", 7.96e-6));
    assert!(agrees("0", 0.0) && !agrees("0", 1e-300));
    assert!(bounds("6.6e-11", 6.501155e-11) && !bounds("6.5e-11", 6.501155e-11));
    assert!(!bounds("6.7e-11", 6.501155e-11));
    assert_eq!(fmt_bound(1.950347e-10), "2.0e-10");
    assert_eq!(fmt_bound(6.501155e-11), "6.6e-11");
    assert_eq!(fmt_mean_ci(16.54087, 0.3250559), "16.54 ± 0.33");
    assert_eq!(fmt_mean_ci(7.918171e-6, 5.639430e-7), "7.9e-6 ± 5.6e-7");
    assert_eq!(fmt_sig(0.5650398, 3), "0.565");
}

/// The row of `rows` with these column values.
fn row_where<'a>(rows: &'a [Row], pairs: &[(&str, &str)]) -> &'a Row {
    let found: Vec<&Row> = rows
        .iter()
        .filter(|r| pairs.iter().all(|(k, v)| r[*k] == *v))
        .collect();
    assert_eq!(found.len(), 1, "{pairs:?}");
    found[0]
}

#[test]
fn the_bursts_study_says_what_its_csv_holds() {
    let text = readme();
    let rows = rows("data/bursts-results.csv");
    let at = |routing: &str, dispersion: &str| {
        let r = rows
            .iter()
            .find(|r| {
                r["routing"] == routing
                    && r["servers"] == "60"
                    && r["arrival_dispersion"].starts_with(dispersion)
            })
            .unwrap_or_else(|| panic!("{routing} at {dispersion}"));
        f(r, "mean_wait")
    };
    // "from Poisson to index 10 the central queue's mean wait grows from
    // 0.0038 s to 0.076 s and jsq's from 0.013 s to 0.11 s, pod's from 0.38 s
    // to 0.48 s, while random routing's only goes from 1.65 s to 1.80 s"
    for (who, routing, sig) in [
        ("the central queue's mean wait grows", "central", 2),
        ("jsq's", "jsq", 2),
        ("pod's", "pod", 2),
        ("random routing's only goes", "random", 3),
    ] {
        let claim = format!(
            "{who} from {} s to {} s",
            fmt_sig(at(routing, "1"), sig),
            fmt_sig(at(routing, "9.99"), sig)
        );
        assert!(
            text.replace('\n', " ").contains(&claim),
            "README.md and docs/ lack '{claim}'"
        );
    }
    // "under the log's long bursts every router queues, random at 2.5 s, pod
    // at 1.3 s, jsq and central at 1.0 s"
    let log = |routing: &str| fmt_sig(at(routing, "55"), 2);
    let claim = format!(
        "random at {} s, pod at {} s, jsq and central at {} s",
        log("random"),
        log("pod"),
        log("jsq")
    );
    assert_eq!(log("jsq"), log("central"));
    assert!(
        text.replace('\n', " ").contains(&claim),
        "README.md and docs/ lack '{claim}'"
    );
    for r in rows.iter().filter(|r| r["routing"] == "random") {
        let trace = r["arrival"].starts_with("trace");
        assert_eq!(
            r["analytic_method"] == "none",
            trace,
            "point {}",
            r["point"]
        );
    }
    check_within_4_se("data/bursts-results.csv", &rows);
    assert!(root().join("data/bursts-results.svg").exists());
}

#[test]
fn the_fleet_study_says_what_its_csv_holds() {
    let text = readme().replace('\n', " ");
    let rows = rows("data/fleet-results.csv");
    let mean = |routing: &str, speeds: &str| {
        f(
            row_where(&rows, &[("routing", routing), ("speeds", speeds)]),
            "mean_wait",
        )
    };
    let (plain, mixed) = ("75x1", "35x1,20x2");
    // "its mean wait grows from 0.66 s to 2.1 s (the slow class's 3.3 s
    // against the fast class's 0.14 s), while weighting by speed makes the
    // fleet faster, from 0.67 s to 0.49 s"
    let classes: Vec<f64> = row_where(&rows, &[("routing", "random"), ("speeds", mixed)])
        ["class_mean_wait"]
        .split(';')
        .map(|x| x.parse().unwrap())
        .collect();
    let claim = format!(
        "its mean wait grows from {} s to {} s (the slow class's {} s against the fast \
         class's {} s), while weighting by speed makes the fleet faster, from {} s to {} s",
        fmt_sig(mean("random", plain), 2),
        fmt_sig(mean("random", mixed), 2),
        fmt_sig(classes[0], 2),
        fmt_sig(classes[1], 2),
        fmt_sig(mean("weighted", plain), 2),
        fmt_sig(mean("weighted", mixed), 2),
    );
    assert!(text.contains(&claim), "README.md and docs/ lack '{claim}'");
    // "pod stays near 0.19 s, and jsq and the central queue stay below a
    // millisecond"
    for r in &rows {
        let w = f(r, "mean_wait");
        match r["routing"].as_str() {
            "pod" => assert!((w - 0.19).abs() < 0.015, "pod {w}"),
            "jsq" | "central" => assert!(w < 1e-3, "{}: {w}", r["routing"]),
            _ => {}
        }
    }
    // "Every random and weighted row, and each of their speed classes, lies
    // within 4 standard errors of its exact Pollaczek–Khinchine value."
    check_within_4_se("data/fleet-results.csv", &rows);
    for r in rows
        .iter()
        .filter(|r| r["analytic_method"] == "exact:mg1_by_class")
    {
        let t = student_t_quantile(0.975, f(r, "reps") - 1.0);
        let parse =
            |col: &str| -> Vec<f64> { r[col].split(';').map(|x| x.parse().unwrap()).collect() };
        let (sim, ci, exact) = (
            parse("class_mean_wait"),
            parse("class_mean_wait_ci95"),
            parse("analytic_class_mean_wait"),
        );
        for c in 0..sim.len() {
            let z = (sim[c] - exact[c]) / (ci[c] / t);
            assert!(
                z.abs() <= 4.0,
                "point {} class {c}: {} ± {} vs exact {} ({z:.2} se)",
                r["point"],
                sim[c],
                ci[c],
                exact[c]
            );
        }
    }
    assert!(root().join("data/fleet-results.svg").exists());
}
