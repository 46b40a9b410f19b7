"""Which format each model should use by default, by one documented rule.

For each model, its formats are ranked by the metrics registered with a ``ranking``
position (:mod:`toolbench.metrics`), each in its better direction; built in, in order:

1. highest ``call_accuracy``;
2. then lowest ``leak_rate`` (markers surviving sanitizing);
3. then highest ``stop_compliance``;
4. then lowest ``prompt_tokens_mean`` (cheaper prompts);
5. then the format name, so the answer is deterministic.

A metric that does not apply (no denominator) ranks last on that criterion. The winner
is flagged as *not significant* when its call-accuracy advantage over the runner-up is
not confirmed by an exact McNemar test on paired trials (same scenario and sample),
p >= 0.05: more samples or scenarios are needed before relying on it. The warning gives
the smallest call-accuracy difference the paired trials could detect (alpha 0.05, power
0.8; the formula is in :mod:`toolbench.report.paired_stats`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from toolbench.formats_file import FormatsFile, ModelChoice
from toolbench.metrics import get_metric, view
from toolbench.report.compare import PairedTest, paired_tests
from toolbench.report.metrics import OVERALL, CellStats, TrialTable, aggregate, fmt_value
from toolbench.report.paired_stats import ALPHA, POWER, detectable_difference
from toolbench.report.text_table import text_table


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


@dataclass
class Recommendation:
    model: str
    ranked: list[CellStats]
    test: PairedTest | None
    """Winner vs runner-up on call accuracy (None when there is no runner-up)."""

    @property
    def winner(self) -> CellStats:
        return self.ranked[0]

    @property
    def decided_by(self) -> str:
        """The first criterion on which the winner beats the runner-up."""
        if len(self.ranked) < 2:
            return "only format"
        a, b = rank_key(self.ranked[0]), rank_key(self.ranked[1])
        names = [m for m, _ in rule()] + ["format name"]
        return next((n for n, x, y in zip(names, a, b, strict=True) if x != y), "format name")

    @property
    def significant(self) -> bool | None:
        if self.test is None:
            return None
        return (
            self.test.n_pairs > 0
            and self.test.p_value < ALPHA
            and (self.test.only_a > self.test.only_b)
        )


def recommend(table: TrialTable) -> list[Recommendation]:
    cells = [c for c in aggregate(table.df, overall=False)]
    out: list[Recommendation] = []
    for model in sorted({c.model for c in cells}):
        ranked = sorted((c for c in cells if c.model == model), key=rank_key)
        test = None
        if len(ranked) >= 2:
            df = table.df[table.df["model"] == model]
            wa = df[df["format"] == ranked[0].format]
            wb = df[df["format"] == ranked[1].format]
            tests = paired_tests(wa, wb, ["scenario_id", "sample"], ["model"])
            test = next((t for t in tests if t.metric == "call_accuracy"), None)
            if test is None:  # no pairs at all
                test = PairedTest(model, "call_accuracy", 0, None, None, 0, 0, 1.0)
        out.append(Recommendation(model, ranked, test))
    return out


def render(recs: list[Recommendation]) -> str:
    lines: list[str] = []
    criteria = [m for m, _ in rule()]
    for r in recs:
        if r.model == OVERALL:
            continue
        lines.append(f"{r.model}: use {r.winner.format} (decided by {r.decided_by})")
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
        lines.append("")
    lines.append(rule_text())
    return "\n".join(lines)


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


def formats_file(recs: list[Recommendation]) -> FormatsFile:
    """The winners as the file ``run --formats-from`` reads back (schema-versioned)."""
    models = {r.model: ModelChoice(tool_format=r.winner.format) for r in recs}
    return FormatsFile(models=models)


def emit_yaml(recs: list[Recommendation]) -> str:
    """``version: 1`` and ``models: {<model>: {tool_format: <format>}}`` (:class:`FormatsFile`)."""
    return formats_file(recs).dump()
