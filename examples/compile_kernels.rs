//! Compiles qsweep's pipeline variants with an adapter's own driver (the
//! driver's compiler, not naga's validation alone: NVIDIA's, AMD's ACO,
//! Apple's), so a real GPU's check can say that every variant compiles
//! there; on AMD, `RADV_DEBUG=shaderstats` then logs each kernel's
//! registers, LDS and waves. (Mesa's RADV null device,
//! `RADV_FORCE_FAMILY=navi31`, lists an adapter but refuses the device that
//! wgpu asks for, in Debian's Mesa 22.3 and in 25.0 from backports alike,
//! so the ACO report needs an AMD GPU.)
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
    let choice = qsweep::engine::gpu::AdapterChoice { name: adapter };
    let (compiled, skipped) = qsweep::engine::gpu::compile_variants(&choice, &filter, &mut |v| {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "== {}", v.file);
        let _ = err.flush();
    })?;
    println!("{compiled} variants compiled, {skipped} over the adapter's limits skipped");
    Ok(())
}
