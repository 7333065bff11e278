//! Unit tests of the analytic baselines.
//!
//! Why this file exists: it keeps the module files short; the tests check
//! each formula against independent derivations (direct sums, Volterra
//! integration, closed forms) and the decision tree's labels.

use super::mg1::Md1Table;
use super::*;

fn law(family: Family, mean: f64, scv: f64) -> LawMoments {
    LawMoments {
        family,
        mean,
        scv,
        clamped: false,
    }
}

fn exp_law(mean: f64) -> LawMoments {
    law(Family::Exp, mean, 1.0)
}

fn input(
    policy: Policy,
    servers: u32,
    workers: u32,
    lambda: f64,
    service: LawMoments,
) -> QueueInput {
    QueueInput {
        policy,
        servers,
        workers,
        lambda,
        arrival: exp_law(1.0 / lambda),
        service,
    }
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Erlang C by the textbook direct sum (\[GH\] ch. 2; \[Kleinrock\] ch. 3):
/// C = T_c c/(c-a) / (sum_{k<c} T_k + T_c c/(c-a)), T_k = a^k/k!,
/// with T_k built by T_k = T_{k-1} a/k (independent of the Erlang B path).
fn erlang_c_direct(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    let last = term * f64::from(c) / (f64::from(c) - a);
    last / (sum + last)
}

#[test]
fn erlang_c_exact_rationals() {
    // Direct formula by hand: c=2, a=1: T = 1, 1, 1/2*2/(2-1) = 1 -> 1/3.
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-15);
    // c=3, a=2: T = 1, 2, 2, (8/6)*3/(3-2) = 4 -> 4/9.
    assert!((erlang_c(3, 2.0) - 4.0 / 9.0).abs() < 1e-15);
    // c=1: C = rho.
    assert!((erlang_c(1, 0.7) - 0.7).abs() < 1e-15);
    // Erlang B, c=2, a=1: (1/2) / (1 + 1 + 1/2) = 1/5.
    assert!((erlang_b(2, 1.0) - 0.2).abs() < 1e-15);
}

#[test]
fn erlang_c_against_direct_sum() {
    // c=10, a=8: the commonly tabulated value is 0.409.
    let c10 = erlang_c(10, 8.0);
    assert!(rel_close(c10, erlang_c_direct(10, 8.0), 1e-12), "{c10}");
    assert!((c10 - 0.4092).abs() < 5e-4, "{c10}");
    for &(c, a) in &[
        (5, 4.5),
        (20, 15.0),
        (51, 50.0),
        (60, 50.0),
        (100, 50.0),
        (200, 190.0),
    ] {
        let x = erlang_c(c, a);
        let y = erlang_c_direct(c, a);
        assert!(rel_close(x, y, 1e-11), "c={c} a={a}: {x} vs {y}");
    }
    // Edge cases.
    assert_eq!(erlang_c(4, 4.0), 1.0);
    assert_eq!(erlang_c(4, 0.0), 0.0);
    assert_eq!(erlang_c(0, 1.0), 1.0);
}

/// Standard normal CDF via erfc (W. J. Cody-style rational approximation
/// replaced by Abramowitz & Stegun 7.1.26, |error| < 1.5e-7) -- test only.
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / 2f64.sqrt();
    let t = 1.0 / (1.0 + 0.3275911 * z);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

#[test]
fn erlang_c_huge_c_is_stable_and_monotone() {
    let c = 100_000;
    let a = 0.999 * f64::from(c);
    let x = erlang_c(c, a);
    assert!(x.is_finite() && x > 0.0 && x < 1.0, "{x}");
    // Halfin & Whitt (1981): C ~ 1 / (1 + beta Phi(beta)/phi(beta)),
    // beta = (1 - rho) sqrt(c); at beta = 0.316 the limit is ~0.658.
    let beta = 0.001 * f64::from(c).sqrt();
    let phi = (-0.5 * beta * beta).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let hw = 1.0 / (1.0 + beta * normal_cdf(beta) / phi);
    assert!((x - hw).abs() < 0.01, "{x} vs Halfin-Whitt {hw}");
    // Increasing in the load at fixed c.
    let mut prev = 0.0;
    for rho in [0.99, 0.995, 0.999, 0.9995, 0.9999] {
        let y = erlang_c(c, rho * f64::from(c));
        assert!(y > prev && y < 1.0, "rho={rho}: {y}");
        prev = y;
    }
    // Decreasing in c at fixed load.
    let mut prev = 1.0;
    for cc in [99_950, 99_990, 100_000, 100_100, 101_000] {
        let y = erlang_c(cc, a);
        assert!(y < prev && y > 0.0, "c={cc}: {y}");
        prev = y;
    }
    // Mean and quantile stay finite.
    let w = mmc_mean_wait(c, a, 1.0);
    assert!(w.is_finite() && w > 0.0);
    assert!(mmc_wait_quantile(c, a, 1.0, 0.99).is_finite());
}

#[test]
fn mm1_mean_and_p99() {
    let (lambda, mu) = (2.0, 3.0);
    let rho: f64 = lambda / mu;
    let mean = rho / (mu - lambda);
    let p99 = (rho / 0.01).ln() / (mu - lambda);
    for q in [
        input(Policy::Central, 1, 1, lambda, exp_law(1.0 / mu)),
        input(Policy::Random, 1, 1, lambda, exp_law(1.0 / mu)),
        input(Policy::RoundRobin, 1, 1, lambda, exp_law(1.0 / mu)),
        // Random over 5 dynos = M/M/1 at lambda/5.
        input(Policy::Random, 5, 1, 5.0 * lambda, exp_law(1.0 / mu)),
    ] {
        let b = baseline(&q);
        assert_eq!(b.method, "exact:mm1", "{q:?}");
        assert!(rel_close(b.mean_wait.unwrap(), mean, 1e-13));
        assert!(rel_close(b.p99_wait.unwrap(), p99, 1e-13));
    }
    // P(W > 0) = rho <= 1 - p gives a zero quantile.
    assert_eq!(mmc_wait_quantile(1, 0.005, 1.0, 0.99), 0.0);
}

#[test]
fn mmc_through_baseline() {
    // Central over 4 dynos x 2 workers = M/M/8.
    let q = input(Policy::Central, 4, 2, 6.0, exp_law(1.0));
    let b = baseline(&q);
    assert_eq!(b.method, "exact:erlang_c");
    let c = erlang_c_direct(8, 6.0);
    assert!(rel_close(b.mean_wait.unwrap(), c / (8.0 - 6.0), 1e-12));
    assert!(rel_close(b.p99_wait.unwrap(), (c / 0.01).ln() / 2.0, 1e-12));
    // Random over 4 dynos with 2 workers each: M/M/2 at lambda/4.
    let q = input(Policy::Random, 4, 2, 6.0, exp_law(1.0));
    let b = baseline(&q);
    assert_eq!(b.method, "exact:erlang_c");
    let c = erlang_c_direct(2, 1.5);
    assert!(rel_close(b.mean_wait.unwrap(), c / 0.5, 1e-12));
}

#[test]
fn unstable_and_invalid() {
    for lambda in [3.0, 4.0, f64::INFINITY] {
        let b = baseline(&input(Policy::Central, 1, 1, lambda, exp_law(1.0 / 3.0)));
        assert_eq!(b.method, "unstable", "lambda={lambda}");
        assert_eq!((b.mean_wait, b.p99_wait), (None, None));
    }
    let b = baseline(&input(Policy::Random, 10, 2, 20.0, exp_law(1.0)));
    assert_eq!(b.method, "unstable");
    assert_eq!(b.mean_wait, None);
    let b = baseline(&input(Policy::Central, 0, 1, 1.0, exp_law(0.5)));
    assert_eq!(b.method, "none");
    let b = baseline(&input(Policy::Central, 1, 1, f64::NAN, exp_law(0.5)));
    assert_eq!(b.method, "none");
    // Infinite-variance service.
    let b = baseline(&input(
        Policy::Central,
        1,
        1,
        1.0,
        law(Family::Pareto, 0.5, f64::INFINITY),
    ));
    assert_eq!(b.method, "none");
    assert_eq!(mmc_mean_wait(2, 2.0, 1.0), f64::INFINITY);
    assert_eq!(er_m_1(2, 2.0, 1.0), None);
    assert_eq!(md1_wait_quantile(1.0, 1.0, 0.99), None);
}

#[test]
fn md1_mean_is_pollaczek_khinchine() {
    for rho in [0.5, 0.9, 0.99] {
        // Service time d = 2, lambda = rho / d:
        // W = lambda d^2 / (2 (1 - rho)) = rho d / (2 (1 - rho)).
        let d = 2.0;
        let q = input(Policy::Central, 1, 1, rho / d, law(Family::Det, d, 0.0));
        let b = baseline(&q);
        assert_eq!(b.method, "exact:md1");
        assert!(rel_close(
            b.mean_wait.unwrap(),
            rho * d / (2.0 * (1.0 - rho)),
            1e-13
        ));
        let p99 = b.p99_wait.unwrap();
        assert!(rel_close(
            p99,
            md1_wait_quantile(rho / d, d, 0.99).unwrap(),
            1e-15
        ));
    }
}

/// Independent M/D/1 waiting-time CDF (D = 1) from the ladder-height
/// (Beneš / Pollaczek–Khinchine) representation W = Y_1 + ... + Y_N,
/// P(N = n) = (1 - rho) rho^n, Y_i ~ U(0, 1) (the equilibrium law of D = 1):
/// F(t) = (1 - rho) + rho * int_{max(0, t-1)}^{t} F(s) ds,
/// solved on a grid of step 1/m by the implicit trapezoid rule.
/// Returns F at j/m, j = 0..=t_max*m.
fn md1_cdf_volterra(rho: f64, m: usize, t_max: f64) -> Vec<f64> {
    let h = 1.0 / m as f64;
    let n = (t_max * m as f64).ceil() as usize + 1;
    let mut f = vec![0.0; n];
    let mut prefix = vec![0.0; n + 1]; // prefix[j] = sum_{i<j} f[i]
    f[0] = 1.0 - rho;
    prefix[1] = f[0];
    for j in 1..n {
        let lo = j.saturating_sub(m);
        let inner = prefix[j] - prefix[lo + 1]; // f[lo+1] + ... + f[j-1]
        f[j] = (1.0 - rho + rho * h * (0.5 * f[lo] + inner)) / (1.0 - 0.5 * rho * h);
        prefix[j + 1] = prefix[j] + f[j];
    }
    f
}

fn grid_quantile(f: &[f64], m: usize, p: f64) -> f64 {
    let j = f.iter().position(|&x| x >= p).expect("grid too short");
    if j == 0 {
        return 0.0;
    }
    let frac = (p - f[j - 1]) / (f[j] - f[j - 1]);
    (j as f64 - 1.0 + frac) / m as f64
}

#[test]
fn md1_cdf_and_quantile_against_volterra() {
    for (rho, t_max) in [(0.5, 20.0), (0.9, 60.0), (0.99, 400.0)] {
        let m = 1000;
        let f = md1_cdf_volterra(rho, m, t_max);
        // CDF on a set of points, integer and not.
        for &t in &[
            0.0,
            0.25,
            1.0,
            1.5,
            2.0,
            3.7,
            7.0,
            12.3,
            t_max / 2.0,
            t_max - 1.0,
        ] {
            let j = (t * m as f64).round() as usize;
            let exact = md1_wait_cdf(rho, 1.0, t).unwrap();
            assert!(
                (exact - f[j]).abs() < 1e-7,
                "rho={rho} t={t}: {exact} vs {}",
                f[j]
            );
        }
        let q = md1_wait_quantile(rho, 1.0, 0.99).unwrap();
        let q_ref = grid_quantile(&f, m, 0.99);
        assert!(
            (q - q_ref).abs() < 1e-5 * q_ref.max(1.0),
            "rho={rho}: {q} vs {q_ref}"
        );
        // The quantile is where the exact CDF crosses 0.99.
        assert!((md1_wait_cdf(rho, 1.0, q).unwrap() - 0.99).abs() < 1e-12);
        // Time scaling: service time d multiplies waits by d.
        let q3 = md1_wait_quantile(rho / 3.0, 3.0, 0.99).unwrap();
        assert!(rel_close(q3, 3.0 * q, 1e-9));
    }
}

#[test]
fn md1_closed_form_on_first_interval() {
    // Erlang / Crommelin: P(W <= t) = (1 - rho) e^{rho t} for 0 <= t <= D.
    for rho in [0.3f64, 0.9, 0.99] {
        for t in [0.0, 0.1, 0.5, 0.99, 1.0] {
            let want = (1.0 - rho) * (rho * t).exp();
            let got = md1_wait_cdf(rho, 1.0, t).unwrap();
            assert!(
                rel_close(got, want, 1e-13),
                "rho={rho} t={t}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn md1_distribution_has_pk_mean_and_right_tail_rate() {
    // Integrate 1 - F by Simpson on [0, T]; must give the P-K mean rho/(2(1-rho)).
    let rho: f64 = 0.9;
    let (t_max, steps_per_unit) = (400usize, 64usize);
    let h = 1.0 / steps_per_unit as f64;
    let n = t_max * steps_per_unit;
    let g = |i: usize| 1.0 - md1_wait_cdf(rho, 1.0, i as f64 * h).unwrap();
    // Simpson per unit interval (F is smooth inside each [k, k+1]).
    let mut integral = 0.0;
    for i in (0..n).step_by(2) {
        integral += h / 3.0 * (g(i) + 4.0 * g(i + 1) + g(i + 2));
    }
    let pk = rho / (2.0 * (1.0 - rho));
    assert!(rel_close(integral, pk, 1e-7), "{integral} vs {pk}");
    // The tail decays like exp(-eta t), rho (e^eta - 1) = eta (Cramér root of
    // the M/D/1 workload, [Kleinrock] ch. 5); no blow-up at large t.
    let (mut lo, mut hi) = (1e-6, 10.0);
    for _ in 0..200 {
        let mid: f64 = 0.5 * (lo + hi);
        if rho * mid.exp_m1() < mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let eta = lo;
    let slope = ((1.0 - md1_wait_cdf(rho, 1.0, 100.0).unwrap()).ln()
        - (1.0 - md1_wait_cdf(rho, 1.0, 60.0).unwrap()).ln())
        / 40.0;
    assert!(rel_close(-slope, eta, 1e-4), "{slope} vs {eta}");
    // Monotone and bounded far out, where the alternating Erlang sum is garbage.
    let mut prev = 0.0;
    for t in (0..3000).map(|i| i as f64 * 0.7) {
        let f = md1_wait_cdf(0.99, 1.0, t).unwrap();
        assert!(f >= prev - 1e-15 && f <= 1.0, "t={t}: {f}");
        prev = f;
    }
    assert!(prev > 1.0 - 1e-6);
}

#[test]
fn md1_quantile_heavy_load_is_finite() {
    let q = md1_wait_quantile(0.999, 1.0, 0.99).unwrap();
    // Heavy-traffic: W ~ exp with the P-K mean 499.5 -> p99 ~ 499.5 ln(100) ~ 2300.
    assert!(q > 2000.0 && q < 2600.0, "{q}");
    // Light load: P(W = 0) = 1 - rho >= 0.99.
    assert_eq!(md1_wait_quantile(0.005, 1.0, 0.99), Some(0.0));
}

#[test]
fn gi_m_1_solver_edges() {
    // Exponential interarrivals of rate l: 1 - A*(s) = s / (l + s); sigma = rho.
    let sol = gi_m_1(1.0, |s| s / (0.5 + s)).unwrap();
    assert!(rel_close(sol.sigma, 0.5, 1e-13));
    assert!(rel_close(sol.decay, 0.5, 1e-13));
    // rho = 2: no root in (0, 1).
    assert_eq!(gi_m_1(1.0, |s| s / (2.0 + s)), None);
    // The M/D/1 queue-length law sums to one and Q is non-decreasing.
    let mut t = Md1Table::new(0.95);
    assert!(t.extend_to(5000));
    assert!((t.prob.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(t.cum.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn er_m_1_reduces_to_mm1() {
    for rho in [0.1, 0.5, 0.9, 0.999] {
        let sol = er_m_1(1, rho * 2.0, 2.0).unwrap();
        assert!(rel_close(sol.sigma, rho, 1e-12), "{rho}: {}", sol.sigma);
        assert!(rel_close(sol.mean_wait(), rho / (2.0 - 2.0 * rho), 1e-9));
    }
}

#[test]
fn er_m_1_two_phases_matches_quadratic() {
    // R = 2, x = 1 - sigma, k = mu/lambda:
    // (1 - x)(1 + k x)^2 = 1  =>  k^2 x^2 - (k^2 - 2k) x - (2k - 1) = 0.
    let mu = 1.0;
    for rho in [0.3, 0.7, 0.95, 0.9999] {
        let lambda = 2.0 * rho * mu; // per-dyno rate lambda/2 = rho mu
        let k: f64 = mu / lambda;
        let b = k * k - 2.0 * k;
        let x = (b + (b * b + 4.0 * k * k * (2.0 * k - 1.0)).sqrt()) / (2.0 * k * k);
        let sol = er_m_1(2, lambda, mu).unwrap();
        assert!(rel_close(sol.sigma, 1.0 - x, 1e-10), "rho={rho}");
        assert!(
            rel_close(sol.decay, mu * x, 1e-7),
            "rho={rho}: {} vs {}",
            sol.decay,
            mu * x
        );
        // Through baseline: round robin over 2 dynos of a Poisson stream.
        let b = baseline(&input(Policy::RoundRobin, 2, 1, lambda, exp_law(1.0 / mu)));
        assert_eq!(b.method, "exact:er_m_1");
        assert!(rel_close(b.mean_wait.unwrap(), (1.0 - x) / (mu * x), 1e-7));
        assert!(rel_close(
            b.p99_wait.unwrap(),
            ((1.0 - x) / 0.01).ln() / (mu * x),
            1e-7
        ));
    }
}

#[test]
fn er_m_1_many_phases() {
    // Seed setting, round robin: R up to 4000, lambda = 150, mu = 3.
    let mut prev = f64::INFINITY;
    for r in [51, 60, 100, 1000, 4000] {
        let sol = er_m_1(r, 150.0, 3.0).unwrap();
        let rho = 50.0 / f64::from(r);
        assert!(sol.sigma >= 0.0 && sol.sigma < rho, "R={r}: {}", sol.sigma);
        assert!(sol.mean_wait() <= prev);
        prev = sol.mean_wait();
    }
    // Heavy load with many phases approaches D/M/1: sigma = exp(-(1 - sigma)/rho).
    let r = 4000;
    let rho = 0.99;
    let sol = er_m_1(r, rho * f64::from(r), 1.0).unwrap();
    let mut s = 0.5;
    for _ in 0..100_000 {
        s = (-(1.0 - s) / rho).exp();
    }
    assert!(
        sol.sigma > 0.9 && (sol.sigma - s).abs() < 1e-3,
        "{} vs {s}",
        sol.sigma
    );
    assert!(sol.mean_wait() < mmc_mean_wait(1, rho, 1.0));
}

#[test]
fn gi_m_1_deterministic_arrivals() {
    // D/M/1 at rho = 0.5: sigma = exp(-2 (1 - sigma)), by plain fixed-point iteration.
    let mut s: f64 = 0.0;
    for _ in 0..10_000 {
        s = (-2.0 * (1.0 - s)).exp();
    }
    assert!((s - 0.2032).abs() < 1e-4);
    let q = QueueInput {
        arrival: law(Family::Det, 1.0, 0.0),
        ..input(Policy::Central, 1, 1, 1.0, exp_law(0.5))
    };
    let b = baseline(&q);
    assert_eq!(b.method, "exact:gi_m_1");
    assert!(rel_close(b.mean_wait.unwrap(), s / (2.0 * (1.0 - s)), 1e-9));
    // Random routing of a deterministic stream over 2 dynos: the thinned
    // interarrival is D times a geometric(1/2) count; its LST is
    // (e^{-s}/2) / (1 - e^{-s}/2), so sigma = e^{-x}/(2 - e^{-x}), x = 2(1 - sigma)
    // (service mean 0.5 per dyno at rate 0.5: rho = 0.25).
    let mut s: f64 = 0.0;
    for _ in 0..10_000 {
        let e = (-2.0 * (1.0 - s)).exp();
        s = e / (2.0 - e);
    }
    let q = QueueInput {
        arrival: law(Family::Det, 1.0, 0.0),
        ..input(Policy::Random, 2, 1, 1.0, exp_law(0.5))
    };
    let b = baseline(&q);
    assert_eq!(b.method, "exact:gi_m_1");
    assert!(rel_close(b.mean_wait.unwrap(), s / (2.0 * (1.0 - s)), 1e-9));
}

#[test]
fn approximations_are_labelled_and_reduce_correctly() {
    // KLB with ca2 = cs2 = 1 is M/M/1; Allen–Cunneen with ca2 = cs2 = 1 is M/M/c.
    assert!(rel_close(
        kraemer_langenbach_belz_mean_wait(0.8, 1.0, 1.0, 1.0),
        4.0,
        1e-14
    ));
    assert!(rel_close(
        allen_cunneen_mean_wait(5, 4.0, 1.0, 1.0, 1.0),
        mmc_mean_wait(5, 4.0, 1.0),
        1e-14
    ));
    // KLB by hand at rho = 0.8, ca2 = 0.5, cs2 = 0:
    // base = 0.8/0.2 * 0.25 = 1, g = exp(-2*0.2*0.25/(3*0.8*0.5)) = exp(-1/12).
    let w = kraemer_langenbach_belz_mean_wait(0.8, 1.0, 0.5, 0.0);
    assert!(rel_close(w, (-1.0f64 / 12.0).exp(), 1e-14), "{w}");
    // ca2 >= 1 branch, rho = 0.5, ca2 = 3, cs2 = 0.5: base = 1 * 1.75, g = exp(-0.5*2/5).
    let w = kraemer_langenbach_belz_mean_wait(0.5, 1.0, 3.0, 0.5);
    assert!(rel_close(w, 1.75 * (-0.2f64).exp(), 1e-14), "{w}");

    // M/D/4 is not exact here.
    let b = baseline(&input(
        Policy::Central,
        4,
        1,
        3.0,
        law(Family::Det, 1.0, 0.0),
    ));
    assert_eq!(b.method, "approx:allen_cunneen");
    assert!(rel_close(
        b.mean_wait.unwrap(),
        mmc_mean_wait(4, 3.0, 1.0) * 0.5,
        1e-14
    ));
    // Clamped exponential service: P-K stays exact for one server...
    let clamped = LawMoments {
        clamped: true,
        ..law(Family::Exp, 0.9, 0.8)
    };
    let b = baseline(&input(Policy::Central, 1, 1, 1.0, clamped));
    assert_eq!(b.method, "exact:pollaczek_khinchine");
    assert!(rel_close(b.mean_wait.unwrap(), 0.81 * 1.8 / 0.2, 1e-14));
    assert_eq!(b.p99_wait, None);
    // ...but is no longer M/M/c with several.
    let b = baseline(&input(Policy::Central, 2, 1, 1.0, clamped));
    assert_eq!(b.method, "approx:allen_cunneen");
    // Random routing of a hyperexponential stream (scv 4) to 10 single-worker
    // dynos with lognormal service: G/G/1 with ca2 = 1 + 3/10.
    let q = QueueInput {
        arrival: law(Family::HyperExp, 0.1, 4.0),
        ..input(
            Policy::Random,
            10,
            1,
            10.0,
            law(Family::Lognormal, 0.5, 2.0),
        )
    };
    let b = baseline(&q);
    assert_eq!(b.method, "approx:kraemer_langenbach_belz");
    let w = kraemer_langenbach_belz_mean_wait(1.0, 0.5, 1.3, 2.0);
    assert!(rel_close(b.mean_wait.unwrap(), w, 1e-14));
    assert!(rel_close(
        b.p99_wait.unwrap(),
        exp_tail_quantile(0.5, w, 0.99),
        1e-14
    ));
    // Round robin of a Poisson stream to dynos with 2 workers: E_R/M/2, approximate.
    let b = baseline(&input(Policy::RoundRobin, 3, 2, 3.0, exp_law(1.0)));
    assert_eq!(b.method, "approx:allen_cunneen");
    let w = allen_cunneen_mean_wait(2, 1.0, 1.0, 1.0 / 3.0, 1.0);
    assert!(rel_close(b.mean_wait.unwrap(), w, 1e-14));
    // Exponential tail: P(W > t) = 0.5 exp(-t 0.5 / 2) at mean 2.
    assert!(rel_close(
        exp_tail_quantile(0.5, 2.0, 0.99),
        4.0 * 50f64.ln(),
        1e-14
    ));
}

#[test]
fn dynamic_policies() {
    let exp = exp_law(1.0);
    // One server: whatever the policy, M/M/1.
    for policy in [
        Policy::Jsq { routers: 1 },
        Policy::Jsq { routers: 3 },
        Policy::Pod { d: 1, routers: 1 },
        Policy::Jiq { routers: 2 },
        Policy::Lwl,
    ] {
        let b = baseline(&input(policy, 1, 1, 0.8, exp));
        assert_eq!(b.method, "exact:mm1", "{policy:?}");
        assert!(rel_close(b.mean_wait.unwrap(), 0.8 / 0.2, 1e-12));
    }
    // lwl is the central queue; pod with one choice is random routing.
    assert_eq!(
        baseline(&input(Policy::Lwl, 10, 1, 9.0, exp)),
        baseline(&input(Policy::Central, 10, 1, 9.0, exp))
    );
    assert_eq!(
        baseline(&input(Policy::Pod { d: 1, routers: 4 }, 10, 1, 9.0, exp)),
        baseline(&input(Policy::Random, 10, 1, 9.0, exp))
    );
    // Power of two: mean-field, T = 1 + rho^2 + rho^6 + rho^14 + ...
    let b = baseline(&input(
        Policy::Pod { d: 2, routers: 1 },
        1000,
        1,
        900.0,
        exp,
    ));
    assert_eq!(b.method, "approx:mean_field_pod");
    let t: f64 = (1..30).map(|i| 0.9f64.powi((1 << i) - 2)).sum();
    assert!(rel_close(b.mean_wait.unwrap(), t - 1.0, 1e-12), "{b:?}");
    // d = 3 at rho 0.5 in units of 2: T/2 = 1 + 0.5^3 + 0.5^12 + 0.5^39.
    let m = mean_field_pod(3, 0.5, 2.0);
    assert!(rel_close(
        m.mean_wait,
        2.0 * (0.125 + 0.5f64.powi(12) + 0.5f64.powi(39)),
        1e-12
    ));
    // The tail integrates to the mean: check P(W > p99) by the formula
    // for d = 2, rho = 0.9 against a direct numerical integral of it.
    let m = mean_field_pod(2, 0.9, 1.0);
    assert!(m.p99_wait > m.mean_wait && m.p99_wait < 20.0, "{m:?}");
    // A large d behaves like JSQ in the limit: P(W > 0) = rho^d.
    let m = mean_field_pod(32, 0.8, 1.0);
    assert!(
        m.mean_wait < 0.8f64.powi(32) * 1.01 && m.p99_wait == 0.0,
        "{m:?}"
    );
    // No exact or mean-field result: none. Dynamic policies need one worker.
    for q in [
        input(Policy::Jsq { routers: 1 }, 10, 1, 9.0, exp),
        input(Policy::Jiq { routers: 1 }, 10, 1, 9.0, exp),
        input(Policy::Pod { d: 2, routers: 2 }, 10, 1, 9.0, exp),
        input(Policy::Pod { d: 10, routers: 1 }, 10, 1, 9.0, exp),
        input(Policy::CentralRouters { routers: 2 }, 10, 1, 9.0, exp),
        input(Policy::CentralRouters { routers: 2 }, 1, 1, 0.5, exp),
        input(
            Policy::Pod { d: 2, routers: 1 },
            10,
            1,
            9.0,
            law(Family::Det, 1.0, 0.0),
        ),
        input(Policy::Jsq { routers: 1 }, 1, 2, 0.5, exp),
    ] {
        assert_eq!(baseline(&q).method, "none", "{q:?}");
    }
    assert_eq!(
        baseline(&input(Policy::Jsq { routers: 1 }, 10, 1, 11.0, exp)).method,
        "unstable"
    );
}

#[test]
fn mean_field_pod_tail_matches_its_mean() {
    // E[W] = ∫ P(W > x) dx: integrate the tail the p99 is read from.
    for (d, rho) in [(2, 0.5), (2, 0.9), (3, 0.95)] {
        let m = mean_field_pod(d, rho, 1.0);
        // Rebuild the tail as in mean_field_pod and integrate it.
        let df = f64::from(d);
        let a: Vec<f64> = (1..40)
            .map(|k| rho.powf((df.powi(k + 1) - df) / (df - 1.0)))
            .collect();
        let tail = |x: f64| {
            let mut sum = 0.0;
            for k in 1..a.len() {
                let erl: f64 = (0..k)
                    .map(|j| {
                        (-x).exp() * x.powi(j as i32) / (1..=j).map(|i| i as f64).product::<f64>()
                    })
                    .sum();
                sum += (a[k - 1] - a[k]) * erl;
            }
            sum
        };
        let (n, top) = (200_000, 80.0);
        let h = top / n as f64;
        let integral: f64 = (0..n).map(|i| tail((i as f64 + 0.5) * h) * h).sum();
        assert!(
            rel_close(integral, m.mean_wait, 1e-6),
            "d={d} rho={rho}: {integral} vs {}",
            m.mean_wait
        );
        assert!((tail(m.p99_wait) - 0.01).abs() < 1e-9, "d={d} rho={rho}");
    }
}

#[test]
fn seed_rows() {
    let rows = seed_comparison_rows();
    assert_eq!(rows.len(), 10);
    let rs: Vec<u32> = rows.iter().map(|r| r.servers).collect();
    assert_eq!(rs, [51, 60, 75, 100, 150, 200, 500, 1000, 2000, 4000]);
    let r51 = rows[0];
    // Dumb: M/M/1 at lambda/R = 150/51, mu = 3: W = rho/(mu - lambda/R) = 50/3 s.
    assert!(
        (r51.mm1_mean_wait_ms - 16666.667).abs() < 1e-3,
        "{}",
        r51.mm1_mean_wait_ms
    );
    // 1/(51*3 - 150) = 1/3 s.
    assert!((r51.one_over_spare_capacity_ms - 333.333).abs() < 1e-3);
    // Erlang C M/M/51 with a = 50, by direct summation: C(51, 50) / 3 s.
    let want = 1000.0 * erlang_c_direct(51, 50.0) / 3.0;
    assert!(rel_close(r51.erlang_c_mean_wait_ms, want, 1e-11));
    assert!(
        (r51.erlang_c_mean_wait_ms - 279.91).abs() < 0.01,
        "{}",
        r51.erlang_c_mean_wait_ms
    );
    for (row, fig) in rows.iter().zip(PUBLISHED_SEED_FIGURES.iter()) {
        let r = row.servers;
        // The published dumb column is the exact M/M/1 mean rounded to ms
        // (e.g. R=1000: 17.54 -> 18).
        assert!((row.mm1_mean_wait_ms - fig.dumb_ms).abs() <= 0.5, "R={r}");
        // The published smart column is 1/(R mu - lambda) rounded to ms
        // (e.g. R=500: 0.74 -> 1).
        assert!(
            (row.one_over_spare_capacity_ms - fig.smart_ms).abs() <= 0.5,
            "R={r}"
        );
        // The real central-queue wait is C times that, C < 1.
        let c = erlang_c_direct(r.min(200), 50.0);
        assert!(row.erlang_c_mean_wait_ms < row.one_over_spare_capacity_ms);
        if r <= 200 {
            assert!(rel_close(
                row.erlang_c_mean_wait_ms,
                c * row.one_over_spare_capacity_ms,
                1e-10
            ));
        }
    }
    // From R = 100 on the central queue practically never waits.
    assert!(rows[3].erlang_c_mean_wait_ms < 1e-6);
}
