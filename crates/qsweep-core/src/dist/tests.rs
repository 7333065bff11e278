//! Unit tests of the law parser, moments, CDFs and special functions.
//!
//! Why this file exists: it keeps the module files short; the tests check
//! every law and key, every error message, and the closed-form moments
//! against brute-force quadrature.

use super::special::normal_cdf_pair;
use super::*;
use std::path::{Path, PathBuf};

fn here() -> &'static Path {
    Path::new(".")
}

fn svc(text: &str) -> Dist {
    Dist::parse(text, Role::Service, here())
        .unwrap_or_else(|e| panic!("service '{text}' should parse: {e}"))
}

fn arr(text: &str) -> Dist {
    Dist::parse(text, Role::Arrival, here())
        .unwrap_or_else(|e| panic!("arrival '{text}' should parse: {e}"))
}

fn err_in(role: Role, text: &str, base: &Path) -> String {
    match Dist::parse(text, role, base) {
        Ok(d) => panic!("'{text}' as {role} should fail, parsed as {d:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "error is not one line: {msg}");
            assert!(
                msg.starts_with(&format!("{role}: ")),
                "no role prefix: {msg}"
            );
            msg
        }
    }
}

fn svc_err(text: &str) -> String {
    err_in(Role::Service, text, here())
}

fn arr_err(text: &str) -> String {
    err_in(Role::Arrival, text, here())
}

#[track_caller]
fn close(got: f64, want: f64, rel: f64) {
    let err = (got - want).abs() / want.abs().max(1e-300);
    assert!(
        err <= rel || got == want,
        "got {got:.17e}, want {want:.17e} (rel err {err:.2e} > {rel:.0e})"
    );
}

/// A fresh file under a per-process temporary directory.
fn temp_file(name: &str, content: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("qsweep-dist-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn empirical(name: &str, content: &str, extra: &str) -> Dist {
    let path = temp_file(name, content);
    svc(&format!("empirical(file={}{extra})", path.display()))
}

/// Composite Simpson rule with `n` (rounded up to even) intervals,
/// Kahan-summed so rounding stays far below the tolerances tested.
fn simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    if b <= a {
        return 0.0;
    }
    let n = n + n % 2;
    let h = (b - a) / n as f64;
    let (mut s, mut comp) = (0.0f64, 0.0f64);
    for i in 0..=n {
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let y = w * f(a + i as f64 * h) - comp;
        let t = s + y;
        comp = (t - s) - y;
        s = t;
    }
    s * h / 3.0
}

/// Brute force `E[clamp(X, lo, hi)^j]` from the density alone:
/// `integral of clamp(x)^j f(x) dx` with `x = e^t`, i.e. of
/// `clamp(e^t)^j * xf(e^t) dt` where `xf(x) = x f(x)`, over `[tmin, tmax]`,
/// split at the clamps so every piece is smooth.
fn brute_moment(xf: &dyn Fn(f64) -> f64, lo: f64, hi: f64, j: i32, tmin: f64, tmax: f64) -> f64 {
    let g = |t: f64| {
        let x = t.exp();
        x.clamp(lo, hi).powi(j) * xf(x)
    };
    let mut cuts = vec![tmin];
    for c in [lo.ln(), hi.ln()] {
        if c.is_finite() && c > tmin && c < tmax {
            cuts.push(c);
        }
    }
    cuts.push(tmax);
    cuts.windows(2)
        .map(|w| simpson(&g, w[0], w[1], 400_000))
        .sum()
}

/// `x f(x)` and a safe integration range in `t = ln x` for the
/// continuous laws, written from the textbook densities (not from the
/// partial-moment code under test).
fn density(d: &Dist) -> (Box<dyn Fn(f64) -> f64>, f64, f64) {
    match d.shape.clone() {
        Shape::Exp { mean } => (
            Box::new(move |x| x / mean * (-x / mean).exp()),
            mean.ln() - 60.0,
            mean.ln() + 800f64.ln(),
        ),
        Shape::Erlang { k, phase_mean } => density(&Dist {
            shape: Shape::Gamma {
                shape: f64::from(k),
                scale: phase_mean,
            },
            ..d.clone()
        }),
        Shape::Gamma { shape, scale } => (
            Box::new(move |x| (shape * (x / scale).ln() - x / scale - ln_gamma(shape)).exp()),
            scale.ln() - 60.0 / shape,
            scale.ln() + (800.0 + 10.0 * shape).ln(),
        ),
        Shape::HyperExp {
            p1,
            p2,
            mean1,
            mean2,
        } => (
            Box::new(move |x| {
                p1 * x / mean1 * (-x / mean1).exp() + p2 * x / mean2 * (-x / mean2).exp()
            }),
            mean1.min(mean2).ln() - 60.0,
            mean1.max(mean2).ln() + 800f64.ln(),
        ),
        Shape::LogNormal { mu, sigma } => (
            Box::new(move |x| {
                let z = (x.ln() - mu) / sigma;
                (-z * z / 2.0).exp() / (sigma * (2.0 * std::f64::consts::PI).sqrt())
            }),
            mu - 40.0 * sigma,
            mu + 2.0 * sigma * sigma + 40.0 * sigma,
        ),
        Shape::Weibull { scale, shape } => (
            Box::new(move |x| {
                let u = (x / scale).powf(shape);
                shape * u * (-u).exp()
            }),
            scale.ln() - 60.0 / shape,
            scale.ln() + 800f64.ln() / shape,
        ),
        Shape::Pareto { alpha, lo, hi } => (
            // Range [ln L, ln H] exactly: no bounds test, which would drop
            // the endpoint when e^(ln H) rounds above H.
            Box::new(move |x| alpha * (lo / x).powf(alpha) / (1.0 - (lo / hi).powf(alpha))),
            lo.ln(),
            hi.ln(),
        ),
        other => panic!("no density for {other:?}"),
    }
}

fn brute(d: &Dist, j: i32) -> f64 {
    let (xf, tmin, tmax) = density(d);
    brute_moment(&*xf, d.lo, d.hi, j, tmin, tmax)
}

#[test]
fn parses_every_law_and_key_combination() {
    let e = std::f64::consts::E;
    let pi = std::f64::consts::PI;
    let lam = 1.0 / std::f64::consts::LN_2.powi(2);
    // (text, name, mean, scv)
    let cases: Vec<(&str, &str, f64, f64)> = vec![
        ("exp(mean=0.5)", "exp", 0.5, 1.0),
        ("exp(rate=4)", "exp", 0.25, 1.0),
        (" exp( rate = 4 ) ", "exp", 0.25, 1.0),
        ("det(value=2)", "det", 2.0, 0.0),
        ("det(mean=2.5)", "det", 2.5, 0.0),
        ("erlang(k=4,mean=2)", "erlang", 2.0, 0.25),
        ("erlang(k=3,rate=0.5)", "erlang", 2.0, 1.0 / 3.0),
        ("erlang(k=1,mean=3)", "erlang", 3.0, 1.0),
        ("gamma(shape=0.5,mean=2)", "gamma", 2.0, 2.0),
        ("gamma(shape=2,scale=3)", "gamma", 6.0, 0.5),
        ("hyperexp(scv=4,mean=2)", "hyperexp", 2.0, 4.0),
        ("hyperexp(scv=1000,mean=0.1)", "hyperexp", 0.1, 1000.0),
        ("lognormal(scv=2,mean=3)", "lognormal", 3.0, 2.0),
        (
            "lognormal(sigma=1,median=2)",
            "lognormal",
            2.0 * e.sqrt(),
            e - 1.0,
        ),
        ("lognormal(scv=1,median=1)", "lognormal", 2f64.sqrt(), 1.0),
        (
            "lognormal(sigma=0.5,mean=1)",
            "lognormal",
            1.0,
            0.25f64.exp_m1(),
        ),
        (
            "weibull(shape=2,scale=1)",
            "weibull",
            pi.sqrt() / 2.0,
            4.0 / pi - 1.0,
        ),
        ("weibull(shape=1,mean=3)", "weibull", 3.0, 1.0),
        // lambda = 1/(ln 2)^2, mean = lambda Gamma(3), scv = Gamma(5)/Gamma(3)^2 - 1.
        ("weibull(shape=0.5,median=1)", "weibull", 2.0 * lam, 5.0),
        ("uniform(min=1,max=3)", "uniform", 2.0, 1.0 / 12.0),
        ("uniform(min=0,max=1)", "uniform", 0.5, 1.0 / 3.0),
        // alpha = 1: E[X] = L ln(H/L)/(1 - L/H), E[X^2] = L H.
        (
            "pareto(alpha=1,min=1,max=100)",
            "pareto",
            100f64.ln() / 0.99,
            100.0 * 0.99 * 0.99 / 100f64.ln().powi(2) - 1.0,
        ),
        // alpha = 2: E[X] = 2 L (1 - L/H)/(1 - (L/H)^2), E[X^2] = 2 L^2 ln(H/L)/(1 - (L/H)^2).
        (
            "pareto(alpha=2,min=1,max=10)",
            "pareto",
            2.0 * 0.9 / 0.99,
            2.0 * 10f64.ln() / 0.99 / (1.8f64 / 0.99).powi(2) - 1.0,
        ),
    ];
    for (text, name, mean, scv) in cases {
        let d = svc(text);
        assert_eq!(d.name(), name, "{text}");
        assert_eq!(d.text(), text.trim());
        assert_eq!(d.role(), Role::Service);
        assert!(!d.is_clamped(), "{text}");
        close(d.mean(), mean, 1e-13);
        close(d.scv(), scv, 1e-12);
        close(d.second_moment(), mean * mean * (1.0 + scv), 1e-12);
    }
    // Generic bounded Pareto, alpha = 1.5, from the textbook formula.
    let (a, l, h) = (1.5f64, 1.0f64, 100.0f64);
    let c = a * l.powf(a) / (1.0 - (l / h).powf(a));
    let m1 = c * (h.powf(1.0 - a) - l.powf(1.0 - a)) / (1.0 - a);
    let m2 = c * (h.powf(2.0 - a) - l.powf(2.0 - a)) / (2.0 - a);
    let d = svc("pareto(alpha=1.5,min=1,max=100)");
    close(d.mean(), m1, 1e-13);
    close(d.second_moment(), m2, 1e-13);
    // Hyperexp phases are balanced: p1 mean1 = p2 mean2 = mean/2.
    let Shape::HyperExp {
        p1,
        p2,
        mean1,
        mean2,
    } = svc("hyperexp(scv=4,mean=2)").shape
    else {
        panic!()
    };
    close(p1, (1.0 + (3.0f64 / 5.0).sqrt()) / 2.0, 1e-15);
    close(p2, 1.0 - p1, 1e-14);
    close(p1 * mean1, 1.0, 1e-15);
    close(p2 * mean2, 1.0, 1e-14);
    // Clamps parse on every non-support law.
    for text in [
        "exp(mean=1,min=0.1,max=5)",
        "det(value=1,min=0.5,max=2)",
        "erlang(k=2,mean=1,min=0.1,max=5)",
        "gamma(shape=0.5,scale=1,min=0.1,max=5)",
        "hyperexp(scv=3,mean=1,min=0.1,max=5)",
        "lognormal(sigma=1,median=1,min=0.1,max=5)",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
    ] {
        let d = svc(text);
        assert_eq!(
            d.clamps(),
            (
                if text.starts_with("weibull") {
                    0.01
                } else if text.starts_with("det") {
                    0.5
                } else {
                    0.1
                },
                if text.starts_with("weibull") {
                    30.0
                } else if text.starts_with("det") {
                    2.0
                } else {
                    5.0
                }
            )
        );
    }
    let d = svc("exp(mean=1,max=5)");
    assert_eq!(d.clamps(), (0.0, 5.0));
    let d = svc("exp(mean=1,min=0)");
    assert_eq!(d.clamps(), (0.0, f64::INFINITY));
}

#[test]
fn accessors() {
    let d = svc("  erlang(k=3,mean=1.5)  ");
    assert_eq!(d.text(), "erlang(k=3,mean=1.5)");
    assert_eq!(d.to_string(), "erlang(k=3,mean=1.5)");
    assert_eq!(d.erlang_k(), Some(3));
    assert_eq!(d.gamma_shape(), Some(3.0));
    assert_eq!(svc("exp(mean=1)").erlang_k(), Some(1));
    assert_eq!(svc("exp(mean=1)").gamma_shape(), Some(1.0));
    assert_eq!(svc("gamma(shape=0.3,mean=1)").gamma_shape(), Some(0.3));
    assert_eq!(svc("gamma(shape=0.3,mean=1)").erlang_k(), None);
    assert_eq!(svc("weibull(shape=2,scale=1)").erlang_k(), None);
    assert_eq!(svc("weibull(shape=2,scale=1)").gamma_shape(), None);
    assert_eq!(arr("exp").role(), Role::Arrival);
    assert_eq!(Role::Arrival.to_string(), "arrival");
    assert_eq!(Role::Service.to_string(), "service");
}

#[test]
fn to_law_encodes_per_contract() {
    let mut table = vec![9.0f32];
    let law = |text: &str, table: &mut Vec<f32>| svc(text).to_law(table);
    let l = law("exp(mean=0.5)", &mut table);
    assert_eq!(
        (l.kind, l.p[0], l.scale, l.lo, l.hi),
        (LawKind::Exp.code(), 0.5, 1.0, 0.0, f32::MAX)
    );
    let l = law("det(value=2,min=1,max=3)", &mut table);
    assert_eq!(
        (l.kind, l.p[0], l.lo, l.hi),
        (LawKind::Det.code(), 2.0, 1.0, 3.0)
    );
    let l = law("erlang(k=4,mean=2)", &mut table);
    assert_eq!((l.kind, l.n, l.p[0]), (LawKind::Erlang.code(), 4, 0.5));
    let l = law("gamma(shape=0.5,mean=2)", &mut table);
    assert_eq!((l.kind, l.p[0], l.p[1]), (LawKind::Gamma.code(), 0.5, 4.0));
    let l = law("hyperexp(scv=4,mean=2)", &mut table);
    let p2 = 1.0 / (5.0 * (1.0 + (0.6f64).sqrt()));
    assert_eq!(l.kind, LawKind::HyperExp.code());
    // The rare branch (probability p2, mean 1/p2) first.
    assert_eq!(
        l.p[..3],
        [p2 as f32, (1.0 / p2) as f32, (1.0 / (1.0 - p2)) as f32]
    );
    let l = law("lognormal(sigma=0.5,median=2)", &mut table);
    assert_eq!(
        (l.kind, l.p[0], l.p[1]),
        (LawKind::LogNormal.code(), 2f64.ln() as f32, 0.5)
    );
    let l = law("weibull(shape=0.5,scale=3,min=0.01,max=30)", &mut table);
    assert_eq!(
        (l.kind, l.p[0], l.p[1], l.lo, l.hi),
        (LawKind::Weibull.code(), 3.0, 2.0, 0.01, 30.0)
    );
    let l = law("pareto(alpha=1.5,min=1,max=100)", &mut table);
    assert_eq!(
        (l.kind, l.p.to_vec(), l.lo, l.hi),
        (
            LawKind::Pareto.code(),
            vec![1.5, 1.0, 1e-3, 0.999],
            0.0,
            f32::MAX
        )
    );
    let l = law("uniform(min=1,max=3)", &mut table);
    assert_eq!(
        (l.kind, l.p[0], l.p[1], l.lo, l.hi),
        (LawKind::Uniform.code(), 1.0, 2.0, 0.0, f32::MAX)
    );
    for l in [
        law("exp(rate=2)", &mut table),
        law("weibull(shape=2,mean=1)", &mut table),
    ] {
        assert_eq!(
            (l.n, l.offset, l.p[3], l._pad0, l._pad1),
            (0, 0, 0.0, 0, 0.0)
        );
    }
    // Empirical: values appended sorted, offset points at them, scale 1 for service.
    assert_eq!(table, vec![9.0]);
    let d = empirical("law-a.txt", "4\n1\n2\n", "");
    let l = d.to_law(&mut table);
    assert_eq!(
        (l.kind, l.n, l.offset, l.scale),
        (LawKind::Empirical.code(), 3, 1, 1.0)
    );
    let l2 = empirical("law-b.txt", "0.5\n0.25\n", ",max=0.4").to_law(&mut table);
    assert_eq!((l2.n, l2.offset, l2.scale, l2.hi), (2, 4, 1.0, 0.4));
    assert_eq!(table, vec![9.0, 1.0, 2.0, 4.0, 0.25, 0.5]);
    // An arrival empirical law rescales through `scale`, not the table.
    let path = temp_file("law-c.txt", "1\n2\n4\n");
    let a = arr(&format!("empirical(file={})", path.display())).with_mean(4.5);
    let mut t2 = Vec::new();
    let l = a.to_law(&mut t2);
    assert_eq!(
        (t2, l.scale),
        (vec![1.0, 2.0, 4.0], (4.5 * 3.0 / 7.0) as f32)
    );
    // Arrival parametric laws carry absolute parameters with scale 1.
    let l = arr("weibull(shape=0.5)")
        .with_mean(2.0)
        .to_law(&mut Vec::new());
    assert_eq!(
        (l.kind, l.scale, l.p[1]),
        (LawKind::Weibull.code(), 1.0, 2.0)
    );
    assert!(
        (f64::from(l.p[0]) - 1.0).abs() < 1e-6,
        "2 = lambda Gamma(3)"
    );
}

#[test]
fn arrival_laws_take_shape_only_and_have_mean_one() {
    let emp = temp_file("arrival-gaps.txt", "# gaps\n1\n2\n4\n");
    let emp_text = format!("empirical(file={})", emp.display());
    let pareto_svc = svc("pareto(alpha=1.5,min=1,max=100)");
    let cases: Vec<(&str, f64)> = vec![
        ("exp", 1.0),
        ("exp()", 1.0),
        ("det", 0.0),
        ("erlang(k=4)", 0.25),
        ("hyperexp(scv=4)", 4.0),
        ("lognormal(scv=2)", 2.0),
        ("lognormal(sigma=1)", 1f64.exp_m1()),
        ("weibull(shape=0.5)", 5.0),
        ("gamma(shape=0.5)", 2.0),
        ("pareto(alpha=1.5,min=1,max=100)", pareto_svc.scv()),
        ("uniform(min=1,max=3)", 1.0 / 12.0),
        // Resampled 1, 2, 4: E[X^2] / E[X]^2 − 1 = 7 / (7/3)^2 − 1 = 2/7.
        (&emp_text, 2.0 / 7.0),
    ];
    for (text, scv) in cases {
        let d = arr(text);
        close(d.mean(), 1.0, 1e-14);
        close(d.scv(), scv, 1e-12);
        assert!(!d.is_clamped());
        let e = d.with_mean(0.3333);
        close(e.mean(), 0.3333, 1e-14);
        close(e.scv(), scv, 1e-12);
        assert_eq!(e.text(), text);
    }
}

#[test]
fn arrival_laws_reject_clamps_and_scale_keys() {
    let clamp_msg = "arrival: min/max clamps are not supported for arrival laws \
                     (the arrival mean is set by lambda or rho)";
    for text in [
        "exp(min=1)",
        "weibull(shape=0.5,max=3)",
        "erlang(k=2,min=0.1,max=3)",
    ] {
        assert_eq!(arr_err(text), clamp_msg, "{text}");
    }
    let path = temp_file("arr-clamp.txt", "1\n2\n");
    assert_eq!(
        arr_err(&format!("empirical(file={},max=1.5)", path.display())),
        clamp_msg
    );
    assert_eq!(
        arr_err("exp(mean=2)"),
        "arrival: exp: mean= is not allowed for arrival laws (the arrival mean is set by \
         lambda or rho); expected the shape only, e.g. exp"
    );
    for (text, key) in [
        ("exp(rate=2)", "rate"),
        ("det(value=1)", "value"),
        ("erlang(k=2,mean=1)", "mean"),
        ("gamma(shape=2,scale=1)", "scale"),
        ("hyperexp(scv=2,mean=1)", "mean"),
        ("lognormal(scv=2,median=1)", "median"),
        ("weibull(shape=0.5,median=1)", "median"),
    ] {
        let msg = arr_err(text);
        assert!(
            msg.contains(&format!("{key}= is not allowed for arrival laws")),
            "{msg}"
        );
    }
    assert_eq!(
        arr_err("exp(foo=1)"),
        "arrival: exp: unknown key 'foo'; expected no keys (write just exp)"
    );
    assert_eq!(
        arr_err("weibull(shape=1,medain=2)"),
        "arrival: weibull: unknown key 'medain'; expected shape"
    );
    assert_eq!(arr_err("erlang"), "arrival: erlang needs k=");
    assert_eq!(
        arr_err("pareto(alpha=2)"),
        "arrival: pareto needs min= and max="
    );
}

#[test]
fn every_error_class_has_its_own_message() {
    let exact = [
        ("expo", "service: unknown law 'expo'; expected one of exp, det, erlang, gamma, hyperexp, lognormal, weibull, pareto, uniform, empirical, mmpp, trace"),
        ("Exp(mean=1)", "service: unknown law 'Exp'; expected one of exp, det, erlang, gamma, hyperexp, lognormal, weibull, pareto, uniform, empirical, mmpp, trace"),
        ("weibull(shape=0.46,medain=0.05)", "service: weibull: unknown key 'medain'; expected shape, scale, mean, median, min, max"),
        ("exp", "service: exp needs mean= or rate="),
        ("exp()", "service: exp needs mean= or rate="),
        ("det", "service: det needs value= or mean="),
        ("erlang(mean=1)", "service: erlang needs k="),
        ("erlang(k=2)", "service: erlang needs mean= or rate="),
        ("gamma(mean=1)", "service: gamma needs shape="),
        ("gamma(shape=1)", "service: gamma needs mean= or scale="),
        ("hyperexp(mean=1)", "service: hyperexp needs scv="),
        ("hyperexp(scv=2)", "service: hyperexp needs mean="),
        ("lognormal(mean=1)", "service: lognormal needs scv= or sigma="),
        ("lognormal(scv=1)", "service: lognormal needs mean= or median="),
        ("weibull(shape=1)", "service: weibull needs scale=, mean= or median="),
        ("weibull(mean=1)", "service: weibull needs shape="),
        ("pareto(min=1,max=2)", "service: pareto needs alpha="),
        ("pareto(alpha=1.5,min=1)", "service: pareto needs min= and max="),
        ("uniform(max=2)", "service: uniform needs min= and max="),
        ("empirical", "service: empirical needs file="),
        ("exp(mean=1,mean=2)", "service: exp: duplicate key 'mean'; expected each key once"),
        ("exp(mean=1,rate=2)", "service: exp: mean= and rate= contradict; expected only one of mean= or rate="),
        ("det(value=1,mean=1)", "service: det: value= and mean= contradict; expected only one of value= or mean="),
        ("lognormal(scv=1,sigma=1,mean=1)", "service: lognormal: scv= and sigma= contradict; expected only one of scv= or sigma="),
        ("lognormal(scv=1,mean=1,median=1)", "service: lognormal: mean= and median= contradict; expected only one of mean= or median="),
        ("weibull(shape=1,mean=1,median=1)", "service: weibull: mean= and median= contradict; expected only one of scale=, mean= or median="),
        ("gamma(shape=1,mean=1,scale=1)", "service: gamma: mean= and scale= contradict; expected only one of mean= or scale="),
        ("erlang(k=2.5,mean=1)", "service: erlang: k must be an integer >= 1, got '2.5'"),
        ("erlang(k=0,mean=1)", "service: erlang: k must be an integer >= 1, got '0'"),
        ("erlang(k=-2,mean=1)", "service: erlang: k must be an integer >= 1, got '-2'"),
        ("hyperexp(scv=1,mean=1)", "service: hyperexp: scv must be > 1, got 1; expected scv > 1 (use exp for scv = 1, erlang or gamma below 1)"),
        ("exp(mean=1,min=2,max=1)", "service: exp: max=1 is not greater than min=2; expected max > min"),
        ("weibull(shape=1,mean=1,min=2,max=2)", "service: weibull: max=2 is not greater than min=2; expected max > min"),
        ("pareto(alpha=1,min=2,max=2)", "service: pareto: max=2 is not greater than min=2; expected max > min"),
        ("uniform(min=3,max=1)", "service: uniform: max=1 is not greater than min=3; expected max > min"),
        ("exp(mean=0)", "service: exp: mean must be a positive finite number, got '0'"),
        ("exp(mean=-1)", "service: exp: mean must be a positive finite number, got '-1'"),
        ("exp(mean=NaN)", "service: exp: mean must be a positive finite number, got 'NaN'"),
        ("exp(mean=inf)", "service: exp: mean must be a positive finite number, got 'inf'"),
        ("exp(mean=abc)", "service: exp: mean must be a positive finite number, got 'abc'"),
        ("exp(rate=0)", "service: exp: rate must be a positive finite number, got '0'"),
        ("gamma(shape=0,mean=1)", "service: gamma: shape must be a positive finite number, got '0'"),
        ("weibull(shape=-1,mean=1)", "service: weibull: shape must be a positive finite number, got '-1'"),
        ("pareto(alpha=1,min=0,max=2)", "service: pareto: min must be a positive finite number, got '0'"),
        ("uniform(min=-1,max=2)", "service: uniform: min must be a nonnegative finite number, got '-1'"),
        ("exp(mean=1,min=-1)", "service: exp: min must be a nonnegative finite number, got '-1'"),
        ("exp(mean=1,max=0)", "service: exp: max must be a positive finite number, got '0'"),
        ("", "service: empty distribution; expected a law such as exp(mean=1)"),
        ("   ", "service: empty distribution; expected a law such as exp(mean=1)"),
        ("exp(mean=1", "service: 'exp(mean=1' is missing ')'; expected name(key=value,...)"),
        ("exp(mean=1)x", "service: 'exp(mean=1)x' has text after ')'; expected name(key=value,...)"),
        ("exp((mean=1))", "service: 'exp((mean=1))' has unbalanced parentheses; expected name(key=value,...)"),
        ("exp)", "service: 'exp)' has unbalanced parentheses; expected name(key=value,...)"),
        ("exp(mean)", "service: exp: 'mean' is not key=value; expected e.g. mean=1"),
        ("exp(mean=)", "service: exp: mean= has no value; expected mean=<value>"),
        ("exp(mean=1,)", "service: exp: empty item; expected key=value pairs separated by commas"),
    ];
    for (text, want) in exact {
        assert_eq!(svc_err(text), want, "{text:?}");
    }
    // Out of the engines' f32 range.
    assert!(svc_err("exp(mean=1e300)").contains("outside the range the f32 engines support"));
    assert!(svc_err("weibull(shape=0.001,scale=1)").contains("outside the range"));
    // Messages are specific: no two error classes share one.
    let mut all: Vec<&str> = exact.iter().map(|(_, m)| *m).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), exact.len() - 2); // "exp"/"exp()" and ""/"   " share one
}

#[test]
fn empirical_files_are_resampled_by_default() {
    // The file: nine 1s and one 100. Each draw is one of the ten
    // values, so the law's moments are the sample's: mean 10.9 (the
    // interpolation between the sorted values had 6.5), E[X^2] =
    // (9 + 10^4)/10.
    let text = "1\n1\n1\n1\n1\n1\n1\n1\n1\n100\n";
    let d = empirical("nine-ones.txt", text, "");
    let named = empirical("nine-ones-none.txt", text, ",smooth=none");
    assert_eq!((d.mean(), named.mean()), (10.9, 10.9));
    assert_eq!(d.second_moment(), 1000.9);
    close(d.scv(), 1000.9 / (10.9 * 10.9) - 1.0, 1e-14);
    let linear = empirical("nine-ones-linear.txt", text, ",smooth=linear");
    close(linear.mean(), 6.5, 1e-15);
    // A step CDF: 9/10 at 1, 1 at 100; the quantile the least value whose
    // CDF reaches p.
    assert_eq!(
        (d.cdf(0.99), d.cdf(1.0), d.cdf(99.0), d.cdf(100.0)),
        (0.0, 0.9, 0.9, 1.0)
    );
    for (p, x) in [
        (0.0, 1.0),
        (0.5, 1.0),
        (0.9, 1.0),
        (0.900_001, 100.0),
        (1.0, 100.0),
    ] {
        assert_eq!(d.quantile(p), x, "p = {p}");
    }
    // k / n exactly at a step, where p n rounds above the integer
    // (0.3 · 10 = 3.0000000000000004): the third value, not the fourth.
    let ten = empirical("ten.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "");
    for k in 1..=10 {
        let p = f64::from(k) / 10.0;
        assert_eq!(ten.quantile(p), f64::from(k), "p = {p}");
        assert_eq!(ten.cdf(ten.quantile(p)), p, "p = {p}");
        assert_eq!(ten.quantile(p - 1e-9), f64::from(k), "p = {p} - 1e-9");
        if k < 10 {
            assert_eq!(ten.quantile(p + 1e-9), f64::from(k + 1), "p = {p} + 1e-9");
        }
    }
    // Clamped: the sample moments of the clamped values.
    let c = empirical("clamped-r.txt", "1\n2\n4\n", ",min=1.5,max=3");
    assert!(c.is_clamped());
    close(c.mean(), (1.5 + 2.0 + 3.0) / 3.0, 1e-15);
    close(c.second_moment(), (2.25 + 4.0 + 9.0) / 3.0, 1e-15);
    assert_eq!(
        (c.cdf(1.49), c.cdf(1.5), c.cdf(2.0), c.cdf(3.0)),
        (0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0)
    );
    // Brute force over the quantile function (midpoint rule in p, exact for
    // steps at multiples of 1/3 and 1/10).
    for dd in [&d, &c, &ten] {
        let n = 600_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for i in 0..n {
            let x = dd.quantile((i as f64 + 0.5) / n as f64);
            s1 += x;
            s2 += x * x;
        }
        close(dd.mean(), s1 / n as f64, 1e-10);
        close(dd.second_moment(), s2 / n as f64, 1e-10);
    }
    // Encoded for the engines: p[0] says how they draw.
    let mut table = Vec::new();
    assert_eq!(d.to_law(&mut table).p, [0.0; 4]);
    assert_eq!(linear.to_law(&mut table).p, [1.0, 0.0, 0.0, 0.0]);
    // Rescaled (an arrival law), the mode is kept.
    assert_eq!(linear.with_mean(2.0).to_law(&mut table).p[0], 1.0);
    close(linear.with_mean(2.0).mean(), 2.0, 1e-15);
    close(d.with_mean(2.0).scv(), d.scv(), 1e-13);
    // Any other value of smooth= is refused in one line.
    let path = temp_file("smooth-bad.txt", "1\n2\n");
    assert_eq!(
        svc_err(&format!("empirical(file={},smooth=cubic)", path.display())),
        "service: empirical: smooth must be none (resample the values, the default) or \
         linear (interpolate between the sorted values), got 'cubic'"
    );
}

#[test]
fn empirical_files() {
    // Exact moments of the piecewise-linear law through 1, 2, 4:
    // segments [1,2] and [2,4]: E[X] = (1.5 + 3)/2, E[X^2] = (7/3 + 28/3)/2.
    let d = empirical(
        "tiny.txt",
        "# a comment\n\n4\n  1  \n2\r\n",
        ",smooth=linear",
    );
    assert_eq!(d.name(), "empirical");
    assert_eq!(d.mean(), 2.25);
    close(d.second_moment(), 35.0 / 6.0, 1e-15);
    close(d.scv(), 35.0 / 6.0 / 2.25f64.powi(2) - 1.0, 1e-14);
    assert!(!d.is_clamped());
    for (p, x) in [(0.0, 1.0), (0.25, 1.5), (0.5, 2.0), (0.75, 3.0), (1.0, 4.0)] {
        assert_eq!(d.quantile(p), x, "p = {p}");
        assert_eq!(d.cdf(x), p, "x = {x}");
    }
    // Clamped to [1.5, 3]: segment 1 gives (0.5 * 1.5 + (2^2 - 1.5^2)/2) = 1.625,
    // segment 2 gives ((3^2 - 2^2)/2 + 1 * 3)/2 = 2.75.
    let c = empirical("tiny-c.txt", "1\n2\n4\n", ",min=1.5,max=3,smooth=linear");
    assert!(c.is_clamped());
    close(c.mean(), (1.625 + 2.75) / 2.0, 1e-15);
    // Brute force over the quantile function (midpoint rule in p).
    for dd in [&d, &c] {
        let n = 2_000_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for i in 0..n {
            let x = dd.quantile((i as f64 + 0.5) / n as f64);
            s1 += x;
            s2 += x * x;
        }
        close(dd.mean(), s1 / n as f64, 1e-10);
        close(dd.second_moment(), s2 / n as f64, 1e-10);
    }
    // Clamps outside the data do not cut.
    assert!(!empirical("tiny-d.txt", "1\n2\n4\n", ",min=0.5,max=4").is_clamped());
    // One value: always that value.
    let one = empirical("one.txt", "3\n", "");
    assert_eq!((one.mean(), one.scv(), one.quantile(0.3)), (3.0, 0.0, 3.0));
    // Zeros are allowed alongside positive values.
    assert_eq!(
        empirical("zeros.txt", "0\n0\n2\n", ",smooth=linear").mean(),
        0.5
    );
    assert_eq!(empirical("zeros-r.txt", "0\n0\n3\n", "").mean(), 1.0);
    // Relative paths resolve against the base directory.
    let path = temp_file("rel.txt", "1\n3\n");
    let dir = path.parent().unwrap();
    let rel = Dist::parse("empirical(file=rel.txt)", Role::Service, dir).unwrap();
    assert_eq!(rel.mean(), 2.0);
    assert_eq!(rel.text(), "empirical(file=rel.txt)");
    // Values are stored at f32 precision, as the engines sample them.
    let f = empirical("f32.txt", "0.1\n", "");
    assert_eq!(f.mean(), f64::from(0.1f32));
}

#[test]
fn empirical_file_errors() {
    let dir = temp_file("probe.txt", "1\n")
        .parent()
        .unwrap()
        .to_path_buf();
    let err = |name: &str, content: Option<&str>| {
        if let Some(c) = content {
            temp_file(name, c);
        }
        err_in(Role::Service, &format!("empirical(file={name})"), &dir)
    };
    let missing = err("no-such-file.txt", None);
    assert!(
        missing.starts_with("service: empirical file 'no-such-file.txt' cannot be read ("),
        "{missing}"
    );
    assert!(
        missing.contains(&dir.join("no-such-file.txt").display().to_string()),
        "{missing}"
    );
    assert_eq!(
        err("empty.txt", Some("# only comments\n\n   \n")),
        "service: empirical file 'empty.txt' is empty; expected one nonnegative number per line"
    );
    assert_eq!(
        err("empty2.txt", Some("")),
        "service: empirical file 'empty2.txt' is empty; expected one nonnegative number per line"
    );
    assert!(err("x.txt", Some("1\n2\nabc\n4\n"))
        .starts_with("service: empirical file 'x.txt' line 3: 'abc' is not a number; expected"));
    assert!(err("header.txt", Some("seconds\n1\n2\n"))
        .starts_with("service: empirical file 'header.txt' line 1: 'seconds' is not a number"));
    assert!(err("trailing.txt", Some("1\n2 # two\n"))
        .starts_with("service: empirical file 'trailing.txt' line 2: '2 # two' is not a number"));
    assert_eq!(
        err("neg.txt", Some("1\n-1\n")),
        "service: empirical file 'neg.txt' line 2: negative value -1; expected nonnegative numbers"
    );
    assert!(err("inf.txt", Some("1\ninf\n"))
        .starts_with("service: empirical file 'inf.txt' line 2: 'inf' is not a finite number"));
    assert!(err("nan.txt", Some("NaN\n"))
        .starts_with("service: empirical file 'nan.txt' line 1: 'NaN' is not a finite number"));
    assert!(err("big.txt", Some("1e39\n"))
        .starts_with("service: empirical file 'big.txt' line 1: '1e39' is not a finite number"));
    assert_eq!(
        err("allzero.txt", Some("0\n0.0\n")),
        "service: empirical file 'allzero.txt' has only zero values; expected some positive value"
    );
    // The same checks hold for arrival laws.
    temp_file("neg2.txt", "-3\n");
    assert!(err_in(Role::Arrival, "empirical(file=neg2.txt)", &dir)
        .starts_with("arrival: empirical file 'neg2.txt' line 1: negative value -3"));
}

#[test]
fn example_data_file_parses() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let d = Dist::parse(
        "empirical(file=example-service-times.txt)",
        Role::Service,
        &data,
    )
    .unwrap();
    let Shape::Empirical { values, .. } = &d.shape else {
        panic!()
    };
    assert!(
        (400..=600).contains(&values.len()),
        "{} values",
        values.len()
    );
    assert!(values[0] >= 0.0099 && values[values.len() - 1] <= 30.0);
    // Drawn from the study Weibull (mean 0.264, scv 6.24): loose sanity bounds.
    assert!(d.mean() > 0.1 && d.mean() < 0.6, "mean {}", d.mean());
    let text = std::fs::read_to_string(data.join("example-service-times.txt")).unwrap();
    assert!(text.starts_with('#'));
}

#[test]
fn study_weibull_moments_are_exact() {
    // The best-known study's service law. Reference values from mpmath at
    // 40 digits: lo F(lo) + lambda Gamma(1+1/k) [P(.., (hi/lambda)^k) - P(.., (lo/lambda)^k)]
    // + hi (1 - F(hi)), cross-checked by mpmath.quad.
    let d = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)");
    assert!(d.is_clamped());
    let Shape::Weibull { scale, .. } = d.shape else {
        panic!()
    };
    close(scale, 0.110_917_892_910_083_04, 1e-14);
    close(d.mean(), 0.263_971_574_559_670_46, 1e-12);
    close(d.second_moment(), 0.504_388_566_908_970_7, 1e-12);
    close(d.scv(), 6.238_538_820_436_465, 1e-12);
    close(d.cdf(0.01), 0.281_505_527_812_509_6, 1e-13);
    close(1.0 - d.cdf(29.999_999), 1.954_380_597_559_335_6e-6, 1e-6);
    // Unclamped: mean lambda Gamma(1 + 1/k), scv Gamma(1+2/k)/Gamma(1+1/k)^2 - 1.
    let u = svc("weibull(shape=0.46,median=0.05)");
    close(u.mean(), 0.261_978_758_341_889, 1e-13);
    close(u.scv(), 6.359_801_129_389_285, 1e-12);
    println!(
        "study weibull(shape=0.46,median=0.05,min=0.01,max=30): mean {:.15} E[X^2] {:.15} scv {:.15}",
        d.mean(),
        d.second_moment(),
        d.scv()
    );
}

#[test]
fn clamped_and_unclamped_moments_match_brute_force() {
    let texts = [
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        "weibull(shape=0.46,median=0.05)",
        "weibull(shape=0.46,median=0.05,max=30)",
        "weibull(shape=2,scale=1,min=0.3,max=1.5)",
        "weibull(shape=5,mean=1,min=0.95)",
        "lognormal(sigma=1.5,median=1,min=0.2,max=20)",
        "lognormal(sigma=1.5,median=1)",
        "lognormal(scv=20,mean=1,max=3)",
        "lognormal(sigma=0.1,mean=1,min=1.05)",
        "gamma(shape=0.3,mean=1,min=0.01,max=5)",
        "gamma(shape=0.3,mean=1)",
        "gamma(shape=40,mean=1,min=0.9,max=1.2)",
        "erlang(k=3,mean=1,max=2)",
        "erlang(k=50,mean=1,min=1.1)",
        "exp(mean=1,min=0.5,max=3)",
        "exp(mean=2)",
        "hyperexp(scv=10,mean=1,min=0.05,max=8)",
        "hyperexp(scv=10,mean=1)",
        "pareto(alpha=1.5,min=1,max=100)",
        "pareto(alpha=1,min=0.5,max=50)",
        "pareto(alpha=2,min=0.5,max=50)",
        "pareto(alpha=0.3,min=0.5,max=5000)",
    ];
    for text in texts {
        let d = svc(text);
        for j in 1..=2 {
            let want = brute(&d, j);
            let got = if j == 1 { d.mean() } else { d.second_moment() };
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "{text} E[X^{j}]: closed form {got:.17e}, brute force {want:.17e}"
            );
        }
    }
    // Exponential clamped above at h: E[min(X,h)] = m (1 - e^(-h/m)),
    // E[min(X,h)^2] = 2 m^2 (1 - e^(-h/m)(1 + h/m)).
    let d = svc("exp(mean=1,max=2)");
    close(d.mean(), 1.0 - (-2f64).exp(), 1e-14);
    close(d.second_moment(), 2.0 * (1.0 - 3.0 * (-2f64).exp()), 1e-14);
    // Det clamps are exact.
    assert_eq!(svc("det(value=2,max=1.5)").mean(), 1.5);
    assert_eq!(svc("det(value=2,min=2.5)").second_moment(), 6.25);
    assert_eq!(svc("det(value=2,min=2.5)").scv(), 0.0);
}

#[test]
fn bounded_pareto_special_cases_are_continuous() {
    for alpha in [1.0f64, 2.0] {
        let at = svc(&format!("pareto(alpha={alpha},min=1,max=1000)"));
        for eps in [1e-12, -1e-12, 1e-7, -1e-7] {
            let near = svc(&format!("pareto(alpha={},min=1,max=1000)", alpha + eps));
            close(near.mean(), at.mean(), 1e-5 * eps.abs().max(1e-10) / 1e-7);
            close(
                near.second_moment(),
                at.second_moment(),
                1e-5 * eps.abs().max(1e-10) / 1e-7,
            );
        }
    }
    // alpha = 1: E[X^2] = L H exactly.
    close(
        svc("pareto(alpha=1,min=2,max=30)").second_moment(),
        60.0,
        1e-14,
    );
}

#[test]
fn with_mean_keeps_the_shape() {
    let path = temp_file("wm.txt", "0.5\n1\n7\n");
    let emp = format!("empirical(file={},min=0.8,max=5)", path.display());
    let emp_linear = format!(
        "empirical(file={},min=0.8,max=5,smooth=linear)",
        path.display()
    );
    for text in [
        "exp(mean=1)",
        "det(value=3)",
        "erlang(k=5,mean=2)",
        "gamma(shape=0.2,scale=4)",
        "hyperexp(scv=9,mean=0.5)",
        "lognormal(scv=3,median=2)",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        "weibull(shape=3,scale=2)",
        "pareto(alpha=1.2,min=1,max=1000)",
        "uniform(min=2,max=5)",
        "gamma(shape=2,mean=1,min=0.5,max=3)",
        emp.as_str(),
        emp_linear.as_str(),
    ] {
        let d = svc(text);
        for m in [1e-3, 0.3333, 7.5, 1e3] {
            let e = d.with_mean(m);
            close(e.mean(), m, 1e-13);
            close(e.scv(), d.scv(), 1e-11);
            assert_eq!(e.is_clamped(), d.is_clamped());
            assert_eq!(
                (e.text(), e.name(), e.role()),
                (d.text(), d.name(), d.role())
            );
            let c = m / d.mean();
            close(e.quantile(0.9), c * d.quantile(0.9), 1e-12);
        }
    }
    let e = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)").with_mean(2.0);
    let k = 2.0 / 0.263_971_574_559_670_46;
    close(e.clamps().0, 0.01 * k, 1e-12);
    close(e.clamps().1, 30.0 * k, 1e-12);
}

#[test]
fn quantile_inverts_cdf() {
    // A continuous CDF (the resampled empirical law's steps are checked in
    // empirical_files_are_resampled_by_default).
    let path = temp_file("q.txt", "0.5\n1\n7\n");
    let emp = format!("empirical(file={},smooth=linear)", path.display());
    for text in [
        "exp(mean=2)",
        "erlang(k=4,mean=2)",
        "gamma(shape=0.3,scale=2)",
        "gamma(shape=30,scale=2)",
        "hyperexp(scv=20,mean=1)",
        "lognormal(sigma=2,median=3)",
        "weibull(shape=0.46,median=0.05)",
        "weibull(shape=4,scale=1)",
        "pareto(alpha=1.5,min=1,max=100)",
        "uniform(min=1,max=3)",
        emp.as_str(),
    ] {
        let d = svc(text);
        for p in [1e-9, 1e-4, 0.01, 0.3, 0.5, 0.77, 0.99, 1.0 - 1e-6] {
            let x = d.quantile(p);
            // Relative 1e-9, plus the rounding of x itself where the
            // support starts above 0 (pareto, uniform, empirical at p -> 0).
            let tol = 1e-9 * p + 1e-15;
            assert!(
                (d.cdf(x) - p).abs() <= tol,
                "{text}: cdf(quantile({p})) = {}",
                d.cdf(x)
            );
            close(d.quantile(d.cdf(x)), x, 1e-9);
        }
    }
    let d = svc("weibull(shape=0.46,median=0.05,min=0.01,max=30)");
    close(d.quantile(0.5), 0.05, 1e-14);
    assert_eq!(
        (d.quantile(0.0), d.quantile(0.1), d.quantile(1.0)),
        (0.01, 0.01, 30.0)
    );
    assert_eq!((d.cdf(0.009), d.cdf(30.0)), (0.0, 1.0));
    close(svc("lognormal(sigma=2,median=3)").quantile(0.5), 3.0, 1e-14);
    assert_eq!(svc("exp(mean=1)").quantile(1.0), f64::INFINITY);
    assert_eq!(svc("exp(mean=1)").quantile(0.0), 0.0);
    assert_eq!(svc("det(value=2)").quantile(0.4), 2.0);
    assert_eq!(svc("pareto(alpha=1.5,min=1,max=100)").quantile(1.0), 100.0);
}

#[test]
fn is_clamped_only_when_the_clamps_cut() {
    assert!(!svc("exp(mean=1)").is_clamped());
    assert!(!svc("exp(mean=1,min=0)").is_clamped());
    assert!(svc("exp(mean=1,max=5)").is_clamped());
    assert!(svc("exp(mean=1,min=0.1)").is_clamped());
    assert!(!svc("det(value=2,min=1,max=5)").is_clamped());
    assert!(svc("det(value=2,max=1)").is_clamped());
    assert!(!svc("pareto(alpha=1,min=1,max=5)").is_clamped());
    assert!(!svc("uniform(min=1,max=5)").is_clamped());
    // The closed-form scv of an unclamped law and the general one agree.
    let d = svc("weibull(shape=0.46,median=0.05,min=0.0000001,max=1e30)");
    assert!(d.is_clamped());
    close(d.scv(), svc("weibull(shape=0.46,median=0.05)").scv(), 1e-8);
}

#[test]
fn special_functions_match_known_values() {
    let pi = std::f64::consts::PI;
    close(gamma_fn(0.5), pi.sqrt(), 1e-14);
    close(gamma_fn(1.0), 1.0, 1e-14);
    close(gamma_fn(5.0), 24.0, 1e-14);
    close(gamma_fn(10.0), 362_880.0, 1e-14);
    close(gamma_fn(1.0 / 3.0), 2.678_938_534_707_747_6, 1e-14);
    close(gamma_fn(0.01), 99.432_585_119_150_6, 1e-13);
    close(ln_gamma(100.0), 359.134_205_369_575_4, 1e-15);
    // P(1, x) = 1 - e^-x; P(2, x) = 1 - e^-x (1 + x).
    for x in [1e-8f64, 0.3, 1.0, 2.5, 40.0] {
        let (p, q) = gamma_pq(1.0, x);
        close(p, -(-x).exp_m1(), 1e-14);
        close(q, (-x).exp(), 1e-14);
        close(gamma_pq(2.0, x).1, (-x).exp() * (1.0 + x), 1e-14);
    }
    // Q(k, x) = Poisson(x) CDF at k - 1, both branches.
    for x in [5.0f64, 20.0] {
        let mut term = (-x).exp();
        let mut sum = term;
        for i in 1..10 {
            term *= x / f64::from(i);
            sum += term;
        }
        close(gamma_pq(10.0, x).1, sum, 1e-13);
    }
    // erf(1), erfc(2), Phi(-10).
    close(gamma_pq(0.5, 1.0).0, 0.842_700_792_949_714_9, 1e-15);
    close(gamma_pq(0.5, 4.0).1, 0.004_677_734_981_047_266, 1e-14);
    close(normal_cdf_pair(-10.0).0, 7.619_853_024_160_527e-24, 1e-13);
    close(normal_cdf_pair(10.0).1, 7.619_853_024_160_527e-24, 1e-13);
    close(normal_cdf_pair(1.0).0, 0.841_344_746_068_542_9, 1e-15);
    assert_eq!(normal_cdf_pair(0.0), (0.5, 0.5));
}

#[test]
fn split_list_cases() {
    assert_eq!(
        split_list("exp(mean=1),weibull(shape=0.5,mean=2)").unwrap(),
        vec!["exp(mean=1)", "weibull(shape=0.5,mean=2)"]
    );
    assert_eq!(split_list("exp").unwrap(), vec!["exp"]);
    assert_eq!(
        split_list(" exp , det(value=1) ,erlang(k=2)").unwrap(),
        vec!["exp", "det(value=1)", "erlang(k=2)"]
    );
    assert_eq!(
        split_list("0.5,0.7,0.9").unwrap(),
        vec!["0.5", "0.7", "0.9"]
    );
    assert!(split_list("").unwrap_err().starts_with("empty list"));
    assert!(split_list("exp,,det")
        .unwrap_err()
        .starts_with("item 2 of 'exp,,det' is empty"));
    assert!(split_list("exp,")
        .unwrap_err()
        .starts_with("item 2 of 'exp,' is empty"));
    assert!(split_list(",exp")
        .unwrap_err()
        .starts_with("item 1 of ',exp' is empty"));
    assert!(split_list("exp(mean=1")
        .unwrap_err()
        .starts_with("unbalanced '('"));
    assert!(split_list("exp(mean=1)),det")
        .unwrap_err()
        .starts_with("unbalanced ')'"));
    assert!(split_list("exp)(")
        .unwrap_err()
        .starts_with("unbalanced ')'"));
    // Every item of a split list parses on its own.
    for item in split_list("exp(mean=1),weibull(shape=0.5,mean=2)").unwrap() {
        svc(&item);
    }
}

/// The arrival example of `law`, parsed; `empirical(file=times.txt)` and
/// `trace(file=arrivals.txt)` read temporary files.
fn arrival_example(law: LawName) -> Dist {
    let times = temp_file("times.txt", "1\n2\n4\n");
    temp_file("arrivals.txt", "0\n1\n2.5\n4\n");
    Dist::parse(
        law.arrival_example(),
        Role::Arrival,
        times.parent().unwrap(),
    )
    .unwrap_or_else(|e| panic!("the arrival example of {law} should parse: {e}"))
}

#[test]
fn law_names_round_trip() {
    assert_eq!(LawName::ALL.len(), LAW_NAMES.len());
    for (law, name) in LawName::ALL.into_iter().zip(LAW_NAMES) {
        assert_eq!(law.as_str(), name);
        assert_eq!(law.to_string(), name);
        assert_eq!(LawName::from_name(name), Some(law));
        // Every law's arrival example parses, and to that law.
        let d = arrival_example(law);
        assert_eq!((d.law_name(), d.name()), (law, name));
        assert_eq!(
            law.min_max_is_support(),
            matches!(name, "pareto" | "uniform")
        );
    }
    assert_eq!(LawName::from_name("Exp"), None);
    assert_eq!(LawName::from_name("expo"), None);
    assert_eq!(
        LAW_NAMES.join(", "),
        "exp, det, erlang, gamma, hyperexp, lognormal, weibull, pareto, uniform, empirical, mmpp, trace"
    );
}

/// The mapping `run::point` (then `sweep.rs`) used before `Dist::law_moments` existed: the
/// family from the law's name, with an `Empirical` fallback.
fn law_moments_by_name(d: &Dist) -> crate::analytic::LawMoments {
    use crate::analytic::{Family, LawMoments};
    let family = match d.name() {
        "exp" => Family::Exp,
        "det" => Family::Det,
        "erlang" => Family::Erlang {
            k: d.erlang_k().unwrap_or(1),
        },
        "gamma" => Family::Gamma {
            shape: d.gamma_shape().unwrap_or(1.0),
        },
        "hyperexp" => Family::HyperExp,
        "lognormal" => Family::Lognormal,
        "weibull" => Family::Weibull,
        "pareto" => Family::Pareto,
        "uniform" => Family::Uniform,
        _ => Family::Empirical,
    };
    LawMoments {
        family,
        mean: d.mean(),
        scv: d.scv(),
        clamped: d.is_clamped(),
    }
}

#[test]
fn law_moments_match_the_name_based_mapping() {
    use crate::analytic::Family;
    let path = temp_file("lm.txt", "0.5\n1\n7\n");
    let emp = format!("empirical(file={})", path.display());
    let emp_clamped = format!("empirical(file={},min=0.8,max=5)", path.display());
    let emp_linear = format!("empirical(file={},smooth=linear)", path.display());
    let service = [
        "exp(mean=0.5)",
        "exp(mean=1,max=2)",
        "det(value=2)",
        "det(value=2,max=1.5)",
        "erlang(k=4,mean=2)",
        "erlang(k=3,mean=1,max=2)",
        "gamma(shape=0.3,mean=1)",
        "gamma(shape=0.3,mean=1,min=0.01,max=5)",
        "hyperexp(scv=4,mean=2)",
        "lognormal(sigma=1,median=2)",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        "weibull(shape=2,scale=1)",
        "pareto(alpha=1.5,min=1,max=100)",
        "uniform(min=1,max=3)",
        emp.as_str(),
        emp_clamped.as_str(),
        emp_linear.as_str(),
    ];
    let mut seen = Vec::new();
    for text in service {
        let d = svc(text);
        assert_eq!(d.law_moments(), law_moments_by_name(&d), "{text}");
        seen.push(d.law_name());
    }
    for law in LawName::ALL {
        let d = arrival_example(law).with_mean(0.25);
        if law == LawName::Mmpp {
            // An arrival process only: its family carries the process.
            let m = d.law_moments();
            assert_eq!(m.family, Family::Mmpp(d.mmpp().unwrap()));
            close(m.mean, 0.25, 1e-12);
            continue;
        }
        if law == LawName::Trace {
            // A replayed log: the gaps' empirical moments, no family.
            let m = d.law_moments();
            assert_eq!(m.family, Family::Trace);
            close(m.mean, 0.25, 1e-6);
            continue;
        }
        assert!(seen.contains(&law), "{law} not covered");
        assert_eq!(d.law_moments(), law_moments_by_name(&d), "{law}");
    }
    let m = svc("erlang(k=4,mean=2)").law_moments();
    assert_eq!(m.family, Family::Erlang { k: 4 });
    close(m.mean, 2.0, 1e-15);
    close(m.scv, 0.25, 1e-15);
    assert!(!m.clamped);
    assert_eq!(
        svc("gamma(shape=0.3,mean=1)").law_moments().family,
        Family::Gamma { shape: 0.3 }
    );
    assert!(svc("exp(mean=1,max=2)").law_moments().clamped);
}

#[test]
fn empirical_cdf_by_binary_search_equals_the_segment_sum() {
    // The O(n) definition: each segment's share, summed in order.
    fn by_segments(values: &[f64], scale: f64, x: f64) -> f64 {
        let sum: f64 = values
            .windows(2)
            .map(|w| {
                let (a, b) = (w[0] * scale, w[1] * scale);
                if x >= b {
                    1.0
                } else if x < a {
                    0.0
                } else {
                    (x - a) / (b - a)
                }
            })
            .sum();
        sum / (values.len() - 1) as f64
    }
    // Ties included (a step in the CDF), and the table's own values.
    let text = "0.5\n1\n1\n1\n2.5\n3\n3\n7.25\n9\n";
    let d = empirical("ties.txt", text, ",smooth=linear").with_mean(2.0);
    let Shape::Empirical { values, scale, .. } = &d.shape else {
        panic!("empirical")
    };
    let mut xs: Vec<f64> = values.iter().map(|v| v * scale).collect();
    xs.extend((0..2000).map(|i| f64::from(i) * 0.011 - 1.0));
    for x in xs {
        assert_eq!(d.cdf(x), by_segments(values, *scale, x), "x = {x}");
    }
}

#[test]
fn tail_moments_match_quadrature() {
    // E[Y^j; Y > x] for Y = clamp(X): for lo <= x < hi, the density's
    // integral over X > x (Y = min(X, hi) there), from the textbook
    // densities, at quantiles from the body to far in the tail.
    for text in [
        "exp(mean=2)",
        "erlang(k=3,mean=1)",
        "gamma(shape=0.5,mean=2)",
        "hyperexp(scv=10,mean=1)",
        "lognormal(scv=100,mean=1)",
        "weibull(shape=0.46,median=0.05)",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        "pareto(alpha=1.2,min=1,max=1e7)",
        "pareto(alpha=2,min=1,max=10)",
        "exp(mean=1,min=0.5,max=3)",
    ] {
        let d = svc(text);
        let (xf, tmin, tmax) = density(&d);
        for p in [0.3, 0.9, 0.999, 0.999_999] {
            let x = d.quantile(p);
            for j in 0..=2 {
                let got = d.tail_moment(j, x);
                let want = if x >= d.hi {
                    0.0
                } else {
                    brute_moment(&*xf, d.lo, d.hi, j, tmin.max(x.ln()), tmax)
                };
                assert!(
                    (got - want).abs() <= 1e-8 * want.abs() + 1e-300,
                    "{text}: E[Y^{j}; Y > {x}] = {got}, quadrature {want}"
                );
            }
        }
        // Below the support (or the lower clamp) the whole moment; at the
        // top nothing.
        close(d.tail_moment(2, 0.0), d.second_moment(), 1e-12);
        close(d.tail_moment(0, 0.0), 1.0, 1e-12);
        assert_eq!(d.tail_moment(1, d.quantile(1.0)), 0.0, "{text}");
    }
    let d = svc("exp(mean=1,min=0.5,max=3)");
    close(d.tail_moment(1, 0.2), d.mean(), 1e-15);
    // The atom at the upper clamp: P(Y > x) = P(X > x) down to x = hi.
    close(d.tail_moment(0, 2.999), (-2.999f64).exp(), 1e-12);
    assert_eq!(d.tail_moment(0, 3.0), 0.0);
}

#[test]
fn tail_moments_of_atoms_and_tables_are_exact() {
    let det = svc("det(value=2)");
    assert_eq!(det.tail_moment(0, 1.9), 1.0);
    assert_eq!(det.tail_moment(2, 1.9), 4.0);
    assert_eq!(det.tail_moment(1, 2.0), 0.0);
    let uni = svc("uniform(min=1,max=3)");
    close(uni.tail_moment(0, 2.0), 0.5, 1e-15);
    close(uni.tail_moment(1, 2.0), 1.25, 1e-15);
    close(uni.tail_moment(2, 2.0), 19.0 / 6.0, 1e-15);
    let table = "1\n2\n2\n5\n";
    let resampled = empirical("tails.txt", table, "");
    close(resampled.tail_moment(1, 2.0), 5.0 / 4.0, 1e-15);
    close(resampled.tail_moment(2, 1.5), 33.0 / 4.0, 1e-15);
    // Smoothed: segments [1,2], [2,2] (an atom at 2), [2,5], 1/3 each.
    let smooth = empirical("tails-smooth.txt", table, ",smooth=linear");
    close(smooth.tail_moment(1, 3.0), (25.0 - 9.0) / 18.0, 1e-15);
    close(smooth.tail_moment(0, 1.5), (0.5 + 1.0 + 1.0) / 3.0, 1e-15);
    close(smooth.tail_moment(2, 0.0), smooth.second_moment(), 1e-14);
}

#[test]
fn integrated_cdf_is_the_integral_of_the_cdf() {
    // G(x) = ∫_0^x F: Simpson on the CDF, split where it jumps (the clamps).
    for text in [
        "exp(mean=2)",
        "gamma(shape=0.5,mean=2)",
        "hyperexp(scv=10,mean=1)",
        "lognormal(scv=2,mean=1)",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
        "pareto(alpha=1.5,min=1,max=100)",
        "uniform(min=1,max=3)",
        "exp(mean=1,min=0.5,max=3)",
    ] {
        let d = svc(text);
        for p in [0.05, 0.5, 0.99, 0.99999] {
            let x = 1.3 * d.quantile(p);
            // F = 0 below the lower clamp: integrate from it (an endpoint
            // at the jump would cost Simpson F(lo) h / 3).
            let mut cuts = vec![d.lo.min(x)];
            cuts.extend([d.hi].into_iter().filter(|&c| c > d.lo && c < x));
            cuts.push(x);
            let want: f64 = cuts
                .windows(2)
                .map(|w| simpson(&|u| d.cdf(u), w[0], w[1], 400_000))
                .sum();
            let got = d.integrated_cdf(x);
            assert!(
                (got - want).abs() <= 1e-7 * want + 1e-9 * x,
                "{text}: G({x}) = {got}, quadrature {want}"
            );
        }
        assert_eq!(d.integrated_cdf(0.0), 0.0);
        // Far beyond the support, G(x) = x − E[Y].
        let far = 10.0 * d.quantile(0.999_999);
        close(d.integrated_cdf(far), far - d.mean(), 1e-9);
    }
    let det = svc("det(value=2)");
    assert_eq!(det.integrated_cdf(1.5), 0.0);
    assert_eq!(det.integrated_cdf(3.0), 1.0);
    let table = "1\n2\n2\n5\n";
    let resampled = empirical("g.txt", table, "");
    close(resampled.integrated_cdf(3.0), 1.0, 1e-15);
    close(resampled.integrated_cdf(1.5), 0.125, 1e-15);
    let smooth = empirical("g-smooth.txt", table, ",smooth=linear");
    close(smooth.integrated_cdf(3.0), 16.0 / 18.0, 1e-14);
    close(smooth.integrated_cdf(1.5), 0.125 / 3.0, 1e-14);
    close(smooth.integrated_cdf(9.0), 9.0 - smooth.mean(), 1e-14);
}

/// `mmpp(rates=[..],switch=[..])`: list values stay whole through the
/// law's keys and through `split_list` (as `--arrival` and spec lists
/// split them); the law is normalised to mean 1 like every arrival law, and
/// its record carries the sojourn means, arrival probabilities and the
/// start-phase threshold.
#[test]
fn mmpp_parses_with_lists_in_flags_and_lists() {
    let items = split_list("mmpp(rates=[1,9],switch=[0.1,0.1]), exp").unwrap();
    assert_eq!(items, ["mmpp(rates=[1,9],switch=[0.1,0.1])", "exp"]);
    let d = arr(&items[0]);
    assert_eq!(d.name(), "mmpp");
    close(d.mean(), 1.0, 1e-12);
    let m = d.mmpp().unwrap();
    close(m.mean_rate(), 1.0, 1e-12);
    // Rates [1, 9] with equal switching: mean rate 5, so everything / 5.
    close(m.rates[1], 1.8, 1e-12);
    close(m.switch[0], 0.02, 1e-12);
    let spaced = arr("mmpp( rates = [ 1 , 9 ] , switch=[0.1, 0.1] )");
    assert_eq!(spaced.mmpp(), d.mmpp());
    // The load rescales time: rates and switching together.
    let m2 = d.with_mean(0.5).mmpp().unwrap();
    close(m2.rates[0], 0.4, 1e-12);
    close(m2.switch[1], 0.04, 1e-12);
    close(m2.dispersion(), m.dispersion(), 1e-12);
    let law = d.to_law(&mut Vec::new());
    assert_eq!(law.kind(), crate::contract::LawKind::Mmpp);
    close(f64::from(law.p[0]), 1.0 / 0.22, 1e-6);
    close(f64::from(law.p[3]), 1.8 / 1.82, 1e-6);
    assert_eq!(law.n, 1 << 31);
    // Its moments and scv are the stationary interarrival's (mmpp.rs), and
    // its CDF inverts.
    assert!(d.scv() > 1.0);
    for p in [0.01, 0.5, 0.99] {
        close(d.cdf(d.quantile(p)), p, 1e-9);
    }
    let lm = d.law_moments();
    assert_eq!(lm.family, crate::analytic::Family::Mmpp(m));
}

/// Bad MMPPs are refused with one line naming the field and what is
/// expected; more than two phases are not supported.
#[test]
fn mmpp_errors_name_the_field() {
    let e = arr_err("mmpp(rates=[1,2,3],switch=[1,1,1])");
    assert!(e.contains("rates has 3 values; expected 2"), "{e}");
    let e = arr_err("mmpp(rates=[1],switch=[1])");
    assert!(e.contains("rates has 1 values; expected 2"), "{e}");
    let e = arr_err("mmpp(rates=[1,2])");
    assert!(e.contains("needs switch=[a,b]"), "{e}");
    let e = arr_err("mmpp(rates=1,switch=[1,1])");
    assert!(e.contains("rates must be a list [a,b]"), "{e}");
    let e = arr_err("mmpp(rates=[1,2],switch=[0,1])");
    assert!(
        e.contains("switch must hold positive finite numbers, got '0'"),
        "{e}"
    );
    let e = arr_err("mmpp(rates=[1,-2],switch=[1,1])");
    assert!(e.contains("rates must hold nonnegative"), "{e}");
    let e = arr_err("mmpp(rates=[0,0],switch=[1,1])");
    assert!(e.contains("never emits an arrival"), "{e}");
    let e = arr_err("mmpp(rates=[1,2,switch=[1,1])");
    assert!(e.contains("unbalanced '['"), "{e}");
    let e = arr_err("mmpp(rates=[1,2],switch=[1e4,1e4])");
    assert!(e.contains("below the 2^-10"), "{e}");
    let e = arr_err("mmpp(rates=[1,2],switch=[1,1],mean=2)");
    assert!(e.contains("unknown key 'mean'"), "{e}");
    let e = svc_err("mmpp(rates=[1,2],switch=[1,1])");
    assert!(e.contains("arrival process, not a service law"), "{e}");
    // An interrupted Poisson process (one silent phase) is fine.
    let ipp = arr("mmpp(rates=[0,4],switch=[1,3])");
    close(ipp.mean(), 1.0, 1e-12);
}

/// The MMPP's interarrival moments against quadrature of its CDF: E[X] =
/// ∫(1 − F), E[X²] = 2 ∫ x (1 − F).
#[test]
fn mmpp_moments_match_quadrature_of_its_cdf() {
    for text in [
        "mmpp(rates=[1,9],switch=[0.1,0.1])",
        "mmpp(rates=[0,4],switch=[1,3])",
        "mmpp(rates=[2,2],switch=[1,5])",
    ] {
        let d = arr(text);
        let top = d.quantile(1.0 - 1e-15);
        let m1 = simpson(&|x| 1.0 - d.cdf(x), 0.0, top, 200_000);
        let m2 = simpson(&|x| 2.0 * x * (1.0 - d.cdf(x)), 0.0, top, 200_000);
        close(m1, d.mean(), 1e-6);
        close(m2, d.second_moment(), 1e-6);
    }
    close(arr("mmpp(rates=[2,2],switch=[1,5])").scv(), 1.0, 1e-9);
}

fn trace(name: &str, content: &str) -> Dist {
    let path = temp_file(name, content);
    arr(&format!("trace(file={})", path.display()))
}

fn trace_err(name: &str, content: &str) -> String {
    let path = temp_file(name, content);
    let dir = path.parent().unwrap().to_path_buf();
    err_in(Role::Arrival, &format!("trace(file={name})"), &dir)
}

/// `trace(file=...)`: timestamps become their gaps, kept in file order for
/// the engines' table (not sorted: the replay's order is the point) and
/// normalised to mean 1 like every arrival law; its moments are the gaps'
/// (the law of the gap at a random position) and no renewal formula
/// applies to it (`Family::Trace`).
#[test]
fn trace_replays_its_gaps_in_file_order() {
    let d = trace(
        "t1.txt",
        "# seconds\n100.0\n100.5\n\n101.5\n101.75\n104.75\n",
    );
    assert_eq!(d.name(), "trace");
    assert!(!d.is_renewal());
    assert_eq!(d.smoothing(), None);
    // Gaps 0.5, 1, 0.25, 3: mean 1.1875.
    close(d.mean(), 1.0, 1e-12);
    let gaps = [0.5, 1.0, 0.25, 3.0].map(|g: f64| g / 1.1875);
    let m2 = gaps.iter().map(|g| g * g).sum::<f64>() / 4.0;
    close(d.second_moment(), m2, 1e-6);
    let mut table = vec![7.0f32];
    let law = d.with_mean(2.0).to_law(&mut table);
    assert_eq!(law.kind(), crate::contract::LawKind::Trace);
    assert_eq!((law.offset, law.n), (1, 4));
    assert_eq!(&table[1..], &[0.5, 1.0, 0.25, 3.0]);
    close(f64::from(law.scale), 2.0 / 1.1875, 1e-6);
    assert!(d.data_file().is_some());
    assert_eq!(d.law_moments().family, crate::analytic::Family::Trace);
    // Absolute epoch timestamps keep their millisecond gaps, to f64's
    // resolution at 1.7e9 s (2.4e-7 s), before the f32 rounding.
    let epoch = trace("t2.txt", "1733200000.001\n1733200000.003\n1733200000.004\n");
    let law = epoch.to_law(&mut table);
    let start = law.offset as usize;
    close(f64::from(table[start]), 0.002, 2e-4);
    close(f64::from(table[start + 1]), 0.001, 3e-4);
}

/// A trace in a unit far from its gaps' own (1e-39 between timestamps, or
/// 1e30) replays as the same trace in a unit near 1 (issue 40: its gaps
/// were subnormal in f32 and the rescale factor infinite, so the mean wait
/// was 0 at rho 0.8). The scale to a mean of 2 stays finite, and the
/// table's gaps keep their ratios.
#[test]
fn a_trace_in_a_tiny_or_huge_unit_replays_as_in_seconds() {
    let seconds = trace("s.txt", "0\n1\n3\n3.5\n");
    let mut table = Vec::new();
    let want = seconds.with_mean(2.0).to_law(&mut table);
    let want_gaps: Vec<f64> = table
        .iter()
        .map(|&g| f64::from(g) * f64::from(want.scale))
        .collect();
    for (name, text) in [
        ("tiny.txt", "0\n1e-39\n3e-39\n3.5e-39\n"),
        ("huge.txt", "0\n1e30\n3e30\n3.5e30\n"),
    ] {
        let d = trace(name, text);
        let mut table = Vec::new();
        let law = d.with_mean(2.0).to_law(&mut table);
        assert!(
            law.scale.is_finite() && law.scale > 0.0,
            "{name}: {}",
            law.scale
        );
        let gaps: Vec<f64> = table
            .iter()
            .map(|&g| f64::from(g) * f64::from(law.scale))
            .collect();
        for (g, w) in gaps.iter().zip(&want_gaps) {
            close(*g, *w, 1e-6);
        }
        close(d.mean(), 1.0, 1e-12);
    }
}

/// A trace's index of dispersion at windows of √n mean gaps: near 0 for
/// evenly spaced arrivals, near 1 for Poisson arrivals, well above 1 for
/// the shipped bursty log (an MMPP whose asymptotic index is 16.7).
#[test]
fn trace_dispersion_tells_even_poisson_and_bursty_apart() {
    let even: Vec<f64> = vec![1.0; 10_000];
    assert!(
        trace_dispersion(&even) < 0.05,
        "{}",
        trace_dispersion(&even)
    );
    let mut s = crate::rng::Stream::new(5, 0, 0);
    let poisson: Vec<f64> = (0..40_000)
        .map(|_| -f64::from(s.uniform_full().0).ln())
        .collect();
    let idc = trace_dispersion(&poisson);
    assert!((0.7..1.3).contains(&idc), "Poisson trace: {idc}");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let bursty = Dist::parse("trace(file=bursty-trace.txt)", Role::Arrival, &data).unwrap();
    let idc = bursty.dispersion();
    assert!(idc > 4.0, "bursty trace: {idc}");
    // The column's value for a renewal law is its scv, for an MMPP the
    // closed form.
    close(arr("hyperexp(scv=4)").dispersion(), 4.0, 1e-9);
}

/// Bad trace files and a trace as a service law are refused in one line
/// naming the file, the line and what is expected.
#[test]
fn trace_errors_name_the_file_and_line() {
    let e = trace_err("dec.txt", "1\n2\n# x\n1.5\n");
    assert_eq!(
        e,
        "arrival: trace file 'dec.txt' line 4: timestamp 1.5 is before line 2's; expected \
         timestamps in nondecreasing order (sort the log first)"
    );
    let e = trace_err("one.txt", "# only\n5\n");
    assert!(e.contains("fewer than two timestamps"), "{e}");
    let e = trace_err("flat.txt", "5\n5\n5\n");
    assert!(e.contains("all its timestamps equal"), "{e}");
    let e = trace_err("word.txt", "1\nnoon\n");
    assert!(e.contains("line 2: 'noon' is not a number"), "{e}");
    let e = trace_err("inf.txt", "1\ninf\n");
    assert!(e.contains("line 2: 'inf' is not a finite number"), "{e}");
    let e = err_in(
        Role::Arrival,
        "trace(file=absent.txt)",
        Path::new("/nonexistent"),
    );
    assert!(
        e.starts_with("arrival: trace file 'absent.txt' cannot be read"),
        "{e}"
    );
    let e = arr_err("trace");
    assert!(e.contains("trace needs file="), "{e}");
    let e = arr_err("trace(file=x.txt,mean=2)");
    assert!(e.contains("unknown key 'mean'"), "{e}");
    let e = svc_err("trace(file=x.txt)");
    assert!(
        e.contains("trace is an arrival process, not a service law"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}
