"""Which format each model should use by default, by one documented rule.

For each model, its formats are ranked by the metrics registered with a ``ranking``
position (:mod:`toolbench.metrics`), each in its better direction; built in, in order:

1. highest ``call_accuracy``;
2. then lowest ``leak_rate`` (markers surviving sanitizing);
3. then highest ``stop_compliance``;
4. then lowest ``prompt_tokens_mean`` (cheaper prompts);
5. then the format name, so the answer is deterministic.

A metric that does not apply (no denominator) ranks last on that criterion.

The ranking always exists; a recommendation only where the data holds one. Per model,
one of three outcomes (:attr:`Recommendation.outcome`):

* ``none`` -- *no format works*: every format's call accuracy is below the floor
  (:data:`DEFAULT_FLOOR`, ``recommend --floor``) or does not apply. Ranking formats that
  all fail says nothing about which one to use.
* ``tie`` -- the leader's call accuracy is not significantly above that of every other
  format (exact McNemar test on paired trials, same scenario and sample, p < 0.05, the
  leader ahead on the discordant pairs). The *candidates* are the leader and the formats
  it does not beat significantly; the rule's later criteria order them, and the tie is
  said to be broken by the first criterion that separates the top two (or not broken:
  they differ only by name).
* ``recommend`` -- the leader is at or above the floor and beats every other format
  significantly (or is the only format).

Each tie says the smallest call-accuracy difference the paired trials could detect
(alpha 0.05, power 0.8, :mod:`toolbench.report.paired_stats`) and, given ``--detect``,
the samples per scenario needed to detect the difference named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from toolbench.errors import UserError
from toolbench.formats_file import FormatsFile, ModelChoice
from toolbench.metrics import get_metric, view
from toolbench.report.compare import PairedTest, paired_tests
from toolbench.report.metrics import OVERALL, CellStats, TrialTable, aggregate, fmt_value
from toolbench.report.paired_stats import ALPHA, POWER, detectable_difference, samples_needed
from toolbench.report.text_table import text_table

if TYPE_CHECKING:
    import pandas as pd

FLOOR_METRIC = "call_accuracy"
"""The metric the floor bounds and the significance tests test."""
DEFAULT_FLOOR = 0.5
"""Call accuracy a format must reach to be recommended: below it a model gets the
format wrong on most scenarios whatever the ranking says."""

Outcome = Literal["recommend", "tie", "none"]


def rule() -> tuple[tuple[str, int], ...]:
    """(metric, sign) per ranking criterion: -1 means higher wins, 1 means lower wins."""
    return tuple((m, 1 if get_metric(m).direction == "lower" else -1) for m in view("ranking"))


def rule_text() -> str:
    """The rule in words, as ``recommend`` prints it."""
    steps = [f"{'lowest' if s == 1 else 'highest'} {m}" for m, s in rule()]
    return "rule: " + ", then ".join(steps)


def rank_key(cell: CellStats) -> tuple[float | str, ...]:
    key: list[float | str] = []
    for metric, sign in rule():
        v = cell.values.get(metric)
        key.append(math.inf if v is None else sign * v)
    key.append(cell.format)
    return tuple(key)


def beats(t: PairedTest | None) -> bool:
    """Whether the first of a test's pair is significantly better (p < ALPHA, more wins)."""
    return t is not None and t.n_pairs > 0 and t.p_value < ALPHA and t.only_a > t.only_b


@dataclass
class Recommendation:
    model: str
    ranked: list[CellStats]
    test: PairedTest | None
    """Leader vs runner-up on call accuracy (None when there is no runner-up)."""
    versus: dict[str, PairedTest] = field(default_factory=dict)
    """Leader vs each other format on call accuracy, by that format."""
    floor: float = DEFAULT_FLOOR
    scenarios: int = 0
    """Scenarios the leader and runner-up share (for samples needed)."""

    @property
    def winner(self) -> CellStats:
        """The leader of the ranking (a recommendation only when :attr:`outcome` says so)."""
        return self.ranked[0]

    @property
    def outcome(self) -> Outcome:
        acc = self.winner.values.get(FLOOR_METRIC)
        if acc is None or acc < self.floor:
            return "none"
        if len(self.candidates) > 1:
            return "tie"
        return "recommend"

    @property
    def candidates(self) -> list[CellStats]:
        """The leader and every format it does not beat significantly, in rule order."""
        return [self.winner] + [c for c in self.ranked[1:] if not beats(self.versus.get(c.format))]

    @property
    def decided_by(self) -> str:
        """The first criterion on which the leader beats the runner-up."""
        if len(self.ranked) < 2:
            return "only format"
        return _first_difference(self.ranked[0], self.ranked[1])

    @property
    def tie_broken_by(self) -> str | None:
        """Among tied candidates, the first criterion after call accuracy separating the
        top two; None when they differ only by name (the tie is not broken)."""
        cands = self.candidates
        if len(cands) < 2:
            return None
        by = _first_difference(cands[0], cands[1])
        return None if by == "format name" else by

    @property
    def significant(self) -> bool | None:
        if self.test is None:
            return None
        return beats(self.test)


def _first_difference(a: CellStats, b: CellStats) -> str:
    ka, kb = rank_key(a), rank_key(b)
    names = [m for m, _ in rule()] + ["format name"]
    return next((n for n, x, y in zip(names, ka, kb, strict=True) if x != y), "format name")


def recommend(table: TrialTable, floor: float = DEFAULT_FLOOR) -> list[Recommendation]:
    cells = [c for c in aggregate(table.df, overall=False)]
    out: list[Recommendation] = []
    for model in sorted({c.model for c in cells}):
        ranked = sorted((c for c in cells if c.model == model), key=rank_key)
        df = table.df[table.df["model"] == model]
        lead = df[df["format"] == ranked[0].format]
        versus: dict[str, PairedTest] = {}
        for other in ranked[1:]:
            wb = df[df["format"] == other.format]
            tests = paired_tests(lead, wb, ["scenario_id", "sample"], ["model"])
            found = next((t for t in tests if t.metric == FLOOR_METRIC), None)
            versus[other.format] = found or PairedTest(
                model, FLOOR_METRIC, 0, None, None, 0, 0, 1.0
            )
        test = versus.get(ranked[1].format) if len(ranked) >= 2 else None
        shared = 0
        if len(ranked) >= 2:
            second = df[df["format"] == ranked[1].format]
            shared = len(_scored_scenarios(lead) & _scored_scenarios(second))
        out.append(Recommendation(model, ranked, test, versus, floor, shared))
    return out


def _scored_scenarios(df: pd.DataFrame) -> set[str]:
    """Scenarios with an answered trial where call accuracy applies (those pairs count)."""
    scored = df[(df["status"] == "ok") & df[FLOOR_METRIC].notna()]
    return set(scored["scenario_id"].astype(str))


def verdict(r: Recommendation) -> str:
    """One line: the recommendation, the tie, or that no format works."""
    if r.outcome == "none":
        return (
            f"no format works for {r.model} (every format's {FLOOR_METRIC} is below the "
            f"floor {100 * r.floor:.0f}%)"
        )
    if r.outcome == "tie":
        names = ", ".join(c.format for c in r.candidates)
        by = r.tie_broken_by
        broken = f"broken by {by}: {r.candidates[0].format} first" if by else "not broken"
        return (
            f"{r.model}: tie between {names} (no significant {FLOOR_METRIC} difference; {broken})"
        )
    return f"{r.model}: use {r.winner.format} (decided by {r.decided_by})"


def render(recs: list[Recommendation], detect: float | None = None) -> str:
    lines: list[str] = []
    criteria = [m for m, _ in rule()]
    for r in recs:
        if r.model == OVERALL:
            continue
        lines.append(verdict(r))
        rows = [
            [
                str(i),
                c.format,
                *(fmt_value(m, c.values.get(m)) for m in criteria),
            ]
            for i, c in enumerate(r.ranked, 1)
        ]
        lines.append(text_table(["rank", "format", *criteria], rows))
        t = r.test
        if t is not None and not r.significant:
            runner = r.ranked[1].format
            stats = f"McNemar p={t.p_value:.3g}, {t.n_pairs} paired trials, "
            stats += f"{t.only_a} vs {t.only_b} discordant"
            if r.decided_by == "call_accuracy":
                lines.append(
                    f"warning: {r.winner.format}'s call-accuracy advantage over {runner} "
                    f"is not significant ({stats})"
                )
            else:
                lines.append(
                    f"warning: {r.winner.format} and {runner} tie on call accuracy ({stats}); "
                    f"{r.decided_by} decided"
                )
            lines.append(_detectable(t))
        if t is not None and detect is not None:
            lines.append(_needed(r, t, detect))
        lines.append("")
    lines.append(rule_text())
    return "\n".join(lines)


def needed(r: Recommendation, detect: float) -> int | None:
    """Samples per scenario the leader and runner-up would need to detect ``detect``
    (None: no runner-up, or no scenario where both have a call-accuracy value)."""
    t = r.test
    if t is None:
        return None
    psi = (t.only_a + t.only_b) / t.n_pairs if t.n_pairs else 0.0
    return samples_needed(detect, psi, r.scenarios)


def _needed(r: Recommendation, t: PairedTest, detect: float) -> str:
    """The line saying :func:`needed`."""
    need = needed(r, detect)
    if need is None:
        return f"  no shared scenarios: no number of samples detects {100 * detect:.1f} points"
    return (
        f"  to detect a {100 * detect:.1f}-point call-accuracy difference between "
        f"{r.ranked[0].format} and {r.ranked[1].format}: {need} samples per scenario over "
        f"{r.scenarios} scenarios (alpha {ALPHA}, power {POWER})"
    )


def _detectable(t: PairedTest) -> str:
    """The smallest call-accuracy difference these pairs could detect (:mod:`.paired_stats`)."""
    psi = (t.only_a + t.only_b) / t.n_pairs if t.n_pairs else 0.0
    d = detectable_difference(t.n_pairs, psi)
    if d is None:
        return (
            f"  {t.n_pairs} paired trials are too few to detect even a 100-point difference: "
            "more samples or scenarios are needed to tell them apart"
        )
    return (
        f"  at {t.n_pairs} paired trials the suite could detect a call-accuracy difference "
        f"of {100 * d:.1f} points or more (alpha {ALPHA}, power {POWER})"
    )


def formats_file(recs: list[Recommendation], break_ties: bool = False) -> FormatsFile:
    """The recommended formats as the file ``run --formats-from`` reads back
    (schema-versioned). A model whose formats tie or none works is left out: the file
    fixes a format only where the data holds one; with none at all it is refused.
    ``break_ties`` (``--break-ties``): a tie that a later criterion broke (stop
    compliance, latency, ...: :attr:`Recommendation.tie_broken_by`) is written with its
    pick too, for a user who must run with some format and asks for it knowingly."""
    models = {
        r.model: ModelChoice(tool_format=r.winner.format)
        for r in recs
        if r.outcome == "recommend"
        or (break_ties and r.outcome == "tie" and r.tie_broken_by is not None)
    }
    if not models:
        why = (
            "their formats tie, unbroken, or none works"
            if break_ties
            else ("their formats tie or none works; --break-ties writes a broken tie's pick")
        )
        raise UserError(
            f"recommend --to yaml: no model has a recommendation ({why}; see recommend's "
            "text): no formats file written"
        )
    return FormatsFile(models=models)


def emit_yaml(recs: list[Recommendation], break_ties: bool = False) -> str:
    """``version: 1`` and ``models: {<model>: {tool_format: <format>}}`` (:class:`FormatsFile`)."""
    return formats_file(recs, break_ties).dump()
