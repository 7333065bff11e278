//! Checks on the paths qsweep reads and writes, shared by every command.
//!
//! Why this module exists (issue 25): reading a FIFO blocks until someone
//! writes to it, so a FIFO given as a spec, an empirical data file or a CSV
//! hung qsweep forever; and an output that is a device node, FIFO or
//! directory was either written through (a FIFO blocks) or, under `--force`,
//! replaced by a regular file renamed over it (as root, `-o /dev/null
//! --force` would replace `/dev/null`). Inputs and outputs must be regular
//! files (or not exist yet, for outputs); `-` (stdout) is the caller's case.

use std::path::Path;

use crate::UsageError;

/// What `meta` is, when it is not a regular file: "a directory", "a FIFO",
/// ... (`None` for a regular file).
fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// What `path` is when it exists but is not a regular file ("a FIFO", "a
/// directory", ...), for callers with their own wording.
pub fn special(path: &Path) -> Option<&'static str> {
    std::fs::metadata(path).ok().and_then(|m| special_kind(&m))
}

/// Refuses an input `path` that exists but is not a regular file (a FIFO
/// would block the read forever), naming it after `what` (`spec`, `--hist`,
/// ...). A missing file is left to the caller's own error.
pub fn regular_input(path: &Path, what: &str) -> Result<(), UsageError> {
    match std::fs::metadata(path) {
        Ok(m) => match special_kind(&m) {
            None => Ok(()),
            Some(kind) => Err(UsageError(format!(
                "{what}: '{}' is {kind}; expected a regular file to read",
                path.display()
            ))),
        },
        Err(_) => Ok(()),
    }
}

/// Refuses an output `path` that exists but is not a regular file (a
/// device node, FIFO or directory), naming it after `what` (`out`,
/// `--hist`, ...): qsweep writes outputs whole and renames them into
/// place, which must never replace or block on such a file. A missing
/// path is fine.
pub fn regular_output(path: &Path, what: &str) -> Result<(), UsageError> {
    match std::fs::metadata(path) {
        Ok(m) => match special_kind(&m) {
            None => Ok(()),
            Some(kind) => Err(UsageError(format!(
                "{what}: '{}' is {kind}; expected a regular file path for the output (or - for \
                 stdout where the command allows it)",
                path.display()
            ))),
        },
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_refused_both_ways_and_files_pass() {
        let dir = tempfile::tempdir().unwrap();
        let e = regular_output(dir.path(), "out").unwrap_err().0;
        assert!(
            e.starts_with("out: ") && e.contains("is a directory"),
            "{e}"
        );
        let e = regular_input(dir.path(), "spec").unwrap_err().0;
        assert!(
            e.starts_with("spec: ") && e.contains("is a directory"),
            "{e}"
        );
        let f = dir.path().join("a.csv");
        assert!(regular_output(&f, "out").is_ok());
        std::fs::write(&f, "x").unwrap();
        assert!(regular_output(&f, "out").is_ok());
        assert!(regular_input(&f, "spec").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused() {
        let e = regular_output(Path::new("/dev/null"), "out").unwrap_err().0;
        assert!(e.contains("is a device"), "{e}");
    }
}
