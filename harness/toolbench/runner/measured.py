"""Which parts of a run measured nothing: a model or (model, format) cell without one
``ok`` trial.

A run whose every trial of a cell was refused (``unsupported``), failed in transport
(``infra_error``), missed its cassette or failed in toolbench has no number for that
cell: reports would show empty rates and the run would look fine. ``toolbench run``
therefore names such cells under its final table, with why, and exits non-zero
(:data:`EXIT_UNMEASURED`); a fully measured run exits 0 whatever its scores (judging
scores is ``gate``'s job).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolbench.store import iter_results


class TrialLike(Protocol):
    """What the check reads of a trial (a :class:`~toolbench.results.TrialResult`, or the
    run summary's projection of a results line)."""

    @property
    def model(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def error_code(self) -> str | None: ...
    @property
    def infra_error(self) -> str | None: ...


EXIT_UNMEASURED = 3
"""``toolbench run``'s exit code when a model or cell produced no measurable trial."""
WHY_CAP = 200
"""Characters of the first failure's message shown per cell."""


@dataclass(frozen=True)
class Unmeasured:
    """A model (``format`` None: none of its cells measured anything) or one cell."""

    model: str
    format: str | None
    trials: int
    why: str
    """The statuses and codes counted, and the first failure's message (redacted)."""

    @property
    def label(self) -> str:
        return self.model if self.format is None else f"{self.model} / {self.format}"


def _why(trials: list[TrialLike]) -> str:
    counts = Counter(f"{t.status} ({t.error_code})" if t.error_code else t.status for t in trials)
    parts = ", ".join(f"{n} {what}" for what, n in counts.most_common())
    first = next((t.infra_error for t in trials if t.infra_error), None)
    if first:
        line = first.splitlines()[0] if first.strip() else first
        cut = line if len(line) <= WHY_CAP else line[: WHY_CAP - 1] + "…"
        return f"{parts}: {cut}"
    return parts


def unmeasured(results: Iterable[TrialLike]) -> list[Unmeasured]:
    """The models and cells of ``results`` without an ``ok`` trial, in matrix order.

    A model none of whose cells measured anything is one entry (``format`` None); a
    model with some measured cells lists its unmeasured cells one by one.
    """
    cells: dict[tuple[str, str], list[TrialLike]] = {}
    for r in results:
        cells.setdefault((r.model, r.format), []).append(r)
    out: list[Unmeasured] = []
    models = list(dict.fromkeys(m for m, _ in cells))
    for model in models:
        mine = {f: ts for (m, f), ts in cells.items() if m == model}
        empty = {f: ts for f, ts in mine.items() if not any(t.status == "ok" for t in ts)}
        if not empty:
            continue
        if len(empty) == len(mine):
            every = [t for ts in empty.values() for t in ts]
            out.append(Unmeasured(model, None, len(every), _why(every)))
            continue
        out.extend(Unmeasured(model, f, len(ts), _why(ts)) for f, ts in empty.items())
    return out


def unmeasured_in(run_dir: Path) -> list[Unmeasured]:
    """:func:`unmeasured` over the trials stored in ``run_dir`` (a resumed run's too)."""
    return unmeasured(iter_results(run_dir))
