//! Markdown: a GitHub-flavoured pipe table, numbers right-aligned, the
//! values as the CSV writes them (empty fields stay empty).

use std::io::Write;

use anyhow::Result;

use super::{Kind, Table};

/// A field inside a table cell: pipes escaped, line breaks as spaces. A
/// backslash is escaped too: GFM splits cells before inline parsing, so a
/// value ending in `\` turned its escaped pipe `\\|` back into a cell
/// border (issue 25).
fn cell(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

pub(super) fn write(table: &Table, kinds: &[Kind], w: &mut dyn Write) -> Result<()> {
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    writeln!(
        w,
        "{}",
        line(table.header.iter().map(|h| cell(h)).collect())
    )?;
    let rule: Vec<String> = kinds
        .iter()
        .map(|k| match k {
            Kind::Int | Kind::UInt | Kind::Float => "---:".to_string(),
            Kind::Bool | Kind::Text => "---".to_string(),
        })
        .collect();
    writeln!(w, "|{}|", rule.join("|"))?;
    for row in &table.rows {
        writeln!(w, "{}", line(row.iter().map(|v| cell(v)).collect()))?;
    }
    Ok(())
}
