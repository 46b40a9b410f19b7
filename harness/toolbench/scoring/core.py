"""The core scorer and :func:`score_trial`: pure functions of the scenario, the format and
the turn records.

The core checks below are the fields of :class:`~toolbench.results.TrialScores` (they
decide whether a trial passes); :func:`score_trial` then runs every registered scorer
(:mod:`.scorer`: the streaming measurements of :mod:`.stream`, plugins) and stores their
named values in ``scores.values``, their problems after the core's.

**Effective turns.** A turn with ``retry=True`` answered the parse-error retry message
and replaces the turn before it; every accuracy metric reads the effective turns only.
``retried`` says a retry happened; ``first_try_ok`` is ``parse_ok`` computed over the
original attempts (the turns before any replacement), so runs with and without
``--retry-on-parse-error`` compare; ``retry_recovered`` (None without a retry) says every
retry reply parsed and the trial's applicable outcome (call accuracy, abstention) holds.

**Parse.** ``parse`` is ``failed`` if any effective turn failed, else ``repaired`` if any
needed repair, else ``strict`` if any turn made calls, else ``no_call``.
``parse_strict_ok`` / ``parse_ok``: every turn that attempted a call decoded without /
with repair; None when no turn attempted one.

**Calls** (:mod:`.calls`): a ``calls`` scenario compares the first effective turn with the
expected calls; a multi-turn one compares effective turn *i* with round *i*, flags calls
in turns past the last round (``call.extra``) and needs the final answer
(:mod:`.answer`): its ``call_accuracy`` is every round matched and the answer ok. A
conversation still calling at the turn limit it ran with (``settings.max_turns``: the
``--max-turns`` flag, else the scenario's) is ``turns.exhausted``.
No-call scenarios have ``call_accuracy`` None and ``no_call_correct``: true when no turn
attempted a call (``call.unexpected`` for a parsed call, ``nocall.decode_failure`` for an
attempt that did not parse, which is not an abstention).

**Schema** (:mod:`.schema`), **stop** (:mod:`.stop`) and **leakage** (:mod:`.leakage`)
are judged over all effective turns. ``errors`` lists every code found, the parser's
own codes first, with one human reason each in ``reasons``.

**Fallback.** Under a fallback composition (``native|xml``) every parse says which part
produced it; ``fallback_rescued`` is true when the fallback produced the calls of an
effective turn (None for other formats).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench import codes
from toolbench.formats.base import Format, ParseResult, ParseStatus
from toolbench.results import TrialScores, TrialSettings, TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scoring.answer import final_answer
from toolbench.scoring.calls import match_round
from toolbench.scoring.leakage import leakage
from toolbench.scoring.matchers import Problem
from toolbench.scoring.schema import schema_problems
from toolbench.scoring.scorer import TrialInput, run_scorers
from toolbench.scoring.stop import is_compliant, trial_stop


def effective_turns(turns: Sequence[TurnRecord]) -> list[TurnRecord]:
    """The turns that count: each retry turn replaces the turn before it."""
    out: list[TurnRecord] = []
    for turn in turns:
        if turn.retry and out:
            out[-1] = turn
        else:
            out.append(turn)
    return out


def attempted(parsed: ParseResult) -> bool:
    return bool(parsed.calls) or parsed.attempted or parsed.status == "failed"


def abstained(parsed: ParseResult) -> bool:
    """The one definition of a correct no-call reply (``no_call_correct``, and the BFCL
    irrelevance verdict): no call, and no attempt at one. A reply that tried to call and
    did not parse is not an abstention (``nocall.decode_failure``), although BFCL's own
    irrelevance check counts a reply it cannot decode as no call."""
    return not attempted(parsed)


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


def _label(n: int, total: int) -> str:
    return f"turn {n}: " if total > 1 else ""


def _call_problems(sc: Scenario, turns: Sequence[TurnRecord]) -> list[Problem]:
    """Round-by-round call matching for ``calls`` and multi-turn scenarios."""
    rounds = sc.expect.expected_rounds()
    multi = sc.expect.kind == "multi_turn"
    out: list[Problem] = []
    for i, rnd in enumerate(rounds):
        if i >= len(turns):
            names = ", ".join(c.name for c in rnd.calls)
            out.append(
                (codes.CALL_MISSING, f"round {i + 1}: the conversation ended before {names}")
            )
            continue
        turn = turns[i]
        prefix = f"round {i + 1}: " if multi else ""
        if not turn.parsed.calls and turn.parsed.status == "failed":
            prefix += "the reply did not parse; "
        out.extend((code, prefix + why) for code, why in match_round(rnd, turn.parsed.calls))
    if multi:
        # Calls in turns past the last round (the very last turn is the answer's business).
        for n in range(len(rounds), len(turns) - 1):
            for call in turns[n].parsed.calls:
                out.append(
                    (codes.CALL_EXTRA, f"turn {n + 1}: call to {call.name} after the last round")
                )
    return out


def _no_call_problems(turns: Sequence[TurnRecord]) -> list[Problem]:
    out: list[Problem] = []
    for n, turn in enumerate(turns, 1):
        label = _label(n, len(turns))
        if turn.parsed.calls:
            names = ", ".join(c.name for c in turn.parsed.calls)
            out.append((codes.CALL_UNEXPECTED, f"{label}called {names} instead of answering"))
        elif not abstained(turn.parsed):
            out.append(
                (codes.NO_CALL_DECODE_FAILURE, f"{label}tried to call a tool and did not parse")
            )
    return out


def score_trial(
    scenario: Scenario,
    fmt: Format,
    turns: Sequence[TurnRecord],
    settings: TrialSettings | None = None,
    markers: Sequence[re.Pattern[str]] | None = None,
) -> TrialScores:
    """Score one trial's turns against its scenario (see the module docstring).

    ``settings`` are the ones the conversation ran with (its turn limit decides
    ``turns.exhausted``, its display policy the stream measurements; default: the
    scenario's), ``markers`` the run's leakage marker set (default: the formats installed
    now). A registered scorer that raises raises here (the runner makes the trial a
    ``harness.scoring`` error).
    """
    eff = effective_turns(turns)
    max_turns = settings.max_turns if settings is not None else scenario.expect.max_turns
    problems: list[Problem] = []
    total = len(eff)

    for n, turn in enumerate(eff, 1):
        for issue in turn.parsed.errors:
            problems.append((issue.code, _label(n, total) + issue.message))

    parse, strict_ok, parse_ok = parse_status(eff)
    originals = [t for t in turns if not t.retry]
    first_try_ok = parse_status(originals)[2]
    kind = scenario.expect.kind

    call_accuracy: bool | None = None
    no_call_correct: bool | None = None
    final_answer_ok: bool | None = None
    if kind == "no_call":
        found = _no_call_problems(eff)
        no_call_correct = not found
        problems.extend(found)
    else:
        found = _call_problems(scenario, eff)
        problems.extend(found)
        call_accuracy = not found
        if kind == "multi_turn":
            final_answer_ok, answer_found = final_answer(
                scenario.expect.final_answer, eff, max_turns
            )
            problems.extend(answer_found)
            call_accuracy = call_accuracy and final_answer_ok

    made = [(n, c) for n, t in enumerate(eff, 1) for c in t.parsed.calls]
    args_schema_valid: bool | None = None
    if made:
        args_schema_valid = True
        for n, call in made:
            found = schema_problems(call, scenario.tools)
            if found:
                args_schema_valid = False
                problems.extend((code, _label(n, total) + why) for code, why in found)

    stop, stop_found = trial_stop(eff)
    problems.extend(stop_found)
    leak_raw, leak_sanitized, leak_found = leakage(eff, fmt, markers)
    problems.extend(leak_found)

    retried = any(t.retry for t in turns)
    retry_recovered: bool | None = None
    if retried:
        retry_turns = [t for t in turns if t.retry]
        retry_recovered = (
            all(t.parsed.status != "failed" for t in retry_turns)
            and call_accuracy is not False
            and no_call_correct is not False
        )

    vias = [t.parsed.via for t in eff if t.parsed.via is not None]
    fallback_rescued = ("fallback" in vias) if vias else None

    scored = run_scorers(TrialInput(scenario, fmt, turns, settings, markers))
    problems.extend(scored.problems)

    return TrialScores(
        parse=parse,
        parse_strict_ok=strict_ok,
        parse_ok=parse_ok,
        call_accuracy=call_accuracy,
        args_schema_valid=args_schema_valid,
        stop=stop,
        stop_compliant=is_compliant(stop),
        leak_raw=leak_raw,
        leak_sanitized=leak_sanitized,
        no_call_correct=no_call_correct,
        final_answer_ok=final_answer_ok,
        retried=retried,
        retry_recovered=retry_recovered,
        first_try_ok=first_try_ok,
        fallback_rescued=fallback_rescued,
        errors=[code for code, _ in problems],
        reasons=[why for _, why in problems],
        values=scored.values,
    )
