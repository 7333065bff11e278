//! Assembling a spec from its sources, lowest priority first: the spec file
//! (or the built-in default study), then the flags.
//!
//! [`Raw`] reads the file's document structure (the `[sweep]` and `[run]`
//! tables, refusing anything else with a hint where a key belongs), hands
//! each table to its reader (`axes.rs`, `settings.rs`), lays the flags over
//! it, and finally fills defaults into a [`Spec`].

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::axes::{Axes, SWEEP_KEYS};
use super::settings::{apply_run_flags, is_run_key, read_run_table, RunSettings};
use super::values::{entries_in_order, show, FileCtx};
use super::{Spec, SpecError, SweepArgs};

/// A spec being assembled: what the sources gave so far.
pub(super) struct Raw {
    /// The axes given (`None`: not yet).
    axes: Axes,
    /// The `[run]` settings, starting from their defaults.
    run: RunSettings,
    /// `spec.toml:1: [sweep]`: where a missing axis is reported.
    sweep_at: String,
    /// Base directory for the default arrival law.
    base_dir: PathBuf,
}

impl Raw {
    /// Reads a spec file's text; `source` names it in errors and relative
    /// `file=` paths resolve against `base_dir`.
    pub(super) fn from_file(text: &str, source: &str, base_dir: &Path) -> Result<Raw, SpecError> {
        let ctx = FileCtx {
            text,
            source,
            base_dir,
        };
        let doc = DeTable::parse(text).map_err(|e| {
            let line = e.span().map_or(1, |s| ctx.line(s));
            let mut msg = e.message().trim().replace('\n', " ");
            if msg == "duplicate key" {
                let key = e.span().and_then(|s| text.get(s)).unwrap_or("").trim();
                msg = if key.is_empty() || key.contains('\n') {
                    "duplicate key or table; expected each key and table once".to_string()
                } else {
                    format!("duplicate key '{key}'; expected each key and table once")
                };
            }
            if msg.contains("expected") {
                SpecError(format!("{source}:{line}: invalid TOML: {msg}"))
            } else {
                SpecError(format!(
                    "{source}:{line}: invalid TOML: {msg}; expected a TOML document with [sweep] \
                     and [run] tables"
                ))
            }
        })?;
        let mut raw = Raw {
            axes: Axes::default(),
            run: RunSettings::default(),
            sweep_at: format!("{source}: [sweep]"),
            base_dir: base_dir.to_path_buf(),
        };
        // Every table and key is checked, so that one run names all the bad
        // ones (`SpecError::all`).
        let mut errors = Vec::new();
        for (k, v) in entries_in_order(doc.get_ref()) {
            let name: &str = k.get_ref();
            let table = match (name, v.get_ref()) {
                ("sweep" | "run", DeValue::Table(t)) => t,
                ("sweep" | "run", other) => {
                    errors.push(ctx.err(
                        k.span(),
                        format!(
                            "{name}: {} is not valid here; expected a table [{name}]",
                            show(other)
                        ),
                    ));
                    continue;
                }
                (_, DeValue::Table(_)) => {
                    errors.push(ctx.err(
                        k.span(),
                        format!("[{name}]: unknown table; expected [sweep] and [run]"),
                    ));
                    continue;
                }
                _ => {
                    let hint = if SWEEP_KEYS.contains(&name) {
                        " (it belongs in [sweep])"
                    } else if is_run_key(name) {
                        " (it belongs in [run])"
                    } else {
                        ""
                    };
                    errors.push(ctx.err(
                        k.span(),
                        format!(
                            "unknown top-level key '{name}'; expected tables [sweep] and [run]{hint}"
                        ),
                    ));
                    continue;
                }
            };
            if name == "sweep" {
                raw.sweep_at = format!("{source}:{}: [sweep]", ctx.line(k.span()));
                errors.extend(raw.axes.read_toml(&ctx, table));
            } else {
                errors.extend(read_run_table(&mut raw.run, &ctx, table));
            }
        }
        SpecError::none_of(errors)?;
        Ok(raw)
    }

    /// Flags replace whole axes and settings; relative `file=` paths in flag
    /// values resolve against `cwd`.
    pub(super) fn apply_flags(&mut self, args: &SweepArgs, cwd: &Path) -> Result<(), SpecError> {
        self.axes.apply_flags(args, cwd)?;
        apply_run_flags(&mut self.run, args)
    }

    /// Fills defaults and insists on the axes that have none.
    pub(super) fn finish(self, source: String) -> Result<Spec, SpecError> {
        self.axes
            .finish(&self.sweep_at, &self.base_dir, self.run, source)
    }
}
