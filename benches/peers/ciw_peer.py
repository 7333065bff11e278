#!/usr/bin/env python3
"""Ciw peer: a one-node ciw.Network with Exponential arrivals, the service
law as a Ciw distribution (Exponential, or Lognormal for the M/G/1 point)
and number_of_servers=c; Ciw's default discipline is FIFO.

    python ciw_peer.py --point mg1 --customers 200000 --seed 1

Runs simulate_until_max_customers(customers, method="Finish"): the run stops
at the customers-th departure, so exactly `customers` customers are served
and counted (the few still queued at that instant are simulated in part but
not counted, which slightly understates Ciw's rate). Prints one JSON line
(see peers_common.emit). `seconds` times the simulation only.
"""

import argparse
import time

import ciw

import peers_common as pc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pc.add_args(ap)
    args = ap.parse_args()
    point = pc.POINTS[args.point]
    lam = pc.arrival_rate(args.point)

    if point["service"] == "exp":
        service = ciw.dists.Exponential(rate=1.0 / point["service_mean"])
    else:
        # Ciw's Lognormal takes the mean and sd of the underlying normal.
        mu, sigma = pc.lognormal_params(point["service_mean"], point["service_scv"])
        service = ciw.dists.Lognormal(mean=mu, sd=sigma)

    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(rate=lam)],
        service_distributions=[service],
        number_of_servers=[point["servers"]],
    )
    ciw.seed(args.seed)
    sim = ciw.Simulation(network)
    started = time.perf_counter()
    sim.simulate_until_max_customers(args.customers, method="Finish")
    seconds = time.perf_counter() - started

    recs = sorted(sim.get_all_records(), key=lambda r: r.arrival_date)
    assert len(recs) == args.customers, len(recs)
    waits = [r.waiting_time for r in recs[args.warmup:]]
    pc.emit("Ciw", args.point, args.customers, args.warmup, seconds,
            waits, args.seed, ciw.__version__)


if __name__ == "__main__":
    main()
