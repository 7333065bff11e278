//! Choosing the x axis when `--x` is not given: the input axis that varies
//! along a series.
//!
//! Why this module exists: a sweep over ρ at a fixed number of servers drawn
//! against `servers` stacks every point on one vertical line.  The CSV says which
//! axes vary: within each series (rows sharing their `--by` and `--facet` values)
//! the x axis is the column that takes several values.  Two wrinkles, both from
//! how a spec sets the load: `rho` and `lambda` are tied by
//! `rho = lambda · E[S] / (servers · workers)`, so with one of them listed in the
//! spec the other is derived —
//! * columns that determine each other within every series (servers and ρ at a
//!   fixed λ; ρ and λ at a fixed fleet) are one axis, named by the column with
//!   the fewest distinct values in the file (the one the spec listed: servers
//!   51…4000 rather than ρ = 150/(3·R)), ties going to the order of [`X_AXES`];
//! * when ρ and λ both vary but are not tied one to one (ρ listed for several
//!   fleet sizes), the one with more distinct values is derived and left out.
//!
//! Of the axes left, the one with the most values within a series is drawn;
//! ties go to the order of [`X_AXES`].  Nothing varying: `servers` (the default
//! before this choice existed), else the first axis column present.

use std::collections::{HashMap, HashSet};

/// Numeric axis columns of `qsweep run`'s CSV that can be an x axis, in order of
/// preference.
pub(super) const X_AXES: [&str; 6] = ["servers", "rho", "lambda", "workers", "choices", "routers"];

/// The x column for `records`, whose series are told apart by the cells
/// `key_cells` (the `--by` and `--facet` columns); `None` when the CSV has none
/// of [`X_AXES`] outside those keys.
pub(super) fn choose_x(
    headers: &[String],
    records: &[csv::StringRecord],
    key_cells: &[usize],
) -> Option<usize> {
    let present: Vec<(usize, usize)> = X_AXES
        .iter()
        .enumerate()
        .filter_map(|(rank, name)| {
            headers
                .iter()
                .position(|h| h == name)
                .filter(|c| !key_cells.contains(c))
                .map(|c| (rank, c))
        })
        .collect();
    let fallback = || {
        present
            .iter()
            .find(|(rank, _)| *rank == 0)
            .or(present.first())
            .map(|&(_, c)| c)
    };
    // Series number of each record.
    let mut series_of: HashMap<Vec<&str>, usize> = HashMap::new();
    let series: Vec<usize> = records
        .iter()
        .map(|r| {
            let key: Vec<&str> = key_cells.iter().map(|&c| r.get(c).unwrap_or("")).collect();
            let n = series_of.len();
            *series_of.entry(key).or_insert(n)
        })
        .collect();
    let cell = |r: usize, c: usize| records[r].get(c).unwrap_or("");

    // Per candidate: most distinct values within one series, distinct values in the file.
    let stats: Vec<Axis> = present
        .iter()
        .map(|&(rank, col)| {
            let mut within: HashMap<usize, HashSet<&str>> = HashMap::new();
            let mut all: HashSet<&str> = HashSet::new();
            for (r, &s) in series.iter().enumerate() {
                let v = cell(r, col);
                if !v.is_empty() {
                    within.entry(s).or_default().insert(v);
                    all.insert(v);
                }
            }
            Axis {
                rank,
                col,
                within: within.values().map(HashSet::len).max().unwrap_or(0),
                distinct: all.len(),
            }
        })
        .collect();
    let varying: Vec<&Axis> = stats.iter().filter(|a| a.within > 1).collect();
    if varying.is_empty() {
        return fallback();
    }

    // `a` determines `b` within every series: one `b` per value of `a`.
    let determines = |a: usize, b: usize| {
        let mut seen: HashMap<(usize, &str), &str> = HashMap::new();
        (0..records.len()).all(|r| {
            let (va, vb) = (cell(r, a), cell(r, b));
            va.is_empty() || vb.is_empty() || *seen.entry((series[r], va)).or_insert(vb) == vb
        })
    };
    // Axes tied one to one are one axis.
    let mut classes: Vec<Vec<&Axis>> = Vec::new();
    for a in varying {
        match classes
            .iter_mut()
            .find(|cl| determines(cl[0].col, a.col) && determines(a.col, cl[0].col))
        {
            Some(cl) => cl.push(a),
            None => classes.push(vec![a]),
        }
    }
    // ρ and λ in different classes: the one with more distinct values is derived.
    let class_of = |rank: usize, classes: &[Vec<&Axis>]| {
        classes
            .iter()
            .position(|cl| cl.iter().any(|a| a.rank == rank))
    };
    let (rho, lambda) = (1, 2);
    if let (Some(cr), Some(cl)) = (class_of(rho, &classes), class_of(lambda, &classes)) {
        if cr != cl {
            let d = |rank: usize, ci: usize| {
                classes[ci]
                    .iter()
                    .find(|a| a.rank == rank)
                    .map_or(0, |a| a.distinct)
            };
            let (drop_rank, ci) = if d(lambda, cl) >= d(rho, cr) {
                (lambda, cl)
            } else {
                (rho, cr)
            };
            classes[ci].retain(|a| a.rank != drop_rank);
            classes.retain(|cl| !cl.is_empty());
        }
    }
    // Each class named by its column with the fewest distinct values.
    let reps: Vec<&Axis> = classes
        .iter()
        .map(|cl| {
            *cl.iter()
                .min_by_key(|a| (a.distinct, a.rank))
                .expect("classes are not empty")
        })
        .collect();
    reps.iter()
        .max_by_key(|a| (a.within, std::cmp::Reverse(a.rank)))
        .map(|a| a.col)
        .or_else(fallback)
}

/// A candidate x axis and how much it varies.
struct Axis {
    /// Position in [`X_AXES`].
    rank: usize,
    /// Column in the CSV.
    col: usize,
    /// Most distinct values within one series.
    within: usize,
    /// Distinct values in the whole file.
    distinct: usize,
}
