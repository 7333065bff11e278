//! [`Backend`]: which engine a run asks for (`--backend auto|gpu|cpu`).
//!
//! The one place the three names are spelled: the spec's `[run] backend`,
//! `qsweep bench --backend` and `--from-meta` all parse them here. Opening
//! the engine a name asks for is `qsweep_backend::backend::choose_for`'s job
//! (crates/qsweep-backend), above both engines.

use std::fmt;
use std::str::FromStr;

/// Which engine a run asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// A hardware GPU if there is one; otherwise the faster of the CPU and a
    /// software GPU adapter, measured; otherwise the CPU.
    #[default]
    Auto,
    /// The GPU engine, or an error if no adapter opens.
    Gpu,
    /// The CPU engine.
    Cpu,
}

impl Backend {
    /// Every backend, in the order messages list them.
    pub const ALL: [Backend; 3] = [Backend::Auto, Backend::Gpu, Backend::Cpu];
    /// What a valid backend is, for `expected ...` in messages (the names of
    /// [`Backend::ALL`]; a unit test keeps the two in step).
    pub const EXPECTED: &'static str = "one of auto, gpu, cpu";

    /// The name users write: `auto`, `gpu` or `cpu`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Backend::ALL`] (names are exact: no case
/// folding, no trimming).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("'{0}' is not a backend; expected {exp}", exp = Backend::EXPECTED)]
pub struct UnknownBackend(pub String);

impl FromStr for Backend {
    type Err = UnknownBackend;

    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_expected_lists_them_all() {
        for b in Backend::ALL {
            assert_eq!(b.to_string().parse::<Backend>(), Ok(b));
        }
        let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
        assert_eq!(Backend::EXPECTED, format!("one of {}", names.join(", ")));
        assert_eq!(Backend::default(), Backend::Auto);
    }

    #[test]
    fn unknown_names_are_refused_exactly() {
        for bad in ["tpu", "GPU", " cpu", ""] {
            let e = bad.parse::<Backend>().unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("'{bad}' is not a backend; expected one of auto, gpu, cpu")
            );
        }
    }
}
