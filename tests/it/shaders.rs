//! Every pipeline variant the GPU engine can compile (`every_variant`, the
//! sources `qsweep kernels` writes) parses and validates with naga, the
//! compiler wgpu uses, and translates to each back end wgpu has: SPIR-V
//! (Vulkan), GLSL ES (GL), MSL (Metal) and HLSL (DX12). Where the Khronos
//! validators are installed (`spirv-val`, `glslangValidator`; Debian's
//! spirv-tools and glslang-tools, which `.ci/run` installs and requires
//! with `QSWEEP_REQUIRE_VALIDATORS=1`), each SPIR-V module and GLSL shader
//! is also checked by them, so naga's output is judged by a second
//! compiler. Browsers' WGSL compiler (Tint) checks the same files in
//! `.ci/tint/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use qsweep_gpu::{every_variant, resource_needs, HeapMemory, KernelVariant};

fn parse_and_validate(v: &KernelVariant) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(&v.source).unwrap_or_else(|e| {
        panic!(
            "{} does not parse:\n{}",
            v.file,
            e.emit_to_string(&v.source)
        )
    });
    // No optional capabilities: what every WebGPU device accepts.
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| {
        panic!(
            "{} does not validate:\n{}",
            v.file,
            e.emit_to_string(&v.source)
        )
    });
    (module, info)
}

/// Bounds checks as wgpu-hal asks of naga on a device without robust
/// buffer access (the most code a driver sees): indices clamped.
fn policies() -> naga::proc::BoundsCheckPolicies {
    naga::proc::BoundsCheckPolicies {
        index: naga::proc::BoundsCheckPolicy::Restrict,
        buffer: naga::proc::BoundsCheckPolicy::Restrict,
        ..Default::default()
    }
}

/// The variant's SPIR-V words, GLSL ES 3.10 compute shader, MSL and HLSL.
fn translate(v: &KernelVariant) -> (Vec<u32>, String, String, String) {
    let (module, info) = parse_and_validate(v);
    let spv_options = naga::back::spv::Options {
        bounds_check_policies: policies(),
        ..Default::default()
    };
    let spv = naga::back::spv::write_vec(
        &module,
        &info,
        &spv_options,
        Some(&naga::back::spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: "main".into(),
        }),
    )
    .unwrap_or_else(|e| panic!("{}: SPIR-V: {e}", v.file));

    let mut glsl = String::new();
    let glsl_options = naga::back::glsl::Options {
        version: naga::back::glsl::Version::new_gles(310),
        ..Default::default()
    };
    let glsl_pipeline = naga::back::glsl::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: "main".into(),
        multiview: None,
    };
    naga::back::glsl::Writer::new(
        &mut glsl,
        &module,
        &info,
        &glsl_options,
        &glsl_pipeline,
        policies(),
    )
    .and_then(|mut w| w.write())
    .unwrap_or_else(|e| panic!("{}: GLSL: {e}", v.file));

    let msl_options = naga::back::msl::Options {
        lang_version: (2, 1),
        bounds_check_policies: policies(),
        ..Default::default()
    };
    let (msl, _) = naga::back::msl::write_string(
        &module,
        &info,
        &msl_options,
        &naga::back::msl::PipelineOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{}: MSL: {e}", v.file));

    let hlsl_options = naga::back::hlsl::Options {
        shader_model: naga::back::hlsl::ShaderModel::V5_1,
        ..Default::default()
    };
    let hlsl_pipeline = naga::back::hlsl::PipelineOptions::default();
    let mut hlsl = String::new();
    naga::back::hlsl::Writer::new(&mut hlsl, &hlsl_options, &hlsl_pipeline)
        .write(&module, &info, None)
        .unwrap_or_else(|e| panic!("{}: HLSL: {e}", v.file));
    (spv, glsl, msl, hlsl)
}

/// Runs `f` over `items` on every core, in order of completion.
fn on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a translation thread panicked"))
            .collect()
    })
}

#[test]
fn every_variant_validates_with_its_entry_point_and_needs() {
    let variants = every_variant();
    assert!(variants.len() > 1000, "{} variants", variants.len());
    on_all_cores(&variants, |v| {
        let (module, _) = parse_and_validate(v);
        assert!(
            module.entry_points.iter().any(|e| e.name == "main"),
            "{}: no entry point main",
            v.file
        );
        let needs = resource_needs(&v.source).unwrap();
        // WebGPU's baseline (wgpu::Limits::default()) holds every kernel
        // except a 64-server heap in workgroup memory, which the engine puts
        // there only on adapters with room for it.
        let defaults = wgpu::Limits::default();
        let big_heap = v.memory == HeapMemory::Workgroup
            && v.spec.is_some_and(|s| {
                HeapMemory::for_adapter(
                    s.fast_heap,
                    defaults.max_compute_workgroup_storage_size,
                    HeapMemory::Workgroup,
                ) != HeapMemory::Workgroup
            });
        if !big_heap {
            assert!(
                needs.shortfalls(&defaults).is_empty(),
                "{}: {:?}",
                v.file,
                needs.shortfalls(&defaults)
            );
        }
    });
}

/// `tool` on PATH, or `None` (its checks skipped, and said so) unless
/// `QSWEEP_REQUIRE_VALIDATORS=1` makes its absence a failure.
fn validator(tool: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(tool))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        if std::env::var("QSWEEP_REQUIRE_VALIDATORS").is_ok_and(|v| v == "1") {
            panic!("QSWEEP_REQUIRE_VALIDATORS=1 but {tool} is not on PATH");
        }
        eprintln!(
            "SKIPPED {tool} checks: {tool} is not on PATH (Debian: spirv-tools, glslang-tools)"
        );
    }
    found
}

fn run_tool(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_variant_translates_to_spirv_glsl_msl_and_hlsl_and_the_khronos_validators_accept_them() {
    let variants = every_variant();
    let spirv_val = validator("spirv-val");
    let glslang = validator("glslangValidator");
    let dir = tempfile::tempdir().unwrap();
    let failures: Vec<String> = on_all_cores(&variants, |v| {
        let (spv, glsl, msl, hlsl) = translate(v);
        assert!(msl.contains("kernel void"), "{}: no MSL kernel", v.file);
        assert!(
            hlsl.contains("[numthreads("),
            "{}: no HLSL numthreads",
            v.file
        );
        let stem = v.file.trim_end_matches(".wgsl");
        let mut errors = Vec::new();
        if let Some(tool) = &spirv_val {
            let path = dir.path().join(format!("{stem}.spv"));
            std::fs::write(&path, bytemuck::cast_slice::<u32, u8>(&spv)).unwrap();
            if let Err(e) = run_tool(
                tool,
                &[
                    "--target-env".as_ref(),
                    "vulkan1.0".as_ref(),
                    path.as_os_str(),
                ],
            ) {
                errors.push(format!("spirv-val {}: {e}", v.file));
            }
        }
        if let Some(tool) = &glslang {
            let path = dir.path().join(format!("{stem}.comp"));
            std::fs::write(&path, &glsl).unwrap();
            if let Err(e) = run_tool(tool, &[path.as_os_str()]) {
                errors.push(format!("glslangValidator {}: {e}", v.file));
            }
        }
        errors
    })
    .into_iter()
    .flatten()
    .collect();
    eprintln!(
        "{} variants translated to SPIR-V, GLSL, MSL and HLSL; spirv-val {}, glslangValidator {}",
        variants.len(),
        if spirv_val.is_some() {
            "ran"
        } else {
            "skipped"
        },
        if glslang.is_some() { "ran" } else { "skipped" },
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn workgroup_memory_fits_the_default_limit() {
    // WebGPU guarantees 16 KiB of workgroup memory; the wait histogram must fit.
    let bytes = qsweep_core::contract::HIST_BINS * 4;
    assert!(bytes <= 16_384, "{bytes} bytes of workgroup histograms");
}
