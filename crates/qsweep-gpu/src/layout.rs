//! Rust twins of the WGSL structs in `shaders/common.wgsl` that only the GPU
//! engine sizes or fills: the per-pass uniform [`DispatchInfo`] and a
//! replication's saved state [`LaneState`]. (The structs both engines share,
//! `Law`, `PointParams`, `Tile` and `RepResult`, are in `contract`.)
//!
//! The tests parse the WGSL as it is compiled and check, with naga's layout
//! rules, that every twin matches its declaration field for field.

use bytemuck::{Pod, Zeroable};

/// Which part of the batch one pass covers (`DispatchInfo` in common.wgsl,
/// bound at `@binding(5)`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DispatchInfo {
    /// First tile of the pass, in the batch's (reordered) tile array.
    pub tile_offset: u32,
    pub tiles: u32,
    /// Workgroups along x (a workgroup's tile is `x + y * groups_x`).
    pub groups_x: u32,
    /// `tiles × TILE_REPS`: replications in the pass.
    pub lanes: u32,
    /// The pass simulates customers `[begin, end)` of each replication.
    pub begin: u32,
    pub end: u32,
    /// 1: replications spread over several invocations where they can
    /// (`SegmentLayout::SideBySide`: one-server segments, large central
    /// queues' servers); 0: one invocation per replication.
    pub side_by_side: u32,
    pub _pad1: u32,
}

/// A replication's state between passes (`LaneState` in common.wgsl, bound
/// at `@binding(7)`): its stream, its recorder and the kernel's variables.
/// Only the kernels read and write it; the host sizes the buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LaneState {
    pub rng: [u32; 4],
    /// Kahan sums of wait, sojourn, service, interarrival.
    pub sums: [f32; 4],
    /// Their compensations.
    pub carry: [f32; 4],
    /// The current block's plain sums.
    pub block: [f32; 4],
    /// The Kahan sums of the replication's segments done.
    pub done: [f32; 4],
    /// The current segment's map (`seg_map` in lindley.wgsl).
    pub seg_map: [f32; 4],
    /// The recorder's counts of waits above each `slo` threshold.
    pub exceed: [u32; 4],
    /// Kernel variables: Lindley (wait, previous service); Kiefer–Wolfowitz
    /// (time since the epoch, customers since the last rebase).
    pub x: f32,
    pub y: f32,
    pub since_rebase: u32,
    pub status: u32,
    pub in_block: u32,
    pub waited: u32,
    pub recorded: u32,
    pub max_wait: f32,
    pub max_sojourn: f32,
    /// The recorder's requests lost to their patience or refused.
    pub lost: u32,
    /// Kiefer–Wolfowitz under a capacity: the ring slot of the oldest
    /// start time kept (`ring_head` in common.wgsl).
    pub ring_head: u32,
    /// An MMPP arrival stream's phase (`arrival_state` in sampling.wgsl,
    /// `Sampler::phase` on the CPU).
    pub arrival_state: u32,
}

/// Bytes of one replication's [`LaneState`].
pub(super) const LANE_STATE_BYTES: u64 = std::mem::size_of::<LaneState>() as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Specialization;
    use qsweep_core::contract::{Kernel, Law, PointParams, RepResult, Tile};
    use std::mem::{offset_of, size_of};

    /// A struct's layout: its size and, per field, name, offset and size.
    #[derive(Debug, PartialEq)]
    struct Layout {
        size: u32,
        fields: Vec<(String, u32, u32)>,
    }

    /// The layout of Rust struct `$ty`, whose fields must all be listed.
    macro_rules! rust_layout {
        ($ty:ty { $($field:ident),+ $(,)? }) => {{
            let zero = <$ty as Zeroable>::zeroed();
            Layout {
                size: size_of::<$ty>() as u32,
                fields: vec![$((
                    stringify!($field).to_string(),
                    offset_of!($ty, $field) as u32,
                    std::mem::size_of_val(&zero.$field) as u32,
                )),+],
            }
        }};
    }

    /// The layout of WGSL struct `name` in `module`, under WGSL's rules
    /// (naga's `Layouter`), with its array stride as its size: what a
    /// buffer of them holds per element.
    fn wgsl_layout(module: &naga::Module, name: &str) -> Layout {
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).unwrap();
        let (handle, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no struct {name} in the WGSL"));
        let naga::TypeInner::Struct { members, .. } = &ty.inner else {
            panic!("{name} is not a struct");
        };
        Layout {
            size: layouter[handle].to_stride(),
            fields: members
                .iter()
                .map(|m| {
                    (
                        m.name.clone().unwrap_or_default(),
                        m.offset,
                        layouter[m.ty].size,
                    )
                })
                .collect(),
        }
    }

    /// Every pipeline's WGSL (the generated constants, common.wgsl, ... as
    /// `Specialization::source` assembles them), parsed.
    fn modules() -> Vec<(Kernel, naga::Module)> {
        Kernel::ALL
            .iter()
            .map(|&kernel| {
                let source = Specialization::plain(kernel).source(crate::HeapMemory::Workgroup);
                let module = naga::front::wgsl::parse_str(&source)
                    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(&source)));
                (kernel, module)
            })
            .collect()
    }

    #[test]
    fn rust_twins_match_the_wgsl_structs() {
        let twins = [
            (
                "Law",
                rust_layout!(Law {
                    kind,
                    n,
                    offset,
                    _pad0,
                    p,
                    scale,
                    lo,
                    hi,
                    _pad1
                }),
            ),
            (
                "PointParams",
                rust_layout!(PointParams {
                    arrival,
                    service,
                    kernel,
                    thinning,
                    servers,
                    route_n,
                    customers,
                    warmup,
                    seed_lo,
                    seed_hi,
                    point_index,
                    inv_hist_scale,
                    choices,
                    routers,
                    ln_keep,
                    capacity,
                    reneging,
                    system_limit,
                    slo,
                    patience,
                    fleet_end,
                    fleet_time,
                    fleet_pick,
                    fleet_classes,
                    rep_sections,
                    _pad,
                }),
            ),
            (
                "Tile",
                rust_layout!(Tile {
                    param_index,
                    hist_slot,
                    rep_start,
                    rep_count
                }),
            ),
            (
                "RepResult",
                rust_layout!(RepResult {
                    mean_wait,
                    mean_sojourn,
                    p_wait,
                    max_wait,
                    max_sojourn,
                    mean_service,
                    mean_interarrival,
                    customers,
                    status,
                    max_in_system,
                    exceed,
                    lost,
                    class_wait,
                    class_served,
                }),
            ),
            (
                "DispatchInfo",
                rust_layout!(DispatchInfo {
                    tile_offset,
                    tiles,
                    groups_x,
                    lanes,
                    begin,
                    end,
                    side_by_side,
                    _pad1
                }),
            ),
            (
                "LaneState",
                rust_layout!(LaneState {
                    rng,
                    sums,
                    carry,
                    block,
                    done,
                    seg_map,
                    exceed,
                    x,
                    y,
                    since_rebase,
                    status,
                    in_block,
                    waited,
                    recorded,
                    max_wait,
                    max_sojourn,
                    lost,
                    ring_head,
                    arrival_state,
                }),
            ),
        ];
        for (kernel, module) in modules() {
            for (name, rust) in &twins {
                assert_eq!(
                    &wgsl_layout(&module, name),
                    rust,
                    "{name}: WGSL (left, {kernel:?} pipeline) and Rust (right) differ"
                );
            }
        }
    }
}
