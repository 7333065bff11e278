"""The Python module against the CLI: same rows, same values, same errors.

Needs the CLI binary: $QSWEEP_BIN, else target/debug/qsweep (built by
`cargo build` or `cargo test`). Run with `python -m pytest python/tests`.
"""

from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import qsweep

ROOT = Path(__file__).resolve().parents[2]
QSWEEP = Path(os.environ.get("QSWEEP_BIN", ROOT / "target" / "debug" / "qsweep"))
# What depends on the machine, not on the spec and seed (TIMING_COLUMNS in
# src/output.rs).
MACHINE = ["backend", "seconds", "customers_per_s"]

WEIBULL = "weibull(shape=0.46,median=0.05,min=0.01,max=30)"
# 32 points: every kind of column (choices empty and filled, exact and
# approximate baselines, a law with commas inside), in under a second.
GRID = dict(
    routing=["random", "central", "pod", "jsq"],
    servers=[2, 5],
    rho=[0.5, 0.85],
    service=["exp(rate=3)", WEIBULL],
)
AXES = dict(GRID, reps=16, customers=3000, warmup=300, seed=11)
SPEC_TOML = textwrap.dedent(
    f"""\
    [sweep]
    routing = ["random", "central", "pod", "jsq"]
    servers = [2, 5]
    rho = [0.5, 0.85]
    service = ["exp(rate=3)", "{WEIBULL}"]

    [run]
    reps = 16
    customers = 3000
    warmup = 300
    seed = 11
    out = "never-written.csv"
    """
)


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    if not QSWEEP.exists():
        pytest.fail(f"{QSWEEP} not found: build the CLI first (cargo build) or set QSWEEP_BIN")
    p = subprocess.run([str(QSWEEP), *args], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        pytest.fail(f"qsweep {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


def cli_flags(axes: dict) -> list[str]:
    """The axes as a person types them: comma lists, --flag value."""
    out = []
    for k, v in axes.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, list):
            # Laws with commas go as repeated flags, the rest comma-joined.
            if any("," in str(x) for x in v):
                for x in v:
                    out += [flag, str(x)]
            else:
                out += [flag, ",".join(str(x) for x in v)]
        else:
            out += [flag, str(v)]
    return out


def raw(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def without_machine(header, rows):
    keep = [i for i, c in enumerate(header) if c not in MACHINE]
    return [header[i] for i in keep], [[r[i] for i in keep] for r in rows]


def assert_frame_holds(df: pd.DataFrame, header: list[str], rows: list[list[str]]):
    """Every cell of `df` is exactly the CSV's text read as its dtype."""
    assert list(df.columns) == header
    assert len(df) == len(rows)
    for j, name in enumerate(header):
        col = df[name]
        for i, text in enumerate(rows):
            cell, v = text[j], col.iloc[i]
            if cell == "":
                assert v is None or pd.isna(v), (name, i, v)
            elif col.dtype == "boolean" or cell in ("true", "false"):
                assert v == (cell == "true"), (name, i, v)
            elif name in qsweep.INT_COLUMNS:
                assert col.dtype in ("Int64", "UInt64") and v == int(cell), (name, i, v)
            elif col.dtype == np.float64:
                # The double nearest the CSV's text, bit for bit.
                assert v == float(cell) or (math.isnan(v) and cell == ""), (name, i, v, cell)
            else:
                assert v == cell, (name, i, v)


def test_run_equals_the_cli_csv(tmp_path):
    cli_csv = tmp_path / "cli.csv"
    cli("run", "-q", "--backend", "cpu", "-o", str(cli_csv), *cli_flags(AXES))
    py_csv = tmp_path / "py.csv"
    df = qsweep.run(**AXES, backend="cpu", out=py_csv, quiet=True)

    header, rows = raw(cli_csv)
    assert len(rows) == 32
    assert header == list(qsweep.COLUMNS) == list(df.columns)
    # The CSV the module wrote is the CLI's, text for text.
    assert without_machine(*raw(py_csv)) == without_machine(header, rows)
    # The frame holds those values, exactly.
    keep = [c for c in header if c not in MACHINE]
    _, kept_rows = without_machine(header, rows)
    assert_frame_holds(df[keep], keep, kept_rows)
    assert (df["backend"] == "cpu").all()
    # ...and equals the CLI's CSV loaded back.
    pd.testing.assert_frame_equal(
        df.drop(columns=MACHINE), qsweep.load(cli_csv).drop(columns=MACHINE), check_exact=True
    )

    # Dtypes, from the column: counts nullable Int64, other numbers float64
    # (even when whole), flags boolean, text as text, pod's d <NA> where it
    # does not apply.
    for c in ["point", "servers", "workers", "reps", "customers", "warmup", "routers", "waited"]:
        assert df[c].dtype == "Int64", c
    assert df["seed"].dtype == "UInt64"
    for c in ["lambda", "rho", "service_scv", "mean_wait", "p99_wait", "analytic_mean_wait"]:
        assert df[c].dtype == np.float64, c
    assert df["stable"].dtype == "boolean"
    assert df["choices"].dtype == "Int64"
    assert set(df.loc[df.routing == "pod", "choices"]) == {2}
    assert df.loc[df.routing != "pod", "choices"].isna().all()
    assert df["converged"].isna().all()
    assert pd.api.types.is_string_dtype(df["routing"])
    assert df.loc[df.service == WEIBULL, "service"].size == 16
    assert df.attrs["qsweep"]["engines"] == "cpu"


def test_spec_text_path_and_rerun(tmp_path):
    # A spec given as text, twice (no "already exists": the spec's own
    # `out` is not used), and as a file: the same rows.
    a = qsweep.run(SPEC_TOML, backend="cpu", quiet=True)
    b = qsweep.run(SPEC_TOML, backend="cpu", quiet=True)
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(SPEC_TOML)
    c = qsweep.run(spec_file, backend="cpu", progress=False)
    d = qsweep.run(str(spec_file), backend="cpu", quiet=True)
    e = qsweep.run(**AXES, backend="cpu", quiet=True)
    for other in (b, c, d, e):
        pd.testing.assert_frame_equal(
            a.drop(columns=MACHINE), other.drop(columns=MACHINE), check_exact=True
        )
    assert not (Path.cwd() / "never-written.csv").exists()
    # A flag overrides the spec's axis, as on the command line.
    f = qsweep.run(SPEC_TOML, backend="cpu", quiet=True, servers=3)
    assert set(f.servers) == {3} and len(f) == 16


def test_bad_input_raises_the_cli_message(tmp_path):
    cases = [
        (["--servers", "0"], dict(servers=0)),
        (["--rho", "0.9", "--lambda", "2"], dict(rho=0.9, lambda_=2)),
        (["--service", "exp(rat=3)"], dict(service="exp(rat=3)")),
        (["--routing", "random,nope"], dict(routing=["random", "nope"])),
        (["--reps", "1.5"], dict(reps=1.5)),
        (["--backend", "tpu"], dict(backend="tpu")),
        (["--warmup", "soon"], dict(warmup="soon")),
    ]
    for flags, kwargs in cases:
        p = cli("run", "-q", "-o", str(tmp_path / "never.csv"), *flags, check=False)
        assert p.returncode == 2, p.stderr
        line = p.stderr.strip().splitlines()[-1]
        assert line.startswith("qsweep: error: ")
        with pytest.raises(ValueError) as e:
            qsweep.run(**kwargs, quiet=True)
        assert str(e.value) == line.removeprefix("qsweep: error: "), kwargs
    assert not (tmp_path / "never.csv").exists()

    # A spec given as text is named <string> in its messages.
    with pytest.raises(ValueError, match=r"^<string>:2: \[sweep\] servers"):
        qsweep.run("[sweep]\nservers = [0]\n", quiet=True)
    with pytest.raises(ValueError, match="cannot read spec file"):
        qsweep.run(tmp_path / "missing.toml", quiet=True)
    # An existing out= is refused, as -o is, unless force.
    out = tmp_path / "r.csv"
    small = dict(routing="random", servers=1, rho=0.5, service="exp(rate=1)", reps=2,
                 customers=100, warmup=10, backend="cpu", quiet=True)
    # Two replications give CIs too wide to trust: said as a warning.
    with pytest.warns(qsweep.QsweepWarning, match="1 of 1 points have a mean-wait or p99"):
        qsweep.run(**small, out=out)
    with pytest.raises(ValueError, match="already exists"):
        qsweep.run(**small, out=out)
    assert len(qsweep.run(**small, out=out, force=True)) == 1
    # Names the CLI does not know are Python's TypeError.
    with pytest.raises(TypeError, match="unexpected keyword argument 'server'"):
        qsweep.run(server=4)
    with pytest.raises(TypeError):
        qsweep.run(servers=[True])


def test_analytic_equals_the_cli(tmp_path):
    out = tmp_path / "analytic.csv"
    cli("analytic", "-o", str(out), *cli_flags(GRID))
    df = qsweep.analytic(**GRID, quiet=True)
    header, rows = raw(out)
    assert list(df.columns) == header
    assert_frame_holds(df, header, rows)
    pd.testing.assert_frame_equal(df, qsweep.load(out), check_exact=True)
    # The built-in study: Erlang C exactly where it applies.
    seed = qsweep.analytic(quiet=True)
    assert (seed.loc[seed.routing == "central", "analytic_method"] == "exact:erlang_c").all()
    with pytest.raises(ValueError, match="--servers"):
        qsweep.analytic(servers=-1)
    # Like the CLI's `analytic`, it takes the grid's axes, not run settings.
    with pytest.raises(TypeError, match="'reps'"):
        qsweep.analytic(**AXES)


def test_load_types_columns_it_has_never_seen(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text(
        "point,servers,choices,converged,stable,mean_wait,new_count,new_text,empty\n"
        "0,2,,true,true,0,5,a,\n"
        "1,3,2,,false,1.5e-7,6,,\n"
    )
    df = qsweep.load(p)
    assert df.point.dtype == "Int64" and df.servers.dtype == "Int64"
    assert df.choices.dtype == "Int64" and pd.isna(df.choices[0]) and df.choices[1] == 2
    assert df.converged.dtype == "boolean"
    assert df.converged[0] and pd.isna(df.converged[1])
    assert df.stable.dtype == "boolean"
    assert df.mean_wait.dtype == np.float64 and df.mean_wait[1] == float("1.5e-7")
    # A numeric column qsweep does not write is typed by its cells: float64.
    assert df.new_count.dtype == np.float64
    assert df.new_text[0] == "a" and pd.isna(df.new_text[1])
    assert df["empty"].dtype == object and df["empty"].isna().all()
    # A cell that is not of its column's type is refused.
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("point,servers\n0,many\n")
    with pytest.raises(ValueError, match="column 'servers', line 2: 'many' is not an integer"):
        qsweep.load(wrong)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1\n")
    with pytest.raises(ValueError, match="line 2: 1 fields; expected 2"):
        qsweep.load(bad)


def test_the_gil_is_released_while_simulating():
    # A Python loop keeps running beside a sweep of several seconds.
    done = threading.Event()
    result = {}

    def sweep():
        result["df"] = qsweep.run(routing="random", servers=[1, 2, 3, 4], rho=0.9,
                                  service="exp(rate=1)", reps=64, customers=300_000,
                                  warmup=1000, backend="cpu", threads=1, quiet=True)
        done.set()

    t = threading.Thread(target=sweep)
    start = time.monotonic()
    t.start()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    elapsed = time.monotonic() - start
    assert len(result["df"]) == 4
    assert elapsed > 0.3, "the sweep was too short to tell"
    # Held, the GIL would let this thread run only between points.
    assert spins / elapsed > 1e5, (spins, elapsed)


CHILD = """
import sys, time, qsweep
out = sys.argv[1] if len(sys.argv) > 1 else None
print("go", flush=True)
t = time.monotonic()
try:
    qsweep.run(routing="random", servers=list(range(1, 41)), rho=0.95, service="exp(rate=1)",
               reps=256, customers=2_000_000, warmup=1000, backend="cpu", quiet=True, out=out)
    print("returned", flush=True)
except KeyboardInterrupt:
    print(f"interrupted {time.monotonic() - t:.3f}", flush=True)
"""


@pytest.mark.parametrize("keep", [False, True], ids=["temporary", "out"])
def test_ctrl_c_raises_keyboard_interrupt_promptly(tmp_path, keep):
    # A sweep of minutes, interrupted after a second and a half, in the
    # middle of an engine call: KeyboardInterrupt within the polling interval
    # (0.1 s), or with out= within the grace given the run to stop (2 s).
    args = [str(tmp_path / "kept.csv")] if keep else []
    child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "go"
    time.sleep(1.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    line = child.stdout.readline().strip()
    waited = time.monotonic() - sent
    child.wait(timeout=60)
    assert line.startswith("interrupted"), line
    assert waited < (3.0 if keep else 0.6), waited
    print(f"KeyboardInterrupt {waited:.2f} s after SIGINT ({'out=' if keep else 'temporary CSV'})")
    if keep:
        # The CSV is there, with its header (the point in flight was lost).
        assert raw(tmp_path / "kept.csv")[0] == list(qsweep.COLUMNS)


CHILD_FORCE = """
import sys, qsweep
print("go", flush=True)
try:
    qsweep.run(routing="random", servers=list(range(1, 41)), rho=0.95, service="exp(rate=1)",
               reps=256, customers=2_000_000, warmup=1000, backend="cpu", progress=False,
               out=sys.argv[1], force=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_says_once_where_the_rows_are_and_how_to_resume_in_python(tmp_path):
    # Issue 26: after Ctrl-C the module printed two messages that disagreed,
    # one a shell command built from the Python script's own arguments.
    out = tmp_path / "kept.csv"
    out.write_text("old results\n")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_FORCE, str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "go"
    time.sleep(1.5)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert stdout.strip() == "interrupted", (stdout, stderr)
    told = [line for line in stderr.splitlines() if "interrupted" in line]
    assert len(told) == 1, stderr
    assert "--resume" not in stderr, stderr
    # --force keeps the old CSV until the new one is complete: the note
    # names the partial CSV, and resuming it is the call it gives.
    assert "qsweep.run(..., out='" in stderr, stderr
    assert "kept.csv.partial', resume=True)" in stderr, stderr
    partial = tmp_path / "kept.csv.partial"
    assert out.read_text() == "old results\n"
    assert raw(partial)[0] == list(qsweep.COLUMNS)


def test_backend_gpu_equals_the_cli_on_the_gpu(tmp_path):
    adapters = cli("adapters").stdout
    if adapters.startswith("no GPU adapters"):
        if os.environ.get("QSWEEP_REQUIRE_GPU") == "1":
            pytest.fail("QSWEEP_REQUIRE_GPU=1 but no GPU adapter")
        pytest.skip("no GPU adapter")
    axes = dict(AXES, routing=["random", "central"], reps=8, customers=1000, warmup=100)
    cli_csv = tmp_path / "gpu.csv"
    cli("run", "-q", "--backend", "gpu", "-o", str(cli_csv), *cli_flags(axes))
    df = qsweep.run(**axes, backend="gpu", quiet=True)
    # The same adapter as the CLI's (e.g. "vulkan:llvmpipe ..."), not the CPU.
    assert list(df.backend) == list(qsweep.load(cli_csv).backend)
    assert "cpu" not in set(df.backend)
    pd.testing.assert_frame_equal(
        df.drop(columns=MACHINE), qsweep.load(cli_csv).drop(columns=MACHINE), check_exact=True
    )


def test_the_notebook_example_runs():
    # examples/seed_study.py, with 16 replications a point instead of 512.
    env = dict(os.environ, QSWEEP_EXAMPLE_REPS="16")
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "seed_study.py")],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "R = 60: random 1.6" in p.stdout, p.stdout
    # Run as a script, it prints its tables (issue 26: it showed none).
    for text in ["analytic_mean_wait", "mean_wait_ci95", "ci_widths"]:
        assert text in p.stdout, p.stdout


def test_types_come_from_the_column_so_runs_concatenate(tmp_path):
    """Two runs whose cells differ (random: no choices, no max_in_system, no
    errors; pod: both filled) load with the same dtypes and concatenate
    without changing them; their Parquet files concatenate too."""
    small = dict(servers=3, rho=0.7, service="exp(mean=1)", reps=8, customers=2000,
                 warmup=200, seed=1, backend="cpu", quiet=True)
    a = qsweep.run(routing="random", **small)
    b = qsweep.run(routing="pod", **small)
    assert dict(a.dtypes) == dict(b.dtypes)
    for c in ["waited", "max_in_system", "choices"]:
        assert a[c].dtype == "Int64", c
    assert a["max_in_system"].isna().all() and b["max_in_system"].notna().all()
    # An all-empty text column is still text.
    assert a["error"].dtype == object and not a["error"].str.len().notna().any()
    both = pd.concat([a, b], ignore_index=True)
    assert dict(both.dtypes) == dict(a.dtypes)
    pq = pytest.importorskip("pyarrow.parquet")
    for name, routing in [("a", "random"), ("b", "pod")]:
        cli("run", "-q", "--routing", routing, "--servers", "3", "--rho", "0.7",
            "--service", "exp(mean=1)", "--reps", "8", "--customers", "2000", "--warmup", "200",
            "--backend", "cpu", "-o", str(tmp_path / f"{name}.parquet"))
    assert pq.read_schema(tmp_path / "a.parquet") == pq.read_schema(tmp_path / "b.parquet")
    pa = pd.read_parquet(tmp_path / "a.parquet", dtype_backend="numpy_nullable")
    pb = pd.read_parquet(tmp_path / "b.parquet", dtype_backend="numpy_nullable")
    assert dict(pa.dtypes) == dict(pb.dtypes)
    assert pa["max_in_system"].dtype == "Int64"
    joined = pd.concat([pa, pb], ignore_index=True)
    assert len(joined) == 2 and dict(joined.dtypes) == dict(pa.dtypes)


def test_the_readme_example_raises_no_wide_ci_warning():
    """docs/python.md's first Python example, run as printed (issue 26: it
    triggered the wide-CI warning itself)."""
    import warnings

    text = (ROOT / "docs" / "python.md").read_text()
    start = text.index("```python\nimport qsweep\n")
    code = text[start + len("```python\n"):text.index("```", start + 10)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", qsweep.QsweepWarning)
        exec(compile(code, "docs/python.md", "exec"), {})


def test_the_progress_bar_counts_customers(monkeypatch):
    """The bar moves by customers simulated out of those planned, not by
    points (issue 26): a small point and a large one are not one step each."""
    from qsweep import _progress

    bars = []

    class Bar:
        def __init__(self, total=None, unit="", **kw):
            self.total, self.unit, self.n = total, unit, 0.0
            bars.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, s, refresh=True):
            self.postfix = s

        def write(self, msg, file=None):
            pass

        def close(self):
            pass

    monkeypatch.setattr(_progress, "_bar_class", lambda: Bar)
    qsweep.run(routing="random", servers=[1, 2], rho=0.5, service="exp(mean=1)",
               reps=8, customers=1000, warmup=100, backend="cpu")
    (bar,) = bars
    assert bar.unit.strip() == "customers"
    # 2 points × 8 replications × 1100 customers (warm-up included).
    assert bar.total == 2 * 8 * 1100, bar.total
    assert bar.n == bar.total and bar.postfix == "2/2 points"
