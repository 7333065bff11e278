// Peak arithmetic throughput of an adapter, for `qsweep bench`'s fraction
// of peak: sixteen independent multiply-add chains per invocation (four
// vec4s), enough to hide the latency of the arithmetic units, and nothing
// else. Each a * k + c counts as two operations, as in crates/qsweep-gpu/src/opcount.rs.
// PEAK_ITERATIONS is prepended by crates/qsweep-gpu/src/peak.rs; the loop stays under
// lavapipe's 65535 iterations per invocation.

@group(0) @binding(0) var<storage, read_write> sink: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let seed = f32(id.x) * 1e-7;
    var a = vec4<f32>(seed, seed + 0.1, seed + 0.2, seed + 0.3);
    var b = a + 0.25;
    var c = a + 0.5;
    var d = a + 0.75;
    let k = vec4<f32>(0.9999);
    let m = vec4<f32>(0.0001);
    for (var i = 0u; i < PEAK_ITERATIONS; i++) {
        a = a * k + m;
        b = b * k + m;
        c = c * k + m;
        d = d * k + m;
        a = a * k + m;
        b = b * k + m;
        c = c * k + m;
        d = d * k + m;
    }
    // Stored (never, in fact: the sum is positive) so no chain is dead code,
    // without a buffer as large as the dispatch.
    let s = dot(a + b + c + d, vec4<f32>(1.0));
    if (s == -1.0) {
        sink[0] = s;
    }
}
