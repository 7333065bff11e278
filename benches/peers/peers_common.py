"""Shared by the SimPy and Ciw peers: the two benchmark points, exact mean
waits, a batch-means confidence interval, and the one-line JSON result.

Standard library only, so the exact values can be computed without the venv.
"""

import json
import math
import statistics

# The two points of the comparison. Both have exponential interarrivals
# (Poisson arrivals) and a single FCFS queue in front of `servers` servers.
#   mmc: M/M/51, service exp(mean 1), rho 0.98  -> lambda = 0.98 * 51 = 49.98
#   mg1: M/G/1, service lognormal(mean 1, scv 4), rho 0.9 -> lambda = 0.9
POINTS = {
    "mmc": {"servers": 51, "rho": 0.98, "service": "exp", "service_mean": 1.0, "service_scv": 1.0},
    "mg1": {"servers": 1, "rho": 0.9, "service": "lognormal", "service_mean": 1.0, "service_scv": 4.0},
}


def arrival_rate(point):
    p = POINTS[point]
    return p["rho"] * p["servers"] / p["service_mean"]


def lognormal_params(mean, scv):
    """(mu, sigma) of the underlying normal for a lognormal of this mean and scv."""
    sigma2 = math.log1p(scv)
    return math.log(mean) - sigma2 / 2.0, math.sqrt(sigma2)


def erlang_c_wait(lam, mu, c):
    """Mean wait in queue of M/M/c (Erlang C / (c mu - lam)), computed stably."""
    a = lam / mu
    # Erlang B by the usual recursion, then C = B / (1 - rho (1 - B)).
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    erlang_c = b / (1.0 - rho * (1.0 - b))
    return erlang_c / (c * mu - lam)


def pk_wait(lam, mean, scv):
    """Pollaczek-Khinchine mean wait of M/G/1: lam E[S^2] / (2 (1 - rho))."""
    rho = lam * mean
    return lam * mean * mean * (1.0 + scv) / (2.0 * (1.0 - rho))


def exact_mean_wait(point):
    p = POINTS[point]
    lam = arrival_rate(point)
    if p["service"] == "exp":
        return erlang_c_wait(lam, 1.0 / p["service_mean"], p["servers"])
    assert p["servers"] == 1
    return pk_wait(lam, p["service_mean"], p["service_scv"])


def batch_means_ci95(waits, batches=20):
    """Half-width of a 95% batch-means CI on the mean of a correlated series
    (20 batches, Student t with 19 d.o.f.). Crude at heavy load, but it tells
    the reader how far a single long run can be from the exact value."""
    n = len(waits) // batches
    if n < 2:
        return float("nan")
    means = [math.fsum(waits[i * n:(i + 1) * n]) / n for i in range(batches)]
    return 2.093 * statistics.stdev(means) / math.sqrt(batches)


def emit(tool, point, customers, warmup, seconds, waits, seed, version):
    """Print the result as one JSON line (read by report.py)."""
    print(json.dumps({
        "tool": tool,
        "version": version,
        "backend": "python (1 thread)",
        "point": point,
        "seed": seed,
        "customers": customers,
        "warmup": warmup,
        "recorded": len(waits),
        "seconds": seconds,
        "mean_wait": math.fsum(waits) / len(waits),
        "mean_wait_ci95": batch_means_ci95(waits),
        "exact_mean_wait": exact_mean_wait(point),
    }))


def add_args(parser):
    parser.add_argument("--point", choices=sorted(POINTS), required=True)
    parser.add_argument("--customers", type=int, default=200_000,
                        help="customers simulated in all, warm-up included")
    parser.add_argument("--warmup", type=int, default=20_000,
                        help="first customers (by arrival) left out of the mean wait")
    parser.add_argument("--seed", type=int, default=1)
