"""qsweep: GPU-accelerated Monte Carlo sweeps of queueing systems, as pandas
DataFrames.

- :func:`run` simulates a sweep, exactly as ``qsweep run`` does, and returns
  its results CSV as a DataFrame;
- :func:`analytic` returns the grid's analytic baselines (``qsweep analytic``);
- :func:`load` reads a results CSV (or an analytic one) with the same dtypes.

Keyword arguments are the CLI's flags (``servers=[51, 60]`` is
``--servers 51,60``; ``lambda_=150`` is ``--lambda 150``, ``max_customers``
is ``--max-customers``), checked by the CLI's own code: bad input raises
``ValueError`` with the CLI's one-line message. See the repository's
docs/python.md.
"""

from __future__ import annotations

import csv
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from . import _qsweep
from ._frame import frame
from ._progress import Reporter

__all__ = ["run", "analytic", "load", "COLUMNS", "INT_COLUMNS", "QsweepWarning", "__version__"]

__version__: str = _qsweep.VERSION

#: The results CSV's columns, in order (new columns are only ever appended).
COLUMNS: tuple[str, ...] = tuple(_qsweep.columns())

#: The results columns that count or index things: nullable ``Int64``
#: (``UInt64`` for ``seed``) in every frame.
INT_COLUMNS: frozenset[str] = frozenset(
    c for c in COLUMNS if _qsweep.column_kind(c) in ("int", "uint")
)


class QsweepWarning(UserWarning):
    """Points whose confidence intervals are too wide to trust."""


def _text(key: str, v: Any) -> str:
    """One flag value as the CLI would be given it."""
    if isinstance(v, bool):
        raise TypeError(f"{key}: {v!r} in a list; expected numbers or text")
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        # repr: the shortest text that reads back as the same double.
        return repr(float(v))
    if isinstance(v, (str, os.PathLike)):
        return os.fspath(v)
    raise TypeError(f"{key}: {v!r} ({type(v).__name__}); expected a number, text or a list of them")


def _argv(command: str, settings: Mapping[str, Any]) -> list[str]:
    """Keyword arguments as the CLI's flags: ``servers=[51, 60]`` is
    ``--servers=51 --servers=60`` (the CLI joins repeated list flags),
    ``force=True`` is ``--force``, None and False are left out."""
    known = set(_qsweep.flag_names(command))
    argv: list[str] = []
    for key, value in settings.items():
        flag = key.rstrip("_").replace("_", "-")
        if flag not in known:
            expected = ", ".join(sorted(k.replace("-", "_") for k in known))
            raise TypeError(
                f"qsweep.{command}() got an unexpected keyword argument '{key}'; expected one of: "
                f"{expected} (lambda as lambda_)"
            )
        if value is None or value is False:
            continue
        if value is True:
            argv.append(f"--{flag}")
        elif isinstance(value, (str, bytes, os.PathLike, numbers.Number)):
            argv.append(f"--{flag}={_text(key, value)}")
        elif isinstance(value, Iterable):
            items = [_text(key, v) for v in value]
            # An empty list reaches the CLI as such (and is refused there).
            argv.extend(f"--{flag}={v}" for v in items or [""])
        else:
            argv.append(f"--{flag}={_text(key, value)}")
    return argv


def _spec(spec: str | os.PathLike | None) -> tuple[str | None, str | None]:
    """(path, text): a path-like or a one-line string names a spec file; a
    string with a line break is the spec's TOML itself."""
    if spec is None:
        return None, None
    if isinstance(spec, str) and "\n" in spec:
        return None, spec
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec), None
    raise TypeError(f"spec: {spec!r}; expected a path or the TOML text of a spec")


def run(
    spec: str | os.PathLike | None = None,
    *,
    out: str | os.PathLike | None = None,
    force: bool = False,
    resume: bool = False,
    shard: str | None = None,
    from_meta: str | os.PathLike | None = None,
    quiet: bool = False,
    progress: bool = True,
    **axes_and_settings: Any,
) -> pd.DataFrame:
    """Simulate a sweep and return its results as a DataFrame.

    The same simulation, rows and values as ``qsweep run`` with the same spec
    and seed (the library writes the CSV exactly as the CLI does, and the
    frame holds its fields): one row per grid point, the CSV's columns in
    its order (``qsweep.COLUMNS``), counts and indices as int64, other
    numbers as float64, ``stable`` (and ``converged``) as bool, empty cells
    as NaN/None. Only ``backend``, ``seconds`` and ``customers_per_s``
    depend on the machine.

    Parameters
    ----------
    spec:
        A spec file's path, or a spec's TOML text (any string containing a
        line break); relative ``file=`` paths in a text resolve against the
        current directory. None: the built-in default study
        (``data/seed.toml``).
    **axes_and_settings:
        The flags of ``qsweep run``, each replacing the spec's axis or
        setting: ``routing``, ``choices``, ``routers``, ``servers``,
        ``workers``, ``arrival``, ``lambda_`` (``lambda`` is a Python
        keyword) or ``rho``, ``service`` (a value or a list), and ``reps``,
        ``customers``, ``warmup`` (a number or ``"auto"``), ``precision``,
        ``max_customers``, ``seed``, ``threads``, ``backend`` (``"auto"``,
        the default, takes the GPU where the CLI would; ``"gpu"``, ``"cpu"``),
        ``adapter``, ``allow_unstable=True``. Example:
        ``run(routing=["random", "central"], servers=[51, 60], rho=0.9,
        service="exp(rate=3)", reps=256, seed=1)``.
    out:
        Also keep the CSV (and its ``.meta.json``) here, as ``-o`` does: an
        existing file is refused unless ``force=True`` or ``resume=True``.
        Without it the CSV goes to a temporary folder that is removed
        afterwards, so re-running a notebook cell just works.
    resume, shard, from_meta:
        ``--resume`` (with ``out``), ``--shard K/N``, ``--from-meta META``.
    quiet:
        No progress and no notes on stderr (warnings about wide confidence
        intervals still come, as a :class:`QsweepWarning`).
    progress:
        Show progress on stderr: a tqdm bar when tqdm is installed (a
        notebook widget in Jupyter with ipywidgets), else one line per
        finished point.

    The simulation runs with the GIL released. Ctrl-C (or the notebook's
    interrupt) stops it: ``KeyboardInterrupt`` is raised within about two
    seconds; with ``out`` the rows finished so far are kept, and one note
    (unless ``quiet``) says where and gives the call that continues them
    (``qsweep.run(..., out=..., resume=True)``; after ``force=True`` the rows
    are in the partial CSV beside ``out``, which stays untouched until the
    resumed run completes and replaces it).

    Raises
    ------
    ValueError
        Bad input (spec, flags, output), with the CLI's one-line message.
    KeyboardInterrupt
        Interrupted.
    RuntimeError
        The simulation failed (e.g. the GPU was lost with ``backend="gpu"``).
    """
    settings = dict(axes_and_settings)
    settings.update(out=out, force=force, resume=resume, shard=shard, from_meta=from_meta)
    argv = _argv("run", settings)
    path, text = _spec(spec)
    if from_meta is not None and spec is not None:
        raise ValueError(
            f"--from-meta: the spec comes from '{os.fspath(from_meta)}'; expected no spec"
        )
    if resume and out is None:
        raise ValueError("--resume: no CSV named; expected out= with the CSV to resume")
    reporter = Reporter(quiet=quiet, progress=progress)
    try:
        (header, rows), info = _qsweep.run(argv, reporter, path, text)
    finally:
        reporter.close()
    wide = info["wide_points"]
    if wide:
        shown = ", ".join(str(p) for p in wide[:10]) + (", ..." if len(wide) > 10 else "")
        warnings.warn(
            f"{len(wide)} of {info['new_rows']} points have a mean-wait or p99 95% CI wider "
            f"than 10% of the estimate (points {shown}): more reps or customers, or precision",
            QsweepWarning,
            stacklevel=2,
        )
    df = frame(header, rows)
    df.attrs["qsweep"] = dict(info)
    return df


def analytic(
    spec: str | os.PathLike | None = None, *, quiet: bool = False, **axes: Any
) -> pd.DataFrame:
    """The grid's analytic baselines (``qsweep analytic``), instantly.

    Columns as ``qsweep analytic -o`` writes them: point, routing, servers,
    workers, choices, routers, arrival, lambda, service, rho,
    analytic_mean_wait, analytic_p99_wait, analytic_method (``exact:...``,
    ``approx:...`` or ``none``). ``spec`` is :func:`run`'s; the keyword
    arguments are ``qsweep analytic``'s flags: the grid's axes (routing,
    servers, rho, service, ...) and ``allow_unstable``, not run settings such
    as ``reps``. Bad input raises ``ValueError`` with the CLI's
    message; the spec's notes go to stderr unless ``quiet``.
    """
    for key in ("out", "force"):
        if key in axes:
            raise TypeError(
                f"qsweep.analytic() got an unexpected keyword argument '{key}'; the frame's "
                "to_csv() writes it"
            )
    argv = _argv("analytic", axes)
    path, text = _spec(spec)
    (header, rows), notes = _qsweep.analytic(argv, path, text)
    if not quiet:
        reporter = Reporter(quiet=False, progress=False)
        for n in notes:
            reporter.note(n)
    return frame(header, rows)


def load(path: str | os.PathLike) -> pd.DataFrame:
    """A results CSV of ``qsweep run`` (or ``merge``, or ``analytic -o``) as a
    DataFrame with the dtypes :func:`run` gives: ``load(p)`` equals the frame
    of the run that wrote ``p``."""
    name = os.fspath(path)
    try:
        with open(name, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise ValueError(f"{name}: cannot read: {e.strerror or e}; expected a qsweep CSV") from e
    if not rows:
        raise ValueError(f"{name}: empty file; expected a qsweep CSV with a header line")
    return frame(rows[0], rows[1:], where=f"{name}: ")
