"""A qsweep CSV's rows (its fields, as text) as a typed pandas DataFrame.

Both ``qsweep.run`` (rows straight from the library, the very strings it
writes to the CSV) and ``qsweep.load`` (rows read back from a CSV file) go
through :func:`frame`, so a run's frame and its CSV loaded later are equal.

Each column's dtype follows from its name, never from its cells, by the same
rule as the Parquet files qsweep writes (``export::Kind::known`` in the Rust
library, ``qsweep._qsweep.column_kind``), so the frames of different runs
have the same dtypes and concatenate:

- counts and indices (``point``, ``servers``, ``reps``, ``seed``, ``choices``,
  ``waited``, ``max_in_system`` …) are pandas' nullable ``Int64`` (``UInt64``
  for ``seed``), missing as ``<NA>`` where a cell is empty (``choices`` for
  policies other than ``pod``), so a count stays an integer whether or not
  some run left it empty;
- ``stable`` and ``converged`` are nullable ``boolean``;
- text columns (``routing``, ``service``, ``analytic_method``, ``error`` …)
  are ``object`` holding ``str``, None where empty, even when every cell is
  empty (``df.error.str`` works on a run without errors);
- every other column qsweep writes is ``float64`` (empty cells NaN), even
  where every value happens to be whole (a ``lambda`` of 150);
- a column qsweep does not write (one added by hand) is typed by its cells:
  ``float64`` if all are numbers, ``boolean`` if all are true/false, else
  text.

A cell that is not a value of its column's type raises ``ValueError`` naming
the column and line. Numbers are read with Python's ``float`` and ``int``:
correctly rounded, so a value is the double nearest the CSV's text, as the
CLI's CSV read by any exact parser gives (``pandas.read_csv``'s default parser
is not exact in the last bit).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

_INT = re.compile(r"[+-]?[0-9]+\Z")
# What Rust's formatting of an f64 can produce (`num` in src/output.rs and
# `{:.3}`): decimals, exponents, inf; Python's float() would also take
# "nan", "1_0" or spaces, which are text here.
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z|[+-]?inf\Z")

_EXPECTED = {
    "int": "an integer",
    "uint": "a non-negative integer",
    "float": "a number",
    "bool": "true or false",
}


def _kind_of(name: str) -> str | None:
    from . import _qsweep

    return _qsweep.column_kind(name)


def _check(name: str, cells: Sequence[str], kind: str, ok: Callable[[str], bool], where: str):
    for i, c in enumerate(cells):
        if c != "" and not ok(c):
            raise ValueError(
                f"{where}column '{name}', line {i + 2}: '{c}' is not {_EXPECTED[kind]}; "
                f"expected every value of '{name}' to be one (or empty)"
            )


def column(
    name: str,
    cells: Sequence[str],
    kind: str | None = None,
    where: str = "",
) -> pd.api.extensions.ExtensionArray | np.ndarray:
    """One column's cells (text) as an array of its dtype (see the module);
    ``kind`` is the column's type by name (None: a column qsweep does not
    write, typed by its cells)."""
    if kind in ("int", "uint"):
        low = 0 if kind == "uint" else -(2**63)
        high = 2**64 - 1 if kind == "uint" else 2**63 - 1
        _check(name, cells, kind, lambda c: bool(_INT.match(c)) and low <= int(c) <= high, where)
        dtype = "UInt64" if kind == "uint" else "Int64"
        return pd.array([int(c) if c else None for c in cells], dtype=dtype)
    if kind == "bool":
        _check(name, cells, kind, lambda c: c in ("true", "false"), where)
        return pd.array([None if c == "" else c == "true" for c in cells], dtype="boolean")
    if kind == "float":
        _check(name, cells, kind, lambda c: bool(_FLOAT.match(c)), where)
        return np.array([float(c) if c else np.nan for c in cells], dtype=np.float64)
    if kind == "text":
        return np.array([c if c else None for c in cells], dtype=object)
    # A column qsweep does not write: typed by its cells.
    filled = [c for c in cells if c != ""]
    if filled and all(c in ("true", "false") for c in filled):
        return column(name, cells, "bool", where)
    if filled and all(_FLOAT.match(c) for c in filled):
        return column(name, cells, "float", where)
    return column(name, cells, "text", where)


def frame(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    where: str = "",
    kind_of: Callable[[str], str | None] = _kind_of,
) -> pd.DataFrame:
    """A DataFrame of ``rows`` under ``header``, one typed column each."""
    width = len(header)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(
                f"{where}line {i + 2}: {len(r)} fields; expected {width} (one per header column)"
            )
    data = {
        name: column(name, [r[j] for r in rows], kind_of(name), where)
        for j, name in enumerate(header)
    }
    return pd.DataFrame(data, columns=list(header))
