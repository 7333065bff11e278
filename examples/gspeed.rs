use qsweep::bench::{measure, standard_cases};
use qsweep::engine::gpu::{AdapterChoice, GpuEngine};
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let mut gpu = GpuEngine::open(&AdapterChoice::default()).unwrap();
    for c in standard_cases() {
        if !which.is_empty() && !c.name.contains(&which) { continue; }
        let b = measure(&mut gpu, &c, 1024, 50_000, 2).unwrap();
        println!("{:30} gpu {:.3e}", c.name, b);
    }
}
