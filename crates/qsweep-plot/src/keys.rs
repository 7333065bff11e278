//! The columns that tell series (`--by`) and facet rows (`--facet`) apart, and how
//! their values are named in legends and facet titles.
//!
//! Why this module exists: a series or a facet is keyed by one or several columns
//! (`--by routing,servers`), and some columns only make sense together — pod's
//! `choices` (its d) and the number of `routers` belong to the routing policy, so
//! `routing` carries them along (a `pod` series with d = 2 and one with d = 3 are
//! different policies, and the legend says "pod (d=2)").  The legend and the facet
//! titles name the values in words and symbols ("JSQ", "ρ = 0.9"), not as the raw
//! spec strings of the CSV.

use std::collections::HashMap;

use super::labels::{axis_symbol, routing_label, value_text};

/// What a key cell is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Role {
    /// An ordinary column, shown as `<symbol>=<value>` (or the bare value when
    /// it is the only column of a legend).
    Plain,
    /// The `routing` column, shown as a policy name.
    Routing,
    /// `choices` carried along by `routing` (pod's d; empty for other policies).
    Choices,
    /// `routers` carried along by `routing` (shown when it is not 1).
    Routers,
}

/// The columns of a key, with the names the user gave.
#[derive(Clone, Debug, Default)]
pub(super) struct KeyColumns {
    /// Column names as given (`--by routing,servers`), for legend titles.
    pub(super) names: Vec<String>,
    /// The CSV columns whose cells make up a key value, in order.
    pub(super) cells: Vec<(usize, Role)>,
    /// Header names of `cells`.
    headers: Vec<String>,
}

impl KeyColumns {
    /// The key of `names` (already checked to be in `headers` at `cols`).
    /// `routing` carries `choices` and `routers` along where the CSV has them
    /// and they are not named elsewhere (`taken`: every column named in
    /// `--by` or `--facet`); naming them next to `routing` changes nothing.
    pub(super) fn new(
        names: &[String],
        cols: &[usize],
        headers: &[String],
        taken: &[&str],
    ) -> Self {
        let has_routing = names.iter().any(|n| n == "routing");
        let find = |name: &str| headers.iter().position(|h| h == name);
        let mut cells = Vec::new();
        for (name, &c) in names.iter().zip(cols) {
            match name.as_str() {
                "routing" => {
                    cells.push((c, Role::Routing));
                    for (extra, role) in [("choices", Role::Choices), ("routers", Role::Routers)] {
                        let named_elsewhere = taken.iter().filter(|t| **t == extra).count()
                            > usize::from(names.iter().any(|n| n == extra));
                        if let (Some(ec), false) = (find(extra), named_elsewhere) {
                            cells.push((ec, role));
                        }
                    }
                }
                "choices" | "routers" if has_routing => {}
                _ => cells.push((c, Role::Plain)),
            }
        }
        cells.dedup();
        KeyColumns {
            names: names.to_vec(),
            headers: cells.iter().map(|&(c, _)| headers[c].clone()).collect(),
            cells,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The key value of a record: its cells in `cells` order.
    pub(super) fn values(&self, record: &csv::StringRecord) -> Vec<String> {
        self.cells
            .iter()
            .map(|&(c, _)| record.get(c).unwrap_or("").to_string())
            .collect()
    }

    /// Legend label of a key value: the bare value for a single ordinary column
    /// (the legend title names the column); otherwise the policy name with its
    /// d, routers and the other columns in parentheses ("pod (d=2, servers=10)"),
    /// or `<symbol>=<value>` parts joined by commas.
    pub(super) fn label(&self, vals: &[String]) -> String {
        if let [(_, Role::Plain)] = self.cells[..] {
            return value_text(&self.headers[0], &vals[0]);
        }
        self.compose(vals, "=")
    }

    /// Caption of a facet row: `<symbol> = <value>` for each ordinary column
    /// ("servers = 10", "ρ = 0.9"), the policy name for `routing`.
    pub(super) fn title(&self, vals: &[String]) -> String {
        if self.cells.iter().any(|&(_, r)| r == Role::Routing) {
            return self.compose(vals, " = ");
        }
        self.plain_parts(vals, " = ").join(", ")
    }

    /// `<column>=<raw value>` parts joined by ", ": how panels are named in
    /// [`super::PlotSummary::y_ranges`].
    pub(super) fn raw(&self, vals: &[String]) -> String {
        self.headers
            .iter()
            .zip(vals)
            .map(|(h, v)| format!("{h}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn plain_parts(&self, vals: &[String], eq: &str) -> Vec<String> {
        self.cells
            .iter()
            .zip(&self.headers)
            .zip(vals)
            .filter(|((cell, _), _)| cell.1 == Role::Plain)
            .map(|((_, h), v)| format!("{}{eq}{}", axis_symbol(h), value_text(h, v)))
            .collect()
    }

    fn compose(&self, vals: &[String], eq: &str) -> String {
        let cell = |role: Role| {
            self.cells
                .iter()
                .position(|&(_, r)| r == role)
                .map(|i| vals[i].as_str())
        };
        let plain = self.plain_parts(vals, eq);
        match cell(Role::Routing) {
            Some(routing) => routing_label(
                routing,
                cell(Role::Choices).unwrap_or(""),
                cell(Role::Routers).unwrap_or(""),
                &plain,
            ),
            None => plain.join(", "),
        }
    }
}

/// Distinct key values, numbered in order of first appearance.
#[derive(Default)]
pub(super) struct Interner {
    pub(super) names: Vec<Vec<String>>,
    index: HashMap<Vec<String>, usize>,
}

impl Interner {
    pub(super) fn intern(&mut self, v: Vec<String>) -> usize {
        if let Some(&i) = self.index.get(&v) {
            return i;
        }
        self.names.push(v.clone());
        self.index.insert(v, self.names.len() - 1);
        self.names.len() - 1
    }
}

/// Indices of `keys` in display order: cell by cell, in numeric order where
/// every value of that cell is a number, else in order of first appearance.
pub(super) fn display_order(keys: &[Vec<String>]) -> Vec<usize> {
    let width = keys.first().map_or(0, Vec::len);
    // Per cell, a rank for each key.
    let ranks: Vec<Vec<f64>> = (0..width)
        .map(|c| {
            let nums: Option<Vec<f64>> = keys.iter().map(|k| k[c].parse::<f64>().ok()).collect();
            nums.unwrap_or_else(|| {
                let mut first: HashMap<&str, usize> = HashMap::new();
                keys.iter()
                    .map(|k| {
                        let n = first.len();
                        *first.entry(k[c].as_str()).or_insert(n) as f64
                    })
                    .collect()
            })
        })
        .collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        ranks
            .iter()
            .map(|r| r[a].total_cmp(&r[b]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    order
}
