"""Progress as plain lines, for a run whose output is not a terminal (a CI log).

A rich progress bar draws nothing until the end when stderr is not a TTY, so a CI log of a
long run stayed empty for a quarter of an hour. Instead a line is printed now and then:
after the first trial, every :data:`EVERY_S` seconds, and at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

EVERY_S = 30.0
"""Seconds between two progress lines (a line at most this often, at least at the end)."""


def clock_text(seconds: float) -> str:
    """``1h39m``, ``4m05s``, ``12s``: short and unambiguous in a log."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    return f"{m}m{sec:02d}s" if m else f"{sec}s"


class ProgressLines:
    """Counts finished trials and prints ``trials 133/1380 (10%), not ok 2, ...`` lines."""

    def __init__(
        self,
        total: int,
        out: TextIO,
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.out = out
        self.every_s = every_s
        self.clock = clock
        self.start = clock()
        self.last: float | None = None
        self.done = 0
        self.not_ok = 0

    def line(self) -> str:
        elapsed = self.clock() - self.start
        pct = 100.0 * self.done / self.total if self.total else 100.0
        text = (
            f"trials {self.done}/{self.total} ({pct:.0f}%), not ok {self.not_ok}, "
            f"elapsed {clock_text(elapsed)}"
        )
        if 0 < self.done < self.total:
            text += f", eta {clock_text(elapsed / self.done * (self.total - self.done))}"
        return text

    def advance(self, ok: bool) -> None:
        self.done += 1
        self.not_ok += 0 if ok else 1
        now = self.clock()
        due = self.last is None or now - self.last >= self.every_s or self.done >= self.total
        if due:
            self.last = now
            print(self.line(), file=self.out, flush=True)
