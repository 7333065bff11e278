//! The answers of `qsweep size`: one CSV row per case and target
//! (`-o`), and the aligned table it prints.

use qsweep_core::export::Table;
use qsweep_core::output::num;
use qsweep_core::spec::Spec;

/// Columns of `qsweep size -o`.
pub(super) const COLUMNS: [&str; 20] = [
    "routing",
    "choices",
    "routers",
    "servers",
    "workers",
    "arrival",
    "lambda",
    "service",
    "target",
    "over",
    "answer",
    "method",
    "metric_at_answer",
    "metric_at_answer_ci95",
    "neighbour",
    "method_at_neighbour",
    "metric_at_neighbour",
    "metric_at_neighbour_ci95",
    "resolved",
    "evaluations",
];

/// One row of `qsweep size`'s table.
pub(super) fn row(
    case: &qsweep_core::size::Case,
    target: &qsweep_core::size::Target,
    found: &qsweep_core::size::Sizing,
    over: qsweep_core::size::Over,
) -> Vec<String> {
    use qsweep_core::size::{Eval, Over};
    let s = &case.spec;
    let opt = |x: Option<f64>| x.map(num).unwrap_or_default();
    let value = |e: Option<&Eval>| {
        e.filter(|e| e.value.is_finite())
            .map(|e| num(e.value))
            .unwrap_or_default()
    };
    let answer = found.answer.as_ref();
    let nb = found.neighbour.as_ref();
    vec![
        s.routing[0].to_string(),
        if s.routing[0].takes_choices() {
            s.choices[0].to_string()
        } else {
            String::new()
        },
        s.routers[0].to_string(),
        match over {
            Over::Workers => s.servers[0].to_string(),
            Over::Servers => answer.map(|e| e.n.to_string()).unwrap_or_default(),
        },
        match over {
            Over::Servers => s.workers[0].to_string(),
            Over::Workers => answer.map(|e| e.n.to_string()).unwrap_or_default(),
        },
        s.arrival[0].text().to_string(),
        num(s.load[0].value()),
        s.service[0].text().to_string(),
        target.to_string(),
        over.name().to_string(),
        answer.map(|e| e.n.to_string()).unwrap_or_default(),
        answer.map(|e| e.how.to_string()).unwrap_or_default(),
        value(answer),
        opt(answer.and_then(|e| e.ci95)),
        nb.map(|e| e.n.to_string()).unwrap_or_default(),
        nb.map(|e| e.how.to_string()).unwrap_or_default(),
        value(nb),
        opt(nb.and_then(|e| e.ci95)),
        found.verdict.to_string(),
        found.evaluations.len().to_string(),
    ]
}

/// The table `qsweep size` prints: one line per case and target.
pub(super) fn summary(table: &Table, spec: &Spec, over: qsweep_core::size::Over) -> String {
    let col = |name: &str| table.header.iter().position(|h| h == name).expect("column");
    let mut shown: Vec<&str> = vec!["routing"];
    if spec.routing.iter().any(|r| r.takes_choices()) {
        shown.push("choices");
    }
    let varies = |name: &str| {
        let i = col(name);
        table.rows.iter().any(|r| r[i] != table.rows[0][i])
    };
    let fixed = match over {
        qsweep_core::size::Over::Servers => "workers",
        qsweep_core::size::Over::Workers => "servers",
    };
    for c in ["routers", fixed, "arrival", "lambda", "service"] {
        if varies(c) {
            shown.push(c);
        }
    }
    let head: Vec<String> = shown
        .iter()
        .map(|s| s.to_string())
        .chain([
            "target".to_string(),
            over.name().to_string(),
            "at the answer".to_string(),
            "at one fewer".to_string(),
            "resolved".to_string(),
        ])
        .collect();
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|r| {
            let at = |v: &str, ci: &str, how: &str| match (how, ci) {
                ("", _) => String::new(),
                ("unstable" | "overflow", _) => how.to_string(),
                ("simulated", "") => format!("{v} (no CI)"),
                ("simulated", ci) => format!("{v} ± {ci}"),
                (_, _) => format!("{v} ({how})"),
            };
            let mut line: Vec<String> = shown.iter().map(|c| r[col(c)].clone()).collect();
            line.push(r[col("target")].clone());
            line.push(match r[col("answer")].as_str() {
                "" => "not met".into(),
                n => n.into(),
            });
            line.push(at(
                &r[col("metric_at_answer")],
                &r[col("metric_at_answer_ci95")],
                &r[col("method")],
            ));
            line.push(at(
                &r[col("metric_at_neighbour")],
                &r[col("metric_at_neighbour_ci95")],
                &r[col("method_at_neighbour")],
            ));
            line.push(r[col("resolved")].clone());
            line
        })
        .collect();
    // Text left-aligned, the answer right-aligned.
    let answer_col = shown.len() + 1;
    let mut all = vec![head];
    all.extend(rows);
    let widths: Vec<usize> = (0..all[0].len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &all {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == answer_col {
                    format!("{v:>w$}", w = widths[c])
                } else {
                    format!("{v:<w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
