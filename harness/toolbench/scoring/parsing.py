"""The ``parse`` scorer: did the replies' call attempts decode?

``parse`` is ``failed`` if any effective turn failed, else ``repaired`` if any needed
repair, else ``strict`` if any turn made calls, else ``no_call``. ``parse_strict_ok`` /
``parse_ok``: every turn that attempted a call decoded without / with repair; None when
no turn attempted one. ``first_try_ok`` is ``parse_ok`` over the original attempts (the
turns before any retry replaced them), so runs with and without
``--retry-on-parse-error`` compare. The parser's own problems (its codes and messages)
are the trial's first problems.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.formats.base import ParseStatus
from toolbench.results import TurnRecord
from toolbench.scoring.core import attempted, label
from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named


def parse_status(turns: Sequence[TurnRecord]) -> tuple[ParseStatus, bool | None, bool | None]:
    """``(parse, parse_strict_ok, parse_ok)`` over the given turns."""
    statuses = [t.parsed.status for t in turns]
    overall: ParseStatus
    if "failed" in statuses:
        overall = "failed"
    elif "repaired" in statuses:
        overall = "repaired"
    elif any(t.parsed.calls for t in turns):
        overall = "strict"
    else:
        overall = "no_call"
    tried = [t.parsed for t in turns if attempted(t.parsed)]
    if not tried:
        return overall, None, None
    strict_ok = all(p.status == "strict" for p in tried)
    ok = all(p.status in ("strict", "repaired") and bool(p.calls) for p in tried)
    return overall, strict_ok, ok


def _score(inp: TrialInput) -> Scored:
    eff = inp.effective
    problems = [
        (issue.code, label(n, len(eff)) + issue.message)
        for n, turn in enumerate(eff, 1)
        for issue in turn.parsed.errors
    ]
    parse, strict_ok, parse_ok = parse_status(eff)
    first_try_ok = parse_status([t for t in inp.turns if not t.retry])[2]
    values = named(
        parse=parse, parse_strict_ok=strict_ok, parse_ok=parse_ok, first_try_ok=first_try_ok
    )
    return Scored(values, problems)


SCORER = Scorer(
    "parse",
    {"parse": "label", "parse_strict_ok": "boolean", "parse_ok": "boolean",
     "first_try_ok": "boolean"},
    _score,
    "whether the replies' call attempts decoded, strictly or with repair",
)  # fmt: skip
