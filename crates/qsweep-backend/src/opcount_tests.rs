//! `qsweep_gpu::opcount` on the standard cases (which live here, in
//! `bench`: so these tests do too).

use qsweep_gpu::opcount::ops_per_customer;
use qsweep_gpu::{HeapMemory, Specialization};

use crate::bench::standard_cases;

fn count(name: &str) -> f64 {
    let case = standard_cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap();
    let source = Specialization::of(&case.params).source(HeapMemory::Workgroup);
    ops_per_customer(&source, &case.params).unwrap()
}

#[test]
fn counts_grow_with_the_work_a_customer_costs() {
    let mm1 = count("random M/M/1");
    let weibull = count("random M/G/1 weibull(0.46)");
    let rr = count("round_robin E51/M/1");
    let mm51 = count("central M/M/51");
    let mm1000 = count("central M/M/1000");
    eprintln!("ops/customer: M/M/1 {mm1}, Weibull {weibull}, E51/M/1 {rr}, M/M/51 {mm51}, M/M/1000 {mm1000}");
    // Two uniforms, two logs (Cephes polynomials of ~30 operations each,
    // not a driver's builtin), the Lindley step and the recorder: a few
    // hundred operations, not ten and not thousands.
    assert!((100.0..400.0).contains(&mm1), "M/M/1: {mm1}");
    // Weibull adds a log, an exp and a multiply to the service draw.
    assert!(weibull > mm1 + 2.0, "{weibull} vs {mm1}");
    // Round robin draws each arrival as a gamma(51) (Marsaglia–Tsang:
    // a normal quantile, a cube, two logs) instead of one exponential.
    assert!(rr > mm1 + 20.0 && rr < 4.0 * mm1, "{rr} vs {mm1}");
    // The heap sift walks floor(log2 c) levels: 5 for 51 servers, 9 for 1000.
    let per_level = (mm1000 - mm51) / 4.0;
    assert!(per_level > 4.0 && per_level < 40.0, "{mm51} {mm1000}");
    assert!(mm51 > mm1, "{mm51} vs {mm1}");
}
