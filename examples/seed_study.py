# %% [markdown]
# # Random vs central routing at λ = 150 requests/s
#
# qsweep's default study (`data/seed.toml`) from Python: R dynos serving
# 150 requests/s with exponential service of mean 1/3 s, requests routed
# to a random dyno or held in one central queue. Open this file as a
# notebook (Jupyter with jupytext, VS Code or PyCharm read the `# %%`
# cells) or run it: `python examples/seed_study.py`. Needs the module:
# `pip install ./python` (and `tqdm` for a progress bar).

# %%
import os
from pathlib import Path

import pandas as pd

import qsweep


def show(table):
    """A table shown in a notebook (rich display) or printed when this file
    runs as a script, where a cell's last expression would show nothing."""
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is not None:
            display(table)
            return
    except ImportError:
        pass
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table, end="\n\n")


# 512 replications per point, as the study; fewer run faster (CI uses 16).
REPS = int(os.environ.get("QSWEEP_EXAMPLE_REPS", "512"))

# %% [markdown]
# ## Theory first, instantly
# Random routing makes each dyno an M/M/1 queue at λ/R; a central queue is
# M/M/R, whose exact mean wait is Erlang C's — far below the published
# 1/(Rμ − λ) once there is spare capacity.

# %%
theory = qsweep.analytic(
    routing=["random", "central"],
    servers=[51, 60, 75, 100, 1000, 4000],
    lambda_=150,
    service="exp(rate=3)",
)
show(theory.pivot(index="servers", columns="routing", values="analytic_mean_wait"))

# %% [markdown]
# ## Simulate
# `qsweep.run()` with no spec runs the default study: 20 points ×
# 512 replications × 200 000 customers (after 50 000 warm-up), about 20 s on
# two CPU cores, on the GPU where there is one. The frame has the CSV's
# columns and types.

# %%
df = qsweep.run(reps=REPS)
show(df[["routing", "servers", "rho", "mean_wait", "mean_wait_ci95", "p99_wait",
         "analytic_mean_wait", "analytic_method"]])

# %% [markdown]
# ## The headline: mean wait (s) by policy, with its 95% CI and exact theory

# %%
headline = df.pivot(
    index="servers",
    columns="routing",
    values=["mean_wait", "mean_wait_ci95", "analytic_mean_wait", "p99_wait"],
).swaplevel(axis=1)[["random", "central"]]
show(headline)

# %% [markdown]
# At R = 60 random routing waits about 1.67 s on average, a central queue
# about 3.9 ms. The simulated means sit within their 95% CIs of the exact
# values at most points — at a 95% level about one point in twenty misses,
# by a little (the table below says which and by how many CI widths).

# %%
r60 = df[df.servers == 60].set_index("routing").mean_wait
print(f"R = 60: random {r60['random']:.4g} s, central {r60['central'] * 1e3:.3g} ms")
miss = df.assign(
    ci_widths=(df.mean_wait - df.analytic_mean_wait).abs() / df.mean_wait_ci95
)[lambda d: (d.mean_wait - d.analytic_mean_wait).abs() > d.mean_wait_ci95 + 1e-9]
print(f"{len(df) - len(miss)} of {len(df)} means within their 95% CI of theory")
show(miss[["routing", "servers", "mean_wait", "mean_wait_ci95", "analytic_mean_wait", "ci_widths"]])

# %% [markdown]
# ## The same rows as the CLI
# With the study's 512 replications the frame equals the committed
# `data/seed-results.csv` (written by `qsweep run`) in every column but the
# machine's (`backend`, `seconds`, `customers_per_s`).

# %%
here = Path.cwd()
committed = next(
    (p / "data" / "seed-results.csv" for p in [here, *here.parents]
     if (p / "data" / "seed-results.csv").exists()),
    None,
)
if REPS == 512 and committed is not None:
    machine = ["backend", "seconds", "customers_per_s"]
    pd.testing.assert_frame_equal(
        df.drop(columns=machine), qsweep.load(committed).drop(columns=machine), check_exact=True
    )
    print(f"identical to {committed}")
