#!/usr/bin/env python3
"""Write data/bursty-trace.txt, the small synthetic bursty request log that
`trace(file=...)` examples and tests replay.

Arrival timestamps (seconds, microsecond resolution) of a two-phase
Markov-modulated Poisson process: calm spells at 100 requests/s lasting 2 s
on average, bursts at 600 requests/s lasting 0.25 s on average, so the mean
rate is about 155.6/s (near the seed analysis's 150/s; this draw has 162/s)
and the asymptotic index of dispersion for counts 1 + 2 (r1 - r2)^2 s1 s2 /
((s1 + s2)^2 (r1 s2 + r2 s1)) = 71.5 (Heffes & Lucantoni 1986). 20,000
arrivals, about 123 s of traffic.
Deterministic (fixed seed), standard library only: rerun to regenerate the
same file.
"""
import random
import sys

RATES = (100.0, 600.0)  # requests/s in the calm and burst phases
LEAVE = (0.5, 4.0)  # 1/s: rate of leaving each phase
ARRIVALS = 20_000


def main(path):
    rng = random.Random(20261203)
    pi_burst = LEAVE[0] / (LEAVE[0] + LEAVE[1])
    phase = 1 if rng.random() < pi_burst else 0
    t, out = 0.0, []
    while len(out) < ARRIVALS:
        arrive = rng.expovariate(RATES[phase])
        leave = rng.expovariate(LEAVE[phase])
        if arrive < leave:
            t += arrive
            out.append(t)
        else:
            t += leave
            phase ^= 1
    with open(path, "w") as f:
        f.write("# synthetic bursty request log: scripts/make-bursty-trace.py\n")
        f.write("# MMPP rates 100/s and 600/s, mean spells 2 s and 0.25 s; seconds\n")
        for x in out:
            f.write(f"{x:.6f}\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/bursty-trace.txt")
