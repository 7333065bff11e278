#!/usr/bin/env python3
"""Collects the rows of run.sh and writes the comparison table.

    report.py qsweep-row CSV LABEL PROCESS_SECONDS   # one qsweep CSV -> JSON line
    report.py table ROWS.jsonl OUT.csv OUT.md MACHINE.txt NOTES.txt

Standard library only (runs with the system python3 too).
"""

import csv
import json
import math
import sys

import peers_common as pc

POINT_OF = {(51, 0.98): "mmc", (1, 0.9): "mg1"}
POINT_TITLE = {
    "mmc": "M/M/51, rho 0.98 (exp service mean 1, lambda 49.98, FCFS central queue)",
    "mg1": "M/G/1, rho 0.9 (lognormal service mean 1, scv 4, lambda 0.9)",
}


def qsweep_row(path, label, process_seconds):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1, f"{path}: expected one point, got {len(rows)}"
    r = rows[0]
    point = POINT_OF[(int(r["servers"]), round(float(r["rho"]), 4))]
    reps, n, w = int(r["reps"]), int(r["customers"]), int(r["warmup"])
    print(json.dumps({
        "tool": "qsweep",
        "version": "",
        "backend": label,
        "engine": r["backend"],
        "point": point,
        "seed": int(r["seed"]),
        "customers": reps * (n + w),
        "layout": f"{reps} reps x ({w} + {n})",
        "warmup": reps * w,
        "recorded": reps * n,
        "seconds": float(r["seconds"]),
        "qsweep_customers_per_s": float(r["customers_per_s"]),
        "process_seconds": float(process_seconds),
        "mean_wait": float(r["mean_wait"]),
        "mean_wait_ci95": float(r["mean_wait_ci95"] or "nan"),
        "exact_mean_wait": pc.exact_mean_wait(point),
        "qsweep_analytic_mean_wait": float(r["analytic_mean_wait"] or "nan"),
    }))


def verdict(row):
    """'ok' when the mean wait is within 2 CI half-widths of the exact value
    (about 4 standard errors: batch means understate the error at heavy
    load), else MISMATCH: that run did not simulate the system it claims."""
    err = abs(row["mean_wait"] - row["exact_mean_wait"])
    ci = row["mean_wait_ci95"]
    if math.isnan(ci):
        return "?"
    return "ok" if err <= 2.0 * ci else "MISMATCH"


def fmt_num(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}g}"


def table(rows_path, out_csv, out_md, machine_path, notes_path):
    rows = [json.loads(line) for line in open(rows_path) if line.strip()]
    for r in rows:
        r["customers_per_s"] = r["customers"] / r["seconds"]
        r["check"] = verdict(r)
    best_py = {}
    for r in rows:
        if r["tool"] != "qsweep":
            best_py[r["point"]] = max(best_py.get(r["point"], 0.0), r["customers_per_s"])
    for r in rows:
        b = best_py.get(r["point"])
        r["ratio"] = r["customers_per_s"] / b if b else float("nan")

    cols = ["point", "tool", "backend", "customers", "seconds", "customers_per_s",
            "ratio_to_fastest_python", "mean_wait", "mean_wait_ci95",
            "exact_mean_wait", "check", "process_seconds", "layout", "version"]
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([r["point"], r["tool"], r["backend"], r["customers"],
                        f"{r['seconds']:.4g}", f"{r['customers_per_s']:.4g}",
                        f"{r['ratio']:.4g}", f"{r['mean_wait']:.6g}",
                        f"{r['mean_wait_ci95']:.3g}", f"{r['exact_mean_wait']:.6g}",
                        r["check"], f"{r.get('process_seconds', float('nan')):.3g}",
                        r.get("layout", ""), r.get("version", "")])

    head = ["tool", "backend", "customers", "seconds", "customers/s",
            "x fastest Python", "mean wait ± ci95", "exact", "check"]
    def cells(r):
        return [r["tool"], r["backend"], f"{r['customers']:.3g}", f"{r['seconds']:.3g}",
                f"{r['customers_per_s']:.3g}", f"{r['ratio']:.3g}",
                f"{r['mean_wait']:.4g} ± {fmt_num(r['mean_wait_ci95'], 2)}",
                f"{r['exact_mean_wait']:.4g}", r["check"]]

    points = [p for p in ("mmc", "mg1") if any(r["point"] == p for r in rows)]
    # Plain-text table on stdout.
    for p in points:
        body = [cells(r) for r in rows if r["point"] == p]
        width = [max(len(x) for x in col) for col in zip(head, *body)]
        print(f"\n{POINT_TITLE[p]}")
        for line in [head] + body:
            print("  ".join(x.ljust(wd) for x, wd in zip(line, width)).rstrip())
    # Markdown.
    md = []
    md.append("# qsweep vs SimPy and Ciw: measured side by side\n")
    md.append("Written by `benches/peers/run.sh`; see docs/speed.md for what is measured.\n")
    md.append("```\n" + open(machine_path).read().rstrip() + "\n```\n")
    for p in points:
        md.append(f"## {POINT_TITLE[p]}\n")
        md.append("| " + " | ".join(head) + " |")
        md.append("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            if r["point"] == p:
                md.append("| " + " | ".join(cells(r)) + " |")
        md.append("")
    md.append("customers: every simulated customer, warm-up included "
              "(qsweep: reps x (warm-up + recorded)). seconds: simulation only "
              "(Python: `env.run()` / `simulate_until_max_customers`; qsweep: the "
              "CSV's `seconds`, engine time without start-up or shader compile; "
              "whole-process times are in results.csv, `process_seconds`). "
              "check: ok when |mean wait - exact| <= 2 x ci95 (Python ci95: "
              "batch means, 20 batches); a MISMATCH row did not simulate the "
              "system and its throughput must not be quoted.\n")
    mismatched = [r for r in rows if r["check"] == "MISMATCH"]
    notes = open(notes_path).read().rstrip()
    if mismatched or notes:
        md.append("## Problems seen in this run\n")
        for r in mismatched:
            md.append(f"- {r['tool']} [{r['backend']}] on {r['point']}: mean wait "
                      f"{r['mean_wait']:.4g} ± {fmt_num(r['mean_wait_ci95'], 2)} vs exact "
                      f"{r['exact_mean_wait']:.4g}: MISMATCH, its customers/s is not a real rate.")
        if notes:
            md.append(("\n" if mismatched else "") + "```\n" + notes + "\n```")
            print("\nProblems:\n" + notes)
        md.append("")
    open(out_md, "w").write("\n".join(md))


if __name__ == "__main__":
    if sys.argv[1] == "qsweep-row":
        qsweep_row(*sys.argv[2:5])
    elif sys.argv[1] == "table":
        table(*sys.argv[2:7])
    else:
        sys.exit(__doc__)
