"""Progress of ``qsweep.run`` on Python's stderr (so a notebook shows it).

With tqdm installed: a bar of customers simulated out of those planned
(so it moves with the work, not by points of very different sizes), with
the points done, customers/s and ETA - a notebook
widget when running in Jupyter with ipywidgets, tqdm's text bar otherwise.
Without tqdm: one line per finished point, as ``qsweep run`` writes to a log.
Notes and warnings print above the bar. The Rust side calls these methods
from the thread that called ``qsweep.run``, with the GIL held.
"""

from __future__ import annotations

import importlib.util
import sys
import time


def _bar_class():
    """tqdm's notebook bar in Jupyter with ipywidgets, its text bar elsewhere,
    None without tqdm."""
    if importlib.util.find_spec("tqdm") is None:
        return None
    if "ipykernel" in sys.modules and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.notebook import tqdm

        return tqdm
    from tqdm.std import tqdm

    return tqdm


class Reporter:
    """What ``qsweep.run`` shows while it runs."""

    def __init__(self, quiet: bool = False, progress: bool = True):
        self.quiet = quiet
        self.progress = progress and not quiet
        self.bar = None
        self.total = 0
        self.done = 0
        self.customers = 0.0
        self.started = time.monotonic()

    def _say(self, msg: str) -> None:
        if self.bar is not None:
            self.bar.write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr, flush=True)

    def note(self, msg: str) -> None:
        """A note, the backend chosen, a warning about one point."""
        if not self.quiet:
            self._say(msg)

    def start(self, total: int, done: int, planned: float = 0.0) -> None:
        """The run starts: ``total`` points, ``done`` of them kept from
        before, ``planned`` customers to simulate for the rest."""
        self.total, self.done = total, done
        self.started = time.monotonic()
        if not self.progress:
            return
        cls = _bar_class()
        if cls is not None:
            self.bar = cls(
                total=planned if planned > 0 else None,
                unit=" customers",
                unit_scale=True,
                desc="qsweep",
                file=sys.stderr,
                dynamic_ncols=True,
            )
            self.bar.set_postfix_str(f"{done}/{total} points", refresh=False)

    def rate(self) -> float:
        """Customers per second of wall time so far."""
        return self.customers / max(time.monotonic() - self.started, 1e-9)

    def point(self, line: str, customers: float) -> None:
        """A point finished: ``line`` sums it up."""
        self.done += 1
        self.customers += customers
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.done}/{self.total} points", refresh=False)
            self.bar.update(customers)
        elif self.progress:
            self._say(f"[{self.done}/{self.total}] {line}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
