//! The memory a run (or a figure) may take, and refusing what would not
//! fit before anything is allocated: a refused size is one line naming the
//! field and the limit, exit 2, instead of an allocation failure that
//! aborts the process (exit 134) hours into an overnight run.
//!
//! The limit ([`limit`]) is `QSWEEP_MEMORY_LIMIT` when set (bytes, or with
//! a K/M/G/T suffix, powers of 1024), otherwise 75% of the smallest of the
//! physical memory (`/proc/meminfo`), the cgroup's `memory.max` (a Slurm
//! job's allocation) and, under `ulimit -v`, half the address-space limit
//! (threads' stacks and allocator arenas take address space too).
//! Estimates err on the high side; `run::estimate` adds up a run's.

use crate::UsageError;

/// Bytes a grid point costs while a run holds it, with margin: its
/// `GridPoint` and prepared parameters, and its CSV row kept for the
/// summary (about 60 fields of text).
pub const GRID_POINT_BYTES: u64 = 4096;

/// The environment variable that sets the limit.
pub const LIMIT_VAR: &str = "QSWEEP_MEMORY_LIMIT";

/// How much memory a run may use, and where that figure comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub bytes: u64,
    /// e.g. "75% of the 23.5 GiB of physical memory".
    pub source: String,
}

/// `1.5 GiB`, `512 MiB`, `4.0 KiB`, `12 bytes`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut x = bytes as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    if x >= 100.0 {
        format!("{x:.0} {}", UNITS[unit])
    } else {
        format!("{x:.1} {}", UNITS[unit])
    }
}

/// Parses `4G`, `512M`, `1.5GiB`, `1e9`, `123456` (bytes; suffixes are
/// powers of 1024).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (num, scale) = [
        ("tib", 1u64 << 40),
        ("gib", 1 << 30),
        ("mib", 1 << 20),
        ("kib", 1 << 10),
        ("tb", 1 << 40),
        ("gb", 1 << 30),
        ("mb", 1 << 20),
        ("kb", 1 << 10),
        ("t", 1 << 40),
        ("g", 1 << 30),
        ("m", 1 << 20),
        ("k", 1 << 10),
        ("b", 1),
    ]
    .iter()
    .find_map(|&(suffix, scale)| lower.strip_suffix(suffix).map(|n| (n.trim(), scale)))
    .unwrap_or((lower.as_str(), 1));
    let x: f64 = num.parse().ok()?;
    let bytes = x * scale as f64;
    (1.0..1.8e19).contains(&bytes).then_some(bytes as u64)
}

/// A `/proc/meminfo`-style line's value in bytes (`MemTotal:  24684092 kB`).
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let n: u64 = parts.next()?.parse().ok()?;
    Some(match parts.next() {
        Some("kB") => n * 1024,
        _ => n,
    })
}

/// This process's soft address-space limit (`ulimit -v`) in bytes; `None`
/// when unlimited or unknown (no `/proc`).
pub fn address_space_bytes() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .as_deref()
        .and_then(address_space_limit)
}

/// `Max address space` from `/proc/self/limits` (None when unlimited).
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// The limit from what the system says (see the module notes); `env` is
/// the value of [`LIMIT_VAR`], if set.
fn limit_from(
    env: Option<&str>,
    meminfo: Option<&str>,
    cgroup_max: Option<&str>,
    limits: Option<&str>,
) -> Result<Limit, UsageError> {
    if let Some(v) = env {
        let bytes = parse_bytes(v).ok_or_else(|| {
            UsageError(format!(
                "{LIMIT_VAR}: '{v}' is not a size; expected bytes, or a number with a K, M, G \
                 or T suffix (e.g. 8G)"
            ))
        })?;
        return Ok(Limit {
            bytes,
            source: format!("{LIMIT_VAR}={v}"),
        });
    }
    let mut best: Option<Limit> = None;
    let mut offer = |bytes: u64, source: String| {
        if best.as_ref().is_none_or(|b| bytes < b.bytes) {
            best = Some(Limit { bytes, source });
        }
    };
    if let Some(total) = meminfo.and_then(meminfo_total) {
        offer(
            total / 4 * 3,
            format!("75% of the {} of physical memory", human(total)),
        );
    }
    if let Some(max) = cgroup_max.and_then(|s| s.trim().parse::<u64>().ok()) {
        offer(
            max / 4 * 3,
            format!("75% of the cgroup's memory.max of {}", human(max)),
        );
    }
    if let Some(av) = limits.and_then(address_space_limit) {
        offer(
            av / 2,
            format!("half the address-space limit (ulimit -v) of {}", human(av)),
        );
    }
    Ok(best.unwrap_or(Limit {
        bytes: 16 << 30,
        source: "16 GiB (the physical memory is unknown here)".into(),
    }))
}

/// The limit for this process (see the module notes).
pub fn limit() -> Result<Limit, UsageError> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    limit_from(
        std::env::var(LIMIT_VAR).ok().as_deref(),
        read("/proc/meminfo").as_deref(),
        read("/sys/fs/cgroup/memory.max").as_deref(),
        read("/proc/self/limits").as_deref(),
    )
}

/// Refuses `bytes` for `what` above the limit: `FIELD: WHAT: about X of
/// memory; expected ADVICE, within the memory limit of L (SOURCE; set
/// QSWEEP_MEMORY_LIMIT to change it)`.
pub fn check(field: &str, what: &str, bytes: u64, advice: &str) -> Result<(), UsageError> {
    let limit = limit()?;
    if bytes <= limit.bytes {
        return Ok(());
    }
    Err(refusal(field, what, bytes, advice, &limit))
}

/// The message [`check`] gives.
pub fn refusal(field: &str, what: &str, bytes: u64, advice: &str, limit: &Limit) -> UsageError {
    let advice = if advice.is_empty() {
        String::new()
    } else {
        format!("{advice}, ")
    };
    UsageError(format!(
        "{field}: {what}: about {} of memory; expected {advice}within the memory limit of {} \
         ({}; set {LIMIT_VAR} to change it)",
        human(bytes),
        human(limit.bytes),
        limit.source
    ))
}

/// The largest `n` in `1..=max` with `bytes_of(n) <= budget` (0 if none),
/// for advice like "at most N servers"; `bytes_of` must grow with `n`.
pub fn largest_within(budget: u64, max: u64, bytes_of: impl Fn(u64) -> u64) -> u64 {
    let (mut lo, mut hi) = (0u64, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if bytes_of(mid) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("1.5gb"), Some(3 << 29));
        assert_eq!(parse_bytes("1e9"), Some(1_000_000_000));
        assert_eq!(parse_bytes("123"), Some(123));
        for bad in ["", "x", "-1G", "0", "1e30", "G"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
        assert_eq!(human(12), "12 bytes");
        assert_eq!(human(4096), "4.0 KiB");
        assert_eq!(human(3 << 29), "1.5 GiB");
        assert_eq!(human(300 << 30), "300 GiB");
    }

    #[test]
    fn the_limit_is_the_smallest_of_what_the_system_says() {
        let meminfo = "MemTotal:       24684092 kB\nMemFree: 1 kB\n";
        let l = limit_from(None, Some(meminfo), None, None).unwrap();
        assert_eq!(l.bytes, 24684092 * 1024 / 4 * 3);
        assert!(l.source.starts_with("75% of the 23.5 GiB"), "{}", l.source);
        let l = limit_from(None, Some(meminfo), Some("max\n"), None).unwrap();
        assert_eq!(l.bytes, 24684092 * 1024 / 4 * 3);
        let l = limit_from(None, Some(meminfo), Some("4294967296\n"), None).unwrap();
        assert_eq!(l.bytes, 3 << 30);
        let limits = "Limit Soft Hard Units\nMax address space         2147483648           unlimited            bytes\n";
        let l = limit_from(None, Some(meminfo), None, Some(limits)).unwrap();
        assert_eq!(l.bytes, 1 << 30);
        assert!(l.source.contains("ulimit -v"));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        let l = limit_from(None, None, None, Some(unlimited)).unwrap();
        assert_eq!(l.bytes, 16 << 30);
        let l = limit_from(Some("2G"), Some(meminfo), None, None).unwrap();
        assert_eq!(
            (l.bytes, l.source.as_str()),
            (2 << 30, "QSWEEP_MEMORY_LIMIT=2G")
        );
        let e = limit_from(Some("lots"), None, None, None).unwrap_err();
        assert!(e.0.starts_with("QSWEEP_MEMORY_LIMIT: 'lots' is not a size"));
    }

    #[test]
    fn refusals_name_the_field_and_the_limit() {
        let l = Limit {
            bytes: 1 << 30,
            source: "test".into(),
        };
        let e = refusal(
            "servers",
            "a central queue of 1e9 servers",
            64 << 30,
            "at most 5 servers",
            &l,
        );
        assert_eq!(
            e.0,
            "servers: a central queue of 1e9 servers: about 64.0 GiB of memory; expected at most \
             5 servers, within the memory limit of 1.0 GiB (test; set QSWEEP_MEMORY_LIMIT to \
             change it)"
        );
        assert_eq!(largest_within(100, 1000, |n| n * 7), 14);
        assert_eq!(largest_within(5, 1000, |n| n * 7), 0);
        assert_eq!(largest_within(u64::MAX, 1000, |n| n), 1000);
    }
}
