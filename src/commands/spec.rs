//! How the subcommands that take a sweep (`run`, `analytic`, `size`) load
//! its spec: the error names what a run without a spec file took from the
//! built-in study.

use qsweep_core::output::num;
use qsweep_core::spec::{Spec, SweepArgs, SEED_SOURCE};

/// [`Spec::load`], whose error, when flags were given without a spec file,
/// names what came from the built-in study (issue 26: `--servers 10
/// --service 'exp(rate=1)'` was refused as unstable at the study's λ = 150
/// without saying where 150 came from). `skip`: axes not used (the one
/// `size` searches).
pub(super) fn load_spec(
    args: &SweepArgs,
    skip: &[&str],
) -> Result<Spec, qsweep_core::spec::SpecError> {
    Spec::load(args).map_err(|e| match inherited(args, skip) {
        Some(what) => qsweep_core::spec::SpecError(format!(
            "{e} (with no spec file, {what} came from the built-in study {SEED_SOURCE}: give \
             them as flags, or write a spec)"
        )),
        None => e,
    })
}

/// The axes a run without a spec file takes from the built-in study, with
/// their values (`lambda = 150`), when some axes were given as flags.
fn inherited(args: &SweepArgs, skip: &[&str]) -> Option<String> {
    if args.spec.is_some() || args.spec_text.is_some() {
        return None;
    }
    let a = &args.axes;
    let given = [
        &a.routing, &a.choices, &a.routers, &a.servers, &a.workers, &a.arrival, &a.lambda, &a.rho,
        &a.service,
    ];
    if given.iter().all(|v| v.is_empty()) {
        return None;
    }
    let seed = Spec::load(&SweepArgs::default()).ok()?;
    let join = |v: Vec<String>| v.join(", ");
    let mut parts = Vec::new();
    let mut add = |name: &str, empty: bool, value: String| {
        if empty && !skip.contains(&name) {
            parts.push(format!("{name} = {value}"));
        }
    };
    add(
        "routing",
        a.routing.is_empty(),
        join(seed.routing.iter().map(|r| r.to_string()).collect()),
    );
    add(
        "servers",
        a.servers.is_empty(),
        join(seed.servers.iter().map(|r| r.to_string()).collect()),
    );
    add(
        "lambda",
        a.lambda.is_empty() && a.rho.is_empty(),
        join(seed.load.iter().map(|l| num(l.value())).collect()),
    );
    add(
        "service",
        a.service.is_empty(),
        join(seed.service.iter().map(|s| s.text().to_string()).collect()),
    );
    (!parts.is_empty()).then(|| parts.join("; "))
}
