//! Compiles qsweep's pipeline variants with an adapter's own driver (the
//! driver's compiler, not naga's validation alone: NVIDIA's, AMD's ACO,
//! Apple's), so a real GPU's check can say that every variant compiles
//! there; on AMD, `RADV_DEBUG=shaderstats,nocache` then logs each kernel's
//! registers, LDS and waves. (Without an AMD GPU, `scripts/aco-report.sh`
//! gets the same report from Mesa's RADV null device through a small Vulkan
//! program: that device compiles pipelines but cannot create the fences and
//! timeline semaphores a wgpu device needs, so this example cannot open it.)
//!
//! `cargo run --release --example compile_kernels -- [FILTER] [--adapter NAME]`:
//! the variants whose file name contains FILTER (all by default); each name
//! is printed to stderr, as `== NAME`, before the driver compiles it.

use std::io::Write;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut filter, mut adapter) = (String::new(), None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--adapter" => adapter = args.next(),
            _ => filter = a,
        }
    }
    let choice = qsweep_gpu::AdapterChoice { name: adapter };
    let (compiled, skipped) = qsweep_gpu::compile_variants(&choice, &filter, &mut |v| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "== {}", v.file);
        let _ = err.flush();
    })?;
    println!("{compiled} variants compiled, {skipped} over the adapter's limits skipped");
    Ok(())
}
