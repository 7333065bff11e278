//! The contract's constants as WGSL source, generated from the Rust
//! declarations and prepended to every pipeline, so the kernels and the CPU
//! engine cannot drift apart. The enums' members are iterated, so a new law,
//! kernel, thinning or policy reaches the shaders without an edit here.

use super::*;

/// WGSL `const` declarations of every shared constant and enum code.
pub fn constants() -> String {
    let mut u32s: Vec<(&str, u32)> = Vec::new();
    u32s.extend(LawKind::ALL.iter().map(|k| (k.wgsl_name(), k.code())));
    u32s.extend(Kernel::ALL.iter().map(|k| (k.wgsl_name(), k.code())));
    u32s.extend(Thinning::ALL.iter().map(|k| (k.wgsl_name(), k.code())));
    u32s.extend(
        DispatchPolicy::ALL
            .iter()
            .map(|k| (k.wgsl_name(), k.code())),
    );
    u32s.extend(Reneging::ALL.iter().map(|k| (k.wgsl_name(), k.code())));
    u32s.extend([
        ("TILE_REPS", TILE_REPS),
        ("SUM_BLOCK", SUM_BLOCK),
        ("MIN_SEGMENT_CUSTOMERS", MIN_SEGMENT_CUSTOMERS),
        ("MAX_SEGMENTS", MAX_SEGMENTS),
        ("HIST_SUB_BITS", HIST_SUB_BITS),
        ("HIST_SUB", HIST_SUB),
        ("HIST_OCTAVES", HIST_OCTAVES),
        ("HIST_OVERFLOW_BIN", HIST_OVERFLOW_BIN),
        ("HIST_BINS", HIST_BINS),
        ("HIST_WORDS_PER_BIN", HIST_WORDS_PER_BIN),
        ("GAMMA_MAX_TRIES", GAMMA_MAX_TRIES),
        ("ERLANG_DIRECT_MAX", ERLANG_DIRECT_MAX),
        ("GEOMETRIC_CAP", GEOMETRIC_CAP),
        ("MMPP_MAX_STEPS", MMPP_MAX_STEPS),
        ("STATUS_SAMPLER_BOUND", rep_status::SAMPLER_BOUND),
        ("STATUS_QUEUE_OVERFLOW", rep_status::QUEUE_OVERFLOW),
        ("DISPATCH_CAPACITY_SLACK", dispatch::CAPACITY_SLACK),
        ("DISPATCH_REBASE_SLACK", dispatch::REBASE_SLACK),
        ("DISPATCH_HEADER_WORDS", dispatch::HEADER_WORDS),
        ("MAX_CHOICES", dispatch::MAX_CHOICES),
        ("FULL_RARE", crate::rng::FULL_RARE),
    ]);
    let mut s = String::from("// Generated from src/contract/.\n");
    for (name, v) in u32s {
        s.push_str(&format!("const {name}: u32 = {v}u;\n"));
    }
    s.push_str(&format!("const HIST_MIN_EXP: i32 = {HIST_MIN_EXP};\n"));
    s.push_str(&format!(
        "const FAR_W: f32 = {:?};\n",
        crate::sampling::FAR_W
    ));
    s
}
