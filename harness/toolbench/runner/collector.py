"""How Python's cyclic garbage collector is set while a run's trials execute.

A run allocates many short-lived containers per trial (the request, the reply as read,
the parsed calls, the scores, the lines it writes) and almost none of them outlive the
trial or form cycles. With the interpreter's default threshold (a young collection every
700 net allocations) a live trial paid for about a dozen young collections, each walking
what was in flight for the other fifteen trials at that moment and promoting it, only for
the next collection to walk it again. A young threshold of 10,000 for the run saves a live trial
measurable CPU (paired rounds of ``benchmarks/bench_live_cpu.py``'s bare kind;
the figures are in docs/benchmarks.md).

What start-up built (modules, schemas, the plan) lives as long as the run: it is moved out
of the collector's sight (``gc.freeze``), so a full collection no longer walks it again for
each trial's short-lived objects (a replayed stream's cassette is read markedly slower otherwise).

Both are given back when the run ends, so a process that runs several runs, or a library
user's application around it, keeps its own settings and frees what the run built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
"""Net allocations between young collections during a run (the interpreter's default is
700). Garbage in cycles waits a little longer to be freed: at most this many objects."""

MIDDLE_THRESHOLD = 20
"""Young collections between collections of the middle generation (default 10): with the
young threshold raised this is one every 200,000 allocations, which still bounds what a
trial's leftovers cost to hold."""


@contextmanager
def run_collector() -> Iterator[None]:
    """Freeze what exists and collect less often while the block runs; restore after."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
