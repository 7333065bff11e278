#!/usr/bin/env python3
"""SimPy peer: an FCFS queue in front of `c` servers, written the way the
SimPy documentation writes it — a `simpy.Resource(capacity=c)` and one
generator process per customer, started by a source process.

    python simpy_peer.py --point mmc --customers 200000 --seed 1

Prints one JSON line (see peers_common.emit). `seconds` times env.run() only
(not the import or the process start); every customer counts in
customers/s, warm-up included, as in qsweep's customers_per_s.
"""

import argparse
import random
import time

import simpy

import peers_common as pc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pc.add_args(ap)
    args = ap.parse_args()
    point = pc.POINTS[args.point]
    lam = pc.arrival_rate(args.point)

    # Separate streams for arrivals and service, as qsweep uses one stream
    # per replication; either way draws are i.i.d.
    arr_rng = random.Random(args.seed)
    svc_rng = random.Random(args.seed + 1_000_003)
    if point["service"] == "exp":
        rate = 1.0 / point["service_mean"]
        service = lambda: svc_rng.expovariate(rate)  # noqa: E731
    else:
        mu, sigma = pc.lognormal_params(point["service_mean"], point["service_scv"])
        service = lambda: svc_rng.lognormvariate(mu, sigma)  # noqa: E731

    waits = [0.0] * args.customers

    def customer(env, i, server):
        arrived = env.now
        with server.request() as req:
            yield req
            waits[i] = env.now - arrived
            yield env.timeout(service())

    def source(env, server):
        for i in range(args.customers):
            env.process(customer(env, i, server))
            yield env.timeout(arr_rng.expovariate(lam))

    env = simpy.Environment()
    server = simpy.Resource(env, capacity=point["servers"])
    env.process(source(env, server))
    started = time.perf_counter()
    env.run()  # until every customer has been served
    seconds = time.perf_counter() - started

    pc.emit("SimPy", args.point, args.customers, args.warmup, seconds,
            waits[args.warmup:], args.seed, simpy.__version__)


if __name__ == "__main__":
    main()
