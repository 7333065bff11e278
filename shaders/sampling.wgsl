// Drawing from a Law: the WGSL twin of src/sampling.rs (read its doc comment
// for the algorithms and their sources). Same words consumed in the same
// order, same f32 arithmetic.

// GAMMA_MAX_TRIES, ERLANG_DIRECT_MAX, GEOMETRIC_CAP and the STATUS_* bits
// come from src/sampling.rs and src/contract.rs (see common.wgsl).

var<private> rng_status: u32;

// sqrt(2) * erfinv(2u - 1), Giles (2011).
fn normal_quantile(u: f32) -> f32 {
    let x = 2.0 * u - 1.0;
    var w = -log(4.0 * u * (1.0 - u));
    var p: f32;
    if (w < 5.0) {
        w = w - 2.5;
        p = 2.8102264e-8;
        p = 3.4327394e-7 + p * w;
        p = -3.5233877e-6 + p * w;
        p = -4.3915065e-6 + p * w;
        p = 2.1858087e-4 + p * w;
        p = -1.253725e-3 + p * w;
        p = -4.1776816e-3 + p * w;
        p = 2.4664073e-1 + p * w;
        p = 1.5014094 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -2.0021426e-4;
        p = 1.0095056e-4 + p * w;
        p = 1.3493432e-3 + p * w;
        p = -3.6734284e-3 + p * w;
        p = 5.7395077e-3 + p * w;
        p = -7.6224613e-3 + p * w;
        p = 9.4388705e-3 + p * w;
        p = 1.001674 + p * w;
        p = 2.8329768 + p * w;
    }
    return 1.4142135 * p * x;
}

fn exponential(mean: f32) -> f32 {
    return -mean * log(uniform_open0());
}

// Gamma(shape, scale), Marsaglia & Tsang (2000).
fn gamma(shape: f32, scale: f32) -> f32 {
    let boosted = shape < 1.0;
    var a = shape;
    if (boosted) {
        a = shape + 1.0;
    }
    let d = a - 1.0 / 3.0;
    let c = 1.0 / sqrt(9.0 * d);
    var result = d;
    var accepted = false;
    for (var i = 0u; i < GAMMA_MAX_TRIES; i++) {
        let z = normal_quantile(uniform_open());
        let v = 1.0 + c * z;
        let u = uniform_open0();
        if (v <= 0.0) {
            continue;
        }
        let v3 = v * v * v;
        if (log(u) < 0.5 * z * z + d - d * v3 + d * log(v3)) {
            result = d * v3;
            accepted = true;
            break;
        }
    }
    if (!accepted) {
        rng_status |= STATUS_SAMPLER_BOUND;
    }
    if (boosted) {
        let u = uniform_open0();
        result *= exp(log(u) / shape);
    }
    return result * scale;
}

fn erlang(m: u32, phase_mean: f32) -> f32 {
    if (m > ERLANG_DIRECT_MAX) {
        return gamma(f32(m), phase_mean);
    }
    var log_sum = 0.0;
    for (var i = 0u; i < m; i++) {
        log_sum += log(uniform_open0());
    }
    return -phase_mean * log_sum;
}

fn draw(law: Law) -> f32 {
    var x = 0.0;
    switch law.kind {
        case LAW_EXP: {
            x = exponential(law.p.x);
        }
        case LAW_DET: {
            x = law.p.x;
        }
        case LAW_ERLANG: {
            x = erlang(law.n, law.p.x);
        }
        case LAW_GAMMA: {
            x = gamma(law.p.x, law.p.y);
        }
        case LAW_HYPEREXP: {
            let branch = uniform_closed0();
            var mean = law.p.z;
            if (branch < law.p.x) {
                mean = law.p.y;
            }
            x = exponential(mean);
        }
        case LAW_LOGNORMAL: {
            x = exp(law.p.x + law.p.y * normal_quantile(uniform_open()));
        }
        case LAW_WEIBULL: {
            let e = -log(uniform_open());
            x = law.p.x * exp(law.p.y * log(e));
        }
        case LAW_PARETO: {
            let q = 1.0 - exp(law.p.x * log(law.p.y / law.p.z));
            let u = uniform_closed0();
            x = law.p.y * exp(-log(1.0 - u * q) / law.p.x);
        }
        case LAW_UNIFORM: {
            x = law.p.x + law.p.y * uniform_closed0();
        }
        case LAW_EMPIRICAL: {
            let u = uniform_closed0();
            if (law.n < 2u) {
                x = table[law.offset];
            } else {
                let pos = u * f32(law.n - 1u);
                let i = min(u32(pos), law.n - 2u);
                let frac = pos - f32(i);
                let a = table[law.offset + i];
                let b = table[law.offset + i + 1u];
                x = a + frac * (b - a);
            }
        }
        default: {}
    }
    return min(max(law.scale * x, law.lo), law.hi);
}

// Sum of m draws: closed forms for laws closed under convolution.
fn draw_sum(law: Law, m: u32) -> f32 {
    switch law.kind {
        case LAW_EXP: {
            return law.scale * erlang(m, law.p.x);
        }
        case LAW_ERLANG: {
            return law.scale * erlang(m * law.n, law.p.x);
        }
        case LAW_GAMMA: {
            return law.scale * gamma(f32(m) * law.p.x, law.p.y);
        }
        case LAW_DET: {
            return law.scale * law.p.x * f32(m);
        }
        default: {
            var sum = 0.0;
            for (var i = 0u; i < m; i++) {
                sum += draw(law);
            }
            return sum;
        }
    }
}

fn ln_keep(p: PointParams) -> f32 {
    if (p.route_n > 1u) {
        return log(1.0 - 1.0 / f32(p.route_n));
    }
    return -1.0;
}

// Interarrival time at the simulated queue (see sampling.rs).
fn next_interarrival(p: PointParams, lk: f32) -> f32 {
    if (p.thinning == THIN_RANDOM && p.route_n > 1u) {
        if (p.arrival.kind == LAW_EXP) {
            return exponential(p.arrival.scale * p.arrival.p.x * f32(p.route_n));
        }
        let u = uniform_open0();
        let mf = 1.0 + floor(log(u) / lk);
        var m = GEOMETRIC_CAP;
        if (mf < f32(GEOMETRIC_CAP)) {
            m = u32(mf);
        }
        return draw_sum(p.arrival, m);
    }
    if (p.thinning == THIN_EVERY_NTH && p.route_n > 1u) {
        return draw_sum(p.arrival, p.route_n);
    }
    return draw(p.arrival);
}
