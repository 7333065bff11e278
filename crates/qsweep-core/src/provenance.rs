//! Provenance: the `*.meta.json` file beside each results CSV.
//!
//! It records what produced the CSV (the canonical spec, its hash, the seed,
//! the shard), with what (qsweep version, git revision, engine, host, command
//! line) and when (RFC 3339 UTC times), and how the run ended (`status`). It
//! is written when a run starts (`running`) and rewritten when it ends
//! (`complete`, `interrupted` or `failed`), each time atomically (a temporary
//! file renamed over it), so a killed run leaves the last good version.
//!
//! `qsweep run --resume` compares [`Meta::spec_hash`] with the spec it is
//! given, `qsweep merge` compares the hashes of the pieces, and
//! `qsweep run --from-meta` runs [`Meta::spec_toml`] again.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::spec::Spec;
use crate::UsageError;

/// [`Meta::format`] of the files this version writes.
pub const META_FORMAT: &str = "qsweep-meta/1";
/// The qsweep version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit of the program that records provenance: embedded by the
/// CLI's and the Python module's build script (`build.rs`) and handed over
/// once at start-up, so that a commit recompiles those thin shells and not
/// this library (issue 43).
static GIT_REVISION: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Records the git commit the running program was built from, as its build
/// script embedded it (`None` without git; the first call wins).
pub fn set_git_revision(revision: Option<&'static str>) {
    if let Some(revision) = revision {
        let _ = GIT_REVISION.set(revision);
    }
}

/// The git commit recorded by [`set_git_revision`], or `unknown`.
pub fn git_revision() -> &'static str {
    GIT_REVISION.get().copied().unwrap_or("unknown")
}

/// How a run ended, or that it is still going (or was killed).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Started and not finished: in progress, or killed (SIGKILL, power loss).
    Running,
    /// Every point of the file's shard is in the CSV.
    Complete,
    /// Stopped by Ctrl-C or SIGTERM; resumable.
    Interrupted,
    /// Stopped by an error; the rows written so far are valid and resumable.
    Failed,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Running => "running",
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        })
    }
}

/// One invocation of `qsweep run` (or `merge`) that wrote to the CSV.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Invocation {
    pub command: Vec<String>,
    pub cwd: String,
    pub host: String,
    pub qsweep_version: String,
    pub git_revision: String,
    /// The engine(s) that simulated, as in the CSV's `backend` column
    /// (`vulkan:NAME, then cpu` after a device failure).
    pub engine: String,
    pub started: String,
    pub ended: Option<String>,
    pub status: Status,
    /// Rows this invocation wrote.
    pub points_run: u64,
    /// What the GPU did in this invocation (dispatches, passes, widest
    /// dispatch, device seconds, adapter); absent when no GPU engine ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<crate::engine::DeviceReport>,
}

/// A piece of a merged CSV.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Piece {
    pub csv: String,
    pub shard: Option<String>,
    pub rows: u64,
    pub host: String,
    pub engine: String,
    pub started: String,
    pub ended: Option<String>,
}

/// The contents of a `*.meta.json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Meta {
    pub format: String,
    /// The CSV's file name (it sits beside this file).
    pub csv: String,
    /// See [`spec_hash`].
    pub spec_hash: String,
    pub seed: u64,
    /// The fully resolved spec ([`Spec::to_toml`]).
    pub spec_toml: String,
    /// Where the spec came from ([`Spec::source`]).
    pub spec_source: String,
    /// Absolute directory that relative `file=` paths in `spec_toml` resolve
    /// against.
    pub spec_dir: String,
    /// Points in the whole grid.
    pub points_total: u64,
    /// `K/N` when the CSV holds only the points with index ≡ K (mod N).
    pub shard: Option<String>,
    /// Points the CSV holds once complete (those of its shard).
    pub points: u64,
    /// Rows in the CSV when this file was written.
    pub points_done: u64,
    /// `auto`, `gpu` or `cpu`, as requested.
    pub backend: String,
    pub adapter: Option<String>,
    /// The latest invocation (for a merge: the merge itself); its `status`
    /// is the file's.
    #[serde(flatten)]
    pub run: Invocation,
    /// Start of the first invocation, when resumed.
    pub first_started: String,
    /// What the last invocation stopped on, if anything.
    pub error: Option<String>,
    /// Points whose rows carry an error (their `error` column; no
    /// statistics): the sweep went on without them, `--resume` runs them
    /// again.
    #[serde(default)]
    pub failed_points: Vec<u32>,
    /// Earlier invocations that wrote to the same CSV (`--resume`).
    #[serde(default)]
    pub previous_runs: Vec<Invocation>,
    /// For the `OUT.partial` of a `--force` run: the file name of the CSV it
    /// replaces once complete, also when the run is resumed (`-o
    /// OUT.partial --resume`), so the resumed run finishes what `--force`
    /// started (issue 25: it left the new rows in the partial file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// For a merged CSV: the pieces it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<Piece>,
}

impl Meta {
    /// Reads a meta file; errors are [`UsageError`]s naming the file.
    pub fn read(path: &Path) -> Result<Meta> {
        crate::files::regular_input(path, "meta")?;
        let text = std::fs::read_to_string(path).map_err(|e| {
            UsageError(format!(
                "cannot read '{}': {e}; expected a .meta.json written by qsweep",
                path.display()
            ))
        })?;
        let meta: Meta = serde_json::from_str(&text).map_err(|e| {
            UsageError(format!(
                "'{}' is not a qsweep meta file ({e}); expected a .meta.json written by qsweep",
                path.display()
            ))
        })?;
        if meta.format != META_FORMAT {
            return Err(UsageError(format!(
                "'{}' has format '{}'; expected {META_FORMAT}",
                path.display(),
                meta.format
            ))
            .into());
        }
        Ok(meta)
    }

    /// Writes atomically: a temporary file beside `path`, renamed over it.
    pub fn write(&self, path: &Path) -> Result<()> {
        let tmp = PathBuf::from(format!("{}.tmp", path.display()));
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        let written = std::fs::write(&tmp, text)
            .with_context(|| format!("writing {}", tmp.display()))
            .and_then(|()| {
                std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
            });
        if written.is_err() {
            // A full disk must not leave a stray temporary file behind.
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// A CSV's file name, as the `.meta.json` beside it records it.
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// `results.csv` → `results.meta.json`.
pub fn meta_path(csv: &Path) -> PathBuf {
    csv.with_extension("meta.json")
}

/// The spec's identity: SHA-256 over its canonical TOML with the settings
/// that do not change results left out (`out`, `threads`, `backend`,
/// `adapter`; `force` never appears), followed by the values of its
/// empirical tables (so an edited data file counts as a different spec),
/// and, where an empirical law is resampled, a line saying so (see below).
/// Written `sha256:HEX`.
pub fn spec_hash(spec: &Spec, table: &[f32]) -> String {
    let mut h = Sha256::new();
    h.update(canonical_toml(spec).as_bytes());
    h.update(b"\n# empirical table\n");
    for v in table {
        h.update(v.to_bits().to_le_bytes());
    }
    // `empirical(file=...)` was the interpolation between the sorted values
    // until resampling became its default (`smooth=none`): a spec whose text
    // has not changed but whose law has hashes differently, so a run of it
    // from before is neither resumed nor merged with the new law. Specs
    // without such a law keep their hashes.
    let resampled = spec
        .arrival
        .iter()
        .chain(&spec.service)
        .any(|d| d.smoothing() == Some(crate::dist::Smoothing::None));
    if resampled {
        h.update(b"\n# empirical laws resampled\n");
    }
    let digest = h.finalize();
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for b in digest.iter() {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// [`Spec::to_toml`] with `out`, `threads`, `backend` and `adapter` reset.
pub fn canonical_toml(spec: &Spec) -> String {
    let mut s = spec.clone();
    s.run.out = None;
    s.run.threads = 0;
    s.run.backend = crate::spec::Backend::Auto;
    s.run.adapter = None;
    s.run.force = false;
    s.to_toml()
}

/// The current time as RFC 3339 UTC, to the second: `2025-01-31T23:59:59Z`.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// This machine's name (`/proc/sys/kernel/hostname`, `/etc/hostname`,
/// `$HOSTNAME`, `$COMPUTERNAME`), or `unknown`.
pub fn hostname() -> String {
    let from_file = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    from_file("/proc/sys/kernel/hostname")
        .or_else(|| from_file("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .or_else(|| std::env::var("COMPUTERNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The command line as typed, each argument as a string.
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// The current directory, or `.`.
pub fn cwd() -> String {
    std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| ".".to_string())
}

/// `args` as one line a POSIX shell reads back to the same arguments.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | '=' | ':' | ',' | '+' | '@' | '%')
        });
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SweepArgs;

    #[test]
    fn rfc3339_matches_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T');
    }

    #[test]
    fn meta_path_replaces_the_extension() {
        assert_eq!(
            meta_path(Path::new("out/results.csv")),
            Path::new("out/results.meta.json")
        );
        assert_eq!(
            meta_path(Path::new("results")),
            Path::new("results.meta.json")
        );
    }

    #[test]
    fn spec_hash_ignores_machine_settings_only() {
        let spec = Spec::load(&SweepArgs::default()).unwrap();
        let h = spec_hash(&spec, &[0.0]);
        assert!(h.starts_with("sha256:") && h.len() == 71, "{h}");
        let mut other = spec.clone();
        other.run.out = Some("x.csv".into());
        other.run.threads = 3;
        other.run.backend = crate::spec::Backend::Cpu;
        other.run.adapter = Some("llvmpipe".into());
        other.run.force = true;
        assert_eq!(spec_hash(&other, &[0.0]), h);
        other.run.seed = 2;
        assert_ne!(spec_hash(&other, &[0.0]), h);
        let mut reps = spec.clone();
        reps.run.reps += 1;
        assert_ne!(spec_hash(&reps, &[0.0]), h);
        assert_ne!(spec_hash(&spec, &[0.5]), h);
    }

    #[test]
    fn shell_join_quotes_what_needs_it() {
        let args: Vec<String> = [
            "qsweep",
            "run",
            "--service",
            "weibull(shape=0.5)",
            "it's",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            shell_join(&args),
            "qsweep run --service 'weibull(shape=0.5)' 'it'\\''s' ''"
        );
    }
}
