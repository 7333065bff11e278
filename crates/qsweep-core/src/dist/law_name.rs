//! The closed set of law names, and what each law accepts.
//!
//! Why this module exists: a law's name is parsed once into a [`LawName`],
//! and every per-law table (the keys it takes, whether `min=`/`max=` are its
//! support, the example shown to arrival users) is an exhaustive `match` on
//! it. Adding a law is then a compile error at every place that must learn
//! about it, instead of a silent `_ =>` fallback.

use std::fmt;

/// The name of a law, as written before the parentheses: `exp`, `weibull`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LawName {
    Exp,
    Det,
    Erlang,
    Gamma,
    HyperExp,
    LogNormal,
    Weibull,
    Pareto,
    Uniform,
    Empirical,
    Mmpp,
    Trace,
}

impl LawName {
    /// Every law, in declaration order, which is the order error messages
    /// list them in. A new variant must be added here too (checked below).
    pub const ALL: [LawName; 12] = [
        LawName::Exp,
        LawName::Det,
        LawName::Erlang,
        LawName::Gamma,
        LawName::HyperExp,
        LawName::LogNormal,
        LawName::Weibull,
        LawName::Pareto,
        LawName::Uniform,
        LawName::Empirical,
        LawName::Mmpp,
        LawName::Trace,
    ];

    /// The name as the user writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            LawName::Exp => "exp",
            LawName::Det => "det",
            LawName::Erlang => "erlang",
            LawName::Gamma => "gamma",
            LawName::HyperExp => "hyperexp",
            LawName::LogNormal => "lognormal",
            LawName::Weibull => "weibull",
            LawName::Pareto => "pareto",
            LawName::Uniform => "uniform",
            LawName::Empirical => "empirical",
            LawName::Mmpp => "mmpp",
            LawName::Trace => "trace",
        }
    }

    /// The law called `name` exactly (case-sensitive), if any.
    pub fn from_name(name: &str) -> Option<LawName> {
        LawName::ALL.into_iter().find(|law| law.as_str() == name)
    }

    /// Keys the law accepts (service role), in the order error messages list them.
    pub(super) fn keys(self) -> &'static [&'static str] {
        match self {
            LawName::Exp => &["mean", "rate", "min", "max"],
            LawName::Det => &["value", "mean", "min", "max"],
            LawName::Erlang => &["k", "mean", "rate", "min", "max"],
            LawName::Gamma => &["shape", "mean", "scale", "min", "max"],
            LawName::HyperExp => &["scv", "mean", "min", "max"],
            LawName::LogNormal => &["scv", "sigma", "mean", "median", "min", "max"],
            LawName::Weibull => &["shape", "scale", "mean", "median", "min", "max"],
            LawName::Pareto => &["alpha", "min", "max"],
            LawName::Uniform => &["min", "max"],
            LawName::Empirical => &["file", "smooth", "min", "max"],
            LawName::Mmpp => &["rates", "switch"],
            LawName::Trace => &["file"],
        }
    }

    /// Whether the law is an arrival process only, never a service (or
    /// patience) law: its draws depend on the replication's past.
    pub fn is_arrival_only(self) -> bool {
        matches!(self, LawName::Mmpp | LawName::Trace)
    }

    /// Whether `min=`/`max=` are the law's support rather than clamps.
    pub(super) fn min_max_is_support(self) -> bool {
        match self {
            LawName::Pareto | LawName::Uniform => true,
            LawName::Exp
            | LawName::Det
            | LawName::Erlang
            | LawName::Gamma
            | LawName::HyperExp
            | LawName::LogNormal
            | LawName::Weibull
            | LawName::Empirical
            | LawName::Mmpp
            | LawName::Trace => false,
        }
    }

    /// Whether the law's scale comes from its support, data (empirical,
    /// trace) or (mmpp) rates
    /// rather than from a scale key, so that an arrival law must be normalized to mean 1
    /// after parsing.
    pub(super) fn is_scaled_by_support_or_data(self) -> bool {
        match self {
            LawName::Pareto
            | LawName::Uniform
            | LawName::Empirical
            | LawName::Mmpp
            | LawName::Trace => true,
            LawName::Exp
            | LawName::Det
            | LawName::Erlang
            | LawName::Gamma
            | LawName::HyperExp
            | LawName::LogNormal
            | LawName::Weibull => false,
        }
    }

    /// A valid arrival law of this name, shown when an arrival law uses a scale key.
    pub(super) fn arrival_example(self) -> &'static str {
        match self {
            LawName::Exp => "exp",
            LawName::Det => "det",
            LawName::Erlang => "erlang(k=4)",
            LawName::Gamma => "gamma(shape=0.5)",
            LawName::HyperExp => "hyperexp(scv=4)",
            LawName::LogNormal => "lognormal(scv=2)",
            LawName::Weibull => "weibull(shape=0.5)",
            LawName::Pareto => "pareto(alpha=1.5,min=1,max=100)",
            LawName::Uniform => "uniform(min=1,max=3)",
            LawName::Empirical => "empirical(file=times.txt)",
            LawName::Mmpp => "mmpp(rates=[1,9],switch=[0.1,0.1])",
            LawName::Trace => "trace(file=arrivals.txt)",
        }
    }
}

// `ALL` lists the variants in declaration order, without gaps or repeats.
const _: () = {
    let mut i = 0;
    while i < LawName::ALL.len() {
        assert!(LawName::ALL[i] as usize == i);
        i += 1;
    }
};

impl fmt::Display for LawName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every law name, in the order error messages list them.
pub const LAW_NAMES: [&str; LawName::ALL.len()] = {
    let mut names = [""; LawName::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = LawName::ALL[i].as_str();
        i += 1;
    }
    names
};
