use qsweep::bench::standard_cases;
use qsweep::engine::cpu::CpuEngine;
use qsweep::engine::schedule::tiles_for_point;
use qsweep::engine::{Batch, Engine};
fn cpu_time() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap();
    let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let mut cpu = CpuEngine::new(1);
    for c in standard_cases() {
        if !which.is_empty() && !c.name.contains(&which) {
            continue;
        }
        let cust: u32 = std::env::var("CUST")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200_000);
        let mut p = c.params;
        p.customers = cust;
        let params = [p];
        let (tiles, slots) = tiles_for_point(0, 64, 0);
        let batch = Batch {
            params: &params,
            tiles: &tiles,
            table: &c.table,
            slots,
        };
        let t0 = cpu_time();
        cpu.run(&batch).unwrap();
        let dt = cpu_time() - t0;
        println!(
            "{:30} cpu 1-thread {:.3e} customers per cpu-second",
            c.name,
            64.0 * cust as f64 / dt
        );
    }
}
