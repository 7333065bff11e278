//! The fixed sets the engines branch on — laws, kernels, thinnings and
//! dispatch policies — as exhaustive enums.
//!
//! Each set is declared once, by [`wire_enum!`]: the enum, its `u32` code in
//! the `Pod` records ([`super::PointParams`], [`super::Law`]), the name of the
//! WGSL constant the shaders compare against (generated into every pipeline
//! by [`super::wgsl::constants`]) and `TryFrom<u32>`. Code that branches on a
//! set matches on the enum without a `_` arm, so adding a member fails to
//! compile until every site handles it; `u32` appears only in the records.

/// A `u32` read from a record that names no member of its set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{code} is not a {set} code")]
pub struct UnknownCode {
    pub set: &'static str,
    pub code: u32,
}

/// Declares a set encoded as `u32` at the engine boundary (see the module
/// docs): `Variant = code => "WGSL_CONSTANT"`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal => $wgsl:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $code, )+
        }

        impl $name {
            /// Every member, in code order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The member's code in the `Pod` records.
            #[inline(always)]
            pub const fn code(self) -> u32 {
                self as u32
            }

            /// The WGSL constant holding [`Self::code`].
            pub const fn wgsl_name(self) -> &'static str {
                match self {
                    $($name::$variant => $wgsl,)+
                }
            }

            /// The member with code `code`, if any.
            #[inline(always)]
            pub const fn from_code(code: u32) -> Option<$name> {
                match code {
                    $($code => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl From<$name> for u32 {
            #[inline(always)]
            fn from(v: $name) -> u32 {
                v as u32
            }
        }

        impl TryFrom<u32> for $name {
            type Error = UnknownCode;
            #[inline(always)]
            fn try_from(code: u32) -> Result<Self, UnknownCode> {
                $name::from_code(code).ok_or(UnknownCode {
                    set: stringify!($name),
                    code,
                })
            }
        }
    };
}

wire_enum! {
    /// A sampling law's family (see [`super::Law`] for its parameters and
    /// `shaders/sampling.wgsl` for the draws).
    pub enum LawKind {
        Exp = 0 => "LAW_EXP",
        Det = 1 => "LAW_DET",
        Erlang = 2 => "LAW_ERLANG",
        Gamma = 3 => "LAW_GAMMA",
        HyperExp = 4 => "LAW_HYPEREXP",
        LogNormal = 5 => "LAW_LOGNORMAL",
        Weibull = 6 => "LAW_WEIBULL",
        Pareto = 7 => "LAW_PARETO",
        Uniform = 8 => "LAW_UNIFORM",
        Empirical = 9 => "LAW_EMPIRICAL",
        /// A two-phase Markov-modulated Poisson process: an arrival law
        /// only, and the one law whose draws depend on the replication's
        /// past (its phase, kept beside the stream).
        Mmpp = 10 => "LAW_MMPP",
        /// A replayed trace of interarrival gaps (in the table, in file
        /// order): an arrival law only, whose draws follow the replication's
        /// position in the trace.
        Trace = 11 => "LAW_TRACE",
    }
}

impl LawKind {
    /// Whether draws of this law depend on the replication's earlier draws
    /// (a non-renewal arrival stream: MMPP keeps its phase between
    /// interarrivals, a trace its position). Such a replication runs as one segment, and no sum
    /// of its draws may be taken in closed form.
    #[inline(always)]
    pub const fn is_stateful(self) -> bool {
        matches!(self, LawKind::Mmpp | LawKind::Trace)
    }
}

wire_enum! {
    /// Which recursion simulates a point.
    pub enum Kernel {
        /// One FIFO server: Lindley's recursion, all state in registers.
        Lindley = 0 => "KERNEL_LINDLEY",
        /// `servers` FCFS servers behind one queue: Kiefer–Wolfowitz workload
        /// recursion with a binary heap of free-at times.
        KieferWolfowitz = 1 => "KERNEL_KIEFER_WOLFOWITZ",
        /// The whole system of `servers` FIFO servers behind one or more
        /// routers that dispatch each arrival on what they know
        /// (`engine::cpu::dispatch`, `shaders/dispatch.wgsl`). Encoding:
        /// `thinning` = [`Thinning::None`] (the kernel sees every arrival),
        /// `servers` = R, `route_n` = the [`DispatchPolicy`], `choices` and
        /// `routers` as documented on [`PointParams`](super::PointParams).
        Dispatch = 2 => "KERNEL_DISPATCH",
    }
}

wire_enum! {
    /// How the simulated queue's arrivals derive from the whole system's
    /// stream.
    pub enum Thinning {
        /// The queue sees every arrival (central queue).
        None = 0 => "THIN_NONE",
        /// Each arrival joins this queue with probability 1/`route_n`
        /// (random routing).
        Random = 1 => "THIN_RANDOM",
        /// The queue sees every `route_n`-th arrival (round robin).
        EveryNth = 2 => "THIN_EVERY_NTH",
    }
}

wire_enum! {
    /// Dispatch policies of [`Kernel::Dispatch`] (held in `route_n`).
    pub enum DispatchPolicy {
        /// Join the server with the fewest requests present, ties at random.
        Jsq = 0 => "DISPATCH_JSQ",
        /// Sample `choices` distinct servers, join the one with the fewest
        /// present.
        Pod = 1 => "DISPATCH_POD",
        /// Join a random idle server if there is one, else a random server.
        Jiq = 2 => "DISPATCH_JIQ",
        /// Join the server whose queue empties first (= a central FCFS queue).
        Lwl = 3 => "DISPATCH_LWL",
        /// `routers` > 1 routers, each with its own FCFS queue, dispatching to
        /// servers where it has no request of its own.
        Central = 4 => "DISPATCH_CENTRAL",
        /// Mixed fleets: a server uniformly at random (one word).
        Random = 5 => "DISPATCH_RANDOM",
        /// Mixed fleets: a class with probability proportional to its
        /// share of the speed (one word), a server of it uniformly (one
        /// word).
        Weighted = 6 => "DISPATCH_WEIGHTED",
        /// Mixed fleets: one central FCFS queue, each request to the first
        /// server free, the fastest idle one when several are.
        FirstFree = 7 => "DISPATCH_FIRST_FREE",
    }
}

impl DispatchPolicy {
    /// Whether the policy decides on the servers' free-at times alone (or
    /// none of the state): no departure heap, no counts, no overflow.
    pub fn free_times_only(self) -> bool {
        matches!(
            self,
            DispatchPolicy::Lwl
                | DispatchPolicy::Random
                | DispatchPolicy::Weighted
                | DispatchPolicy::FirstFree
        )
    }
}

wire_enum! {
    /// What a request's patience ([`PointParams::patience`](super::PointParams::patience))
    /// does (held in `PointParams::reneging`; the `reneging` setting).
    pub enum Reneging {
        /// No patience: the plain queue.
        None = 0 => "RENEGING_NONE",
        /// The request is served whatever its wait, and counted as timed out
        /// when its wait exceeded its patience (a router's timeout: the
        /// client got an error while the server still did the work).
        Timeout = 1 => "RENEGING_TIMEOUT",
        /// The request leaves when its patience runs out and takes no
        /// service: under FCFS it never joins when its wait would exceed its
        /// patience, and no later request waits for it.
        Abandon = 2 => "RENEGING_ABANDON",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: Copy + PartialEq + std::fmt::Debug + TryFrom<u32> + Into<u32>>(all: &[T]) {
        for (i, &v) in all.iter().enumerate() {
            let code: u32 = v.into();
            assert_eq!(code, i as u32, "codes are dense and in order");
            assert_eq!(T::try_from(code).ok(), Some(v));
        }
        assert!(T::try_from(all.len() as u32).is_err());
    }

    #[test]
    fn codes_round_trip() {
        round_trips(LawKind::ALL);
        round_trips(Kernel::ALL);
        round_trips(Thinning::ALL);
        round_trips(DispatchPolicy::ALL);
        assert_eq!(
            LawKind::try_from(99).unwrap_err().to_string(),
            "99 is not a LawKind code"
        );
    }

    /// The WGSL twin of [`LawKind::is_stateful`] (`law_is_stateful` in
    /// sampling.wgsl, which keeps such a one-server replication in one
    /// segment) names exactly the stateful kinds.
    #[test]
    fn the_wgsl_twin_of_is_stateful_names_the_same_kinds() {
        let source = include_str!("../../../../shaders/sampling.wgsl");
        let start = source
            .find("fn law_is_stateful(")
            .expect("sampling.wgsl defines law_is_stateful");
        let body = &source[start..start + source[start..].find('}').unwrap()];
        for &kind in LawKind::ALL {
            let named = body.contains(&format!("kind == {}", kind.wgsl_name()));
            assert_eq!(named, kind.is_stateful(), "{kind:?} in {body}");
        }
    }
}
