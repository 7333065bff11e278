//! Checks on the paths qsweep reads and writes, shared by every command.
//!
//! Why this module exists (issue 25): reading a FIFO blocks until someone
//! writes to it, so a FIFO given as a spec, an empirical data file or a CSV
//! hung qsweep forever; and an output that is a device node, FIFO or
//! directory was either written through (a FIFO blocks) or, under `--force`,
//! replaced by a regular file renamed over it (as root, `-o /dev/null
//! --force` would replace `/dev/null`). Inputs and outputs must be regular
//! files (or not exist yet, for outputs); `-` (stdout) is the caller's case.

use std::path::{Path, PathBuf};

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

/// Makes a write past the file-size limit (`ulimit -f`) fail with an error
/// (EFBIG, "File too large") that the command reports in one line, like a
/// full disk's, instead of the SIGXFSZ that killed qsweep silently with exit
/// 153 (issue 40). Called once at start-up by the CLI; Python ignores the
/// signal itself. Handling the signal, rather than ignoring it, keeps it
/// ignored-or-default for the processes qsweep starts.
pub fn report_file_size_limit() {
    #[cfg(unix)]
    {
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, seen);
    }
}

/// An output written whole or not at all (issue 40): its bytes go to a
/// temporary file beside it (same directory, so the rename cannot cross a
/// file system), which [`Staged::commit`] syncs and then renames over `out`
/// (`force`) or links to it (no `force`: an `out` created meanwhile is never
/// replaced). Until then `out`, an old file or none, is untouched: a full
/// disk, `ulimit -f` or a kill leaves the previous figure, table or merged
/// CSV as it was, where writing in place truncated it first. Dropped
/// uncommitted, the temporary file is removed.
pub struct Staged {
    out: PathBuf,
    tmp: PathBuf,
    force: bool,
    committed: bool,
}

impl Staged {
    /// A staged write of `out` (the caller has checked `out` with
    /// [`regular_output`] and, without `force`, that it does not exist).
    pub fn new(out: &Path, force: bool) -> Staged {
        let name = out
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        // Hidden, and named for the process, so two runs never share one.
        let tmp = out.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        Staged {
            out: out.to_path_buf(),
            tmp,
            force,
            committed: false,
        }
    }

    /// Where to write the bytes.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Creates the temporary file (new: never one another process holds).
    pub fn create(&self) -> std::io::Result<std::fs::File> {
        std::fs::File::create_new(&self.tmp)
    }

    /// Syncs the temporary file and puts it in place of `out`. Without
    /// `force`, an `out` that exists by now is an `AlreadyExists` error.
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::File::open(&self.tmp)?.sync_all()?;
        if self.force {
            std::fs::rename(&self.tmp, &self.out)?;
        } else {
            match std::fs::hard_link(&self.tmp, &self.out) {
                Ok(()) => std::fs::remove_file(&self.tmp)?,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(e),
                // A file system without hard links: check, then rename (the
                // check and the rename are not one step there).
                Err(_) if self.out.symlink_metadata().is_ok() => {
                    return Err(std::io::ErrorKind::AlreadyExists.into())
                }
                Err(_) => std::fs::rename(&self.tmp, &self.out)?,
            }
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Why [`write_whole`] wrote nothing: the file could not be created (a
/// folder that does not exist or cannot be written: bad input, as before
/// outputs were staged), or the bytes could not be written or put in place
/// (a full disk; `AlreadyExists` without `force`).
#[derive(Debug)]
pub enum Unwritten {
    Create(std::io::Error),
    Write(std::io::Error),
}

impl std::fmt::Display for Unwritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unwritten::Create(e) | Unwritten::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Unwritten {}

/// Writes `bytes` to `out` whole or not at all ([`Staged`]).
pub fn write_whole(out: &Path, bytes: &[u8], force: bool) -> Result<(), Unwritten> {
    use std::io::Write;
    let staged = Staged::new(out, force);
    let mut file = staged.create().map_err(Unwritten::Create)?;
    file.write_all(bytes).map_err(Unwritten::Write)?;
    drop(file);
    staged.commit().map_err(Unwritten::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_write_replaces_whole_or_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("fig.svg");
        std::fs::write(&out, "old").unwrap();
        // Dropped before its commit (a failed write): old file kept, no
        // temporary file left.
        let staged = Staged::new(&out, true);
        std::fs::write(staged.path(), "half").unwrap();
        drop(staged);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Without force an existing file is never replaced.
        match write_whole(&out, b"new", false) {
            Err(Unwritten::Write(e)) => assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        write_whole(&out, b"new", true).unwrap();
        // A folder that does not exist: nothing created.
        assert!(matches!(
            write_whole(&dir.path().join("no/x.svg"), b"x", true),
            Err(Unwritten::Create(_))
        ));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        let fresh = dir.path().join("t.csv");
        write_whole(&fresh, b"x", false).unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "x");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

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
