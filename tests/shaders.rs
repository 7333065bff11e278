//! Every WGSL kernel parses and validates with naga (the compiler wgpu
//! uses), so a broken shader fails `cargo test` on any machine, GPU or not.

use qsweep::engine::gpu::kernel_sources;

#[test]
fn every_kernel_validates() {
    let sources = kernel_sources();
    assert!(sources.len() >= 2);
    for (name, source) in sources {
        let module = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
            panic!("{name}.wgsl does not parse:\n{}", e.emit_to_string(&source))
        });
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap_or_else(|e| {
            panic!(
                "{name}.wgsl does not validate:\n{}",
                e.emit_to_string(&source)
            )
        });
        assert!(
            module.entry_points.iter().any(|e| e.name == "main"),
            "{name}: no entry point main"
        );
    }
}

#[test]
fn workgroup_memory_fits_the_default_limit() {
    // WebGPU guarantees 16 KiB of workgroup memory; the wait histogram must fit.
    let bytes = qsweep::contract::HIST_BINS * 4;
    assert!(bytes <= 16_384, "{bytes} bytes of workgroup histograms");
}
