//! `qsweep size --dry-run`: the cases, how each target is judged, and the
//! time of one simulated evaluation, with nothing simulated or written.

use anyhow::Result;

use qsweep_core::engine::cpu::CpuEngine;
use qsweep_core::engine::Engine;
use qsweep_core::output;
use qsweep_core::progress;
use qsweep_core::run::estimate;
use qsweep_core::spec::Spec;

use super::SizeArgs;

/// `qsweep size --dry-run`: the cases, how each target is judged, and the
/// time of one simulated evaluation at the first stable fleet.
pub(super) fn dry_run(
    args: &SizeArgs,
    spec: &Spec,
    cases: &[qsweep_core::size::Case],
    targets: &[qsweep_core::size::Target],
    engine: &mut dyn Engine,
    label: &str,
) -> Result<()> {
    let mut out = format!(
        "qsweep size --dry-run: nothing simulated, nothing written\n{} case(s) × {} target(s); \
         each evaluation: {} replications × {} customers (+{} warm-up)\n",
        cases.len(),
        targets.len(),
        spec.run.reps,
        spec.run.customers,
        if spec.run.warmup_auto {
            "auto".to_string()
        } else {
            spec.run.warmup.to_string()
        }
    );
    let mut total = 0.0;
    for case in cases {
        let at = case.at(case.first);
        let points = at.points();
        let base = qsweep_core::run::baseline(&points[0]);
        let judged: Vec<String> = targets
            .iter()
            .map(|t| match t.metric.exact(&base).filter(|_| !args.simulate) {
                Some(_) => format!("{t}: exact ({})", base.method),
                None => format!("{t}: simulated"),
            })
            .collect();
        let simulated = judged.iter().any(|j| j.ends_with("simulated"));
        let mut line = format!(
            "  {}: from {}={} (the first stable); {}",
            case.describe(spec),
            case.over.name(),
            case.first,
            judged.join(", ")
        );
        if simulated {
            let (prepared, table) = qsweep_core::run::prepare(&at, points);
            let cal = estimate::calibrate(engine, &prepared, &table)?;
            let shape = estimate::Shape::of(label, CpuEngine::new(spec.run.threads).threads);
            let est = estimate::calibrated_estimate(&prepared, spec.run.reps, shape, &cal);
            // About 2·log2(R*) evaluations, shared by the case's targets;
            // larger fleets cost more for the whole-system policies.
            let evals = 2.0 * f64::from(case.first.max(2)).log2() + 4.0;
            total += evals * est.seconds;
            line.push_str(&format!(
                "; one evaluation at {}={}: about {} ({:.3e} customers); about {evals:.0} \
                 evaluations",
                case.over.name(),
                case.first,
                progress::duration(est.seconds),
                est.customers
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!(
        "estimated time: about {} on {label} (evaluations at larger fleets cost more for jsq, \
         pod, jiq, lwl and routers > 1); each is saved as it finishes, and --resume continues \
         a stopped search\n",
        progress::duration(total)
    ));
    output::to_stdout(out)
}
