"""``toolbench rescore``: re-run parsers and scorers over stored replies, no model call.

Useful after a parser or scorer fix: every ``ok`` trial's turns are re-parsed with
``get_format(trial.format).parse_reply(turn.reply, scenario.tools)`` and re-scored with
``toolbench.scoring.score_trial(scenario, fmt, turns, settings, markers)``.
The scenarios are read from the files ``run.json`` recorded (refused, naming the file,
when one is missing or changed since the run), or from ``--scenarios`` when given (and
the bundled suite for runs from before the files were recorded). Trials are scored with
the settings the trial ran with (stored on it; for older lines rebuilt from ``run.json``'s
``max_turns``) and the marker set recorded in ``run.json`` (the built-in formats' set for
older runs), so a plugin installed since does not change the scores. Trials that did not reach the
model (status other than ``ok``) and trials whose scenario is no longer known are copied
unchanged. The result is a new run directory (``run.json`` copied, new
``results.jsonl``), so ``toolbench report NEW --baseline OLD`` shows what changed.

It lives in the runner layer, not in the reports, because it calls formats and scorers;
it reads and writes the run through :mod:`toolbench.store` like ``run`` does (the
redacting writer, schema migration on read).
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from toolbench.engine import effective_settings
from toolbench.environments.ground_truth import reads_server_state
from toolbench.environments.mcp_tools import recorded_server_tools
from toolbench.errors import UserError
from toolbench.formats.base import Format
from toolbench.formats.format_registry import get_format
from toolbench.formats.stream_spec import is_streamed
from toolbench.outcome import trial_outcome
from toolbench.outpath import prepare_dir
from toolbench.results import RunInfo, TrialResult, TrialScores, TrialSettings, TurnRecord
from toolbench.runner.records import recorded_scenarios
from toolbench.scenarios.loader import load_scenarios
from toolbench.scenarios.model import Scenario
from toolbench.scoring.leakage import builtin_markers, compile_markers
from toolbench.scoring.stream import DisplayPolicy
from toolbench.store import NewResults, copy_info, iter_results, read_info, results_path


class Scorer(Protocol):
    def __call__(
        self, scenario: Scenario, fmt: Format, turns: Sequence[TurnRecord]
    ) -> TrialScores: ...


class RunScorer(Protocol):
    """A scorer that takes the trial's stored settings and the run's marker set."""

    def __call__(
        self,
        scenario: Scenario,
        fmt: Format,
        turns: Sequence[TurnRecord],
        settings: TrialSettings | None = None,
        markers: Sequence[re.Pattern[str]] | None = None,
    ) -> TrialScores: ...


def default_scorer() -> RunScorer:
    """``toolbench.scoring.score_trial``, imported lazily (it may be absent in old trees)."""
    try:
        mod: Any = importlib.import_module("toolbench.scoring")
        fn: RunScorer = mod.score_trial
    except (ImportError, AttributeError):
        raise UserError("rescore: toolbench.scoring.score_trial is not available") from None
    return fn


def run_markers(info: RunInfo | None) -> tuple[re.Pattern[str], ...]:
    """The marker set a run was scored with: the one its run.json recorded, else (a run
    from before it was recorded) the built-in formats' set, never what is installed now."""
    if info is not None and info.markers is not None:
        return compile_markers(info.markers)
    return builtin_markers()


def trial_settings(trial: TrialResult, scenario: Scenario, info: RunInfo | None) -> TrialSettings:
    """The settings the trial ran with: stored on it, else rebuilt from run.json's options."""
    if trial.settings is not None:
        return trial.settings
    max_turns = info.max_turns if info is not None else None
    retry = info.retry_on_parse_error if info is not None else False
    return effective_settings(scenario, max_turns, retry)


def default_get_format(spec: str) -> Format:
    return get_format(spec)


@dataclass
class RescoreSummary:
    out_dir: Path
    total: int = 0
    rescored: int = 0
    copied: int = 0
    unknown_scenario: int = 0
    scores_changed: int = 0
    outcome_changed: int = 0
    pass_to_fail: int = 0
    fail_to_pass: int = 0

    def render(self) -> str:
        lines = [
            f"rescored {self.rescored} of {self.total} trials into {self.out_dir}",
            f"  {self.scores_changed} trial(s) changed scores, "
            f"{self.outcome_changed} changed outcome "
            f"({self.fail_to_pass} fail->pass, {self.pass_to_fail} pass->fail)",
            f"  {self.copied} copied unchanged (not ok, or scenario unknown: "
            f"{self.unknown_scenario})",
        ]
        return "\n".join(lines)


def _outcome_of(t: TrialResult) -> str:
    scores = t.scores
    return trial_outcome(t.status, scores.get if scores is not None else lambda _: None)


def rescore_trial(
    trial: TrialResult,
    scenario: Scenario,
    fmt: Format,
    scorer: Scorer,
    display: DisplayPolicy | None = None,
) -> TrialResult:
    turns = [
        turn.model_copy(update={"parsed": fmt.parse_reply(turn.reply, scenario.tools)})
        for turn in trial.turns
    ]
    scores = scorer(scenario, fmt, turns)
    new = trial.model_copy(update={"turns": turns, "scores": scores})
    if display is not None and is_streamed(fmt) and trial.settings is not None:
        # the policy its stream measurements were just taken under (see rescore_run)
        new.settings = trial.settings.model_copy(update={"display": display})
    return new


def _bound(full: RunScorer, settings: TrialSettings, markers: Sequence[re.Pattern[str]]) -> Scorer:
    def score(scenario: Scenario, fmt: Format, turns: Sequence[TurnRecord]) -> TrialScores:
        return full(scenario, fmt, turns, settings, markers)

    return score


def rescore_run(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    scenarios: Sequence[Scenario] | None = None,
    scorer: Scorer | None = None,
    get_format: Callable[[str], Format] | None = None,
    display: DisplayPolicy | None = None,
) -> RescoreSummary:
    """Rescore a stored run into a new directory; ``display`` measures streamed text
    trials' leak under another display policy (``--display``; default: as they ran)."""
    src = results_path(run_dir)
    trials = iter_results(run_dir)  # raises the "no results file" error first
    first = next(trials, None)
    out = (
        Path(out_dir)
        if out_dir is not None
        else src.parent.with_name(src.parent.name + "-rescored")
    )
    if out.resolve() == src.parent.resolve():
        raise UserError(f"-o: '{out}' is the run being rescored; choose a new directory")
    if results_path(out).exists():
        raise UserError(f"-o: {results_path(out)} already exists; choose a new directory")
    info = read_info(src.parent)  # migrated; refused when a newer toolbench wrote it
    if scenarios is None and info is not None and info.scenario_files:
        # The files the run read, as they were: a changed or missing one is refused.
        scenarios = recorded_scenarios(info, "rescore")
    if scenarios is None:  # a run from before the files were recorded
        scenarios = load_scenarios()
    cassettes = Path(info.cassette_dir) if info is not None and info.cassette_dir else None
    scenarios = recorded_server_tools(scenarios, cassettes)  # MCP servers' tools/list
    by_id = {s.id: s for s in scenarios}
    markers = run_markers(info)
    full = default_scorer() if scorer is None else None
    getf = get_format or default_get_format
    formats: dict[str, Format] = {}
    prepare_dir(out)
    copy_info(src.parent, out)
    summary = RescoreSummary(out)
    with NewResults(out) as sink:
        for trial in itertools.chain([first] if first else [], trials):
            summary.total += 1
            scenario = by_id.get(trial.scenario_id)
            new = trial
            if trial.status != "ok":
                summary.copied += 1
            elif scenario is None:
                summary.copied += 1
                summary.unknown_scenario += 1
            else:
                if trial.format not in formats:
                    formats[trial.format] = getf(trial.format)
                fmt = formats[trial.format]
                settings = trial_settings(trial, scenario, info)
                if display is not None and is_streamed(fmt):  # measured under --display
                    settings = settings.model_copy(update={"display": display})
                score: Scorer = (
                    scorer
                    if scorer is not None
                    else _bound(cast("RunScorer", full), settings, markers)
                )
                if reads_server_state(scenario):  # a loop on an MCP server: its truth
                    # as the trial recorded it (loads the cassette layer, heavy: only here)
                    from toolbench.environments.recorded_truth import keep_recorded_truth

                    keep_recorded_truth(scenario, trial.cassette)
                new = rescore_trial(trial, scenario, fmt, score, display)
                summary.rescored += 1
                if new.scores != trial.scores:
                    summary.scores_changed += 1
                before, after = _outcome_of(trial), _outcome_of(new)
                if before != after:
                    summary.outcome_changed += 1
                    summary.fail_to_pass += before == "fail" and after == "pass"
                    summary.pass_to_fail += before == "pass" and after == "fail"
            sink.write(new)
    return summary
