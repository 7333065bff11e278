"""A qsweep CSV's rows (its fields, as text) as a typed pandas DataFrame.

Both ``qsweep.run`` (rows straight from the library, the very strings it
writes to the CSV) and ``qsweep.load`` (rows read back from a CSV file) go
through :func:`frame`, so a run's frame and its CSV loaded later are equal.

Each column's dtype follows from its name and its cells, never from a fixed
list of columns, so columns added to the CSV later are typed too:

- the count and index columns (:data:`INT_COLUMNS`) are ``int64`` (``float64``
  with NaN where some cells are empty, as ``pandas.read_csv`` makes them);
- a column of ``true``/``false`` is ``bool`` (``object`` holding
  True/False/None where some cells are empty);
- any other column whose cells all read as numbers is ``float64`` (empty
  cells NaN), even where every value happens to be whole (a ``lambda`` of
  150, a ``mean_wait`` of 0), so a column's dtype does not depend on the run;
- the rest is text (pandas' default string dtype; empty cells missing);
- a column with no value at all is ``float64``, all NaN.

Numbers are read with Python's ``float`` and ``int``: correctly rounded, so a
value is the double nearest the CSV's text, as the CLI's CSV read by any exact
parser gives (``pandas.read_csv``'s default parser is not exact in the last
bit).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: Columns that count or index things (points, servers, replications,
#: customers, seeds): integers. Every other numeric column is float64.
INT_COLUMNS = frozenset(
    {
        "point",
        "servers",
        "workers",
        "reps",
        "customers",
        "warmup",
        "seed",
        "choices",
        "routers",
    }
)

_INT = re.compile(r"[+-]?[0-9]+\Z")
# What Rust's formatting of an f64 can produce (`num` in src/output.rs and
# `{:.3}`): decimals, exponents, inf; Python's float() would also take
# "nan", "1_0" or spaces, which are text here.
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z|[+-]?inf\Z")


def _ints(name: str, cells: Sequence[str]) -> np.ndarray:
    values = [int(c) for c in cells]
    for dtype in (np.int64, np.uint64):
        info = np.iinfo(dtype)
        if all(info.min <= v <= info.max for v in values):
            return np.array(values, dtype=dtype)
    return np.array(values, dtype=object)


def column(name: str, cells: Sequence[str]) -> np.ndarray:
    """One column's cells (text) as an array of its dtype (see the module)."""
    filled = [c for c in cells if c != ""]
    whole = len(filled) == len(cells)
    if not filled:
        return np.full(len(cells), np.nan)
    if all(c in ("true", "false") for c in filled):
        if whole:
            return np.array([c == "true" for c in cells], dtype=bool)
        return np.array([None if c == "" else c == "true" for c in cells], dtype=object)
    if name in INT_COLUMNS and all(_INT.match(c) for c in filled):
        if whole:
            return _ints(name, cells)
        return np.array([float(c) if c else np.nan for c in cells], dtype=np.float64)
    if all(_FLOAT.match(c) for c in filled):
        return np.array([float(c) if c else np.nan for c in cells], dtype=np.float64)
    return np.array([c if c else None for c in cells], dtype=object)


def frame(header: Sequence[str], rows: Sequence[Sequence[str]], where: str = "") -> pd.DataFrame:
    """A DataFrame of ``rows`` under ``header``, one typed column each."""
    width = len(header)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(
                f"{where}line {i + 2}: {len(r)} fields; expected {width} (one per header column)"
            )
    data = {name: column(name, [r[j] for r in rows]) for j, name in enumerate(header)}
    return pd.DataFrame(data, columns=list(header))
