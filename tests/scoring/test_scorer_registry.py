"""The scorer registry: one entry-point group for built-ins and plugins; a name or value
name is taken once; a broken plugin is one warning line; a scorer's bug fails its trial."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points

import pytest

from toolbench import ModelReply, TurnRecord, get_format, load_scenarios, score_trial
from toolbench.results import ScoreValue, Value, ValueKind
from toolbench.scoring import scorer
from toolbench.scoring.scorer import (
    DuplicateScorerError,
    Scored,
    Scorer,
    TrialInput,
    register_scorer,
    run_scorers,
    value_kind,
)


@pytest.fixture(autouse=True)
def restore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    scorer.load_scorers()
    saved = dict(scorer._REGISTRY)
    yield
    scorer._REGISTRY.clear()
    scorer._REGISTRY.update(saved)


def _nothing(inp: TrialInput) -> Scored:
    return Scored()


def test_the_built_in_stream_scorer_comes_through_the_group() -> None:
    ours = [ep for ep in entry_points(group=scorer.ENTRY_POINT_GROUP) if ep.name == "stream"]
    assert [ep.value for ep in ours] == ["toolbench.scoring.stream:SCORER"]
    assert [s.name for s in scorer.all_scorers()] == ["stream"]
    assert value_kind("ttft_ms") == "number" and value_kind("stream_leak") == "boolean"
    assert value_kind("display") == "label"


@pytest.mark.parametrize(
    ("name", "kind"),
    [("call_accuracy", "boolean"), ("parse", "label"), ("stop", "label"), ("nope", None)],
)
def test_value_kinds_of_the_core(name: str, kind: str | None) -> None:
    assert value_kind(name) == kind


@pytest.mark.parametrize(
    ("candidate", "error"),
    [
        (Scorer("stream", {"x": "number"}, _nothing), "scorer 'stream' is already registered"),
        (Scorer("mine", {"call_accuracy": "boolean"}, _nothing),
         "scorer 'mine': value name(s) call_accuracy already given"),
        (Scorer("mine", {"ttft_ms": "number"}, _nothing),
         "scorer 'mine': value name(s) ttft_ms already given"),
    ],
    ids=["scorer-name", "core-value", "other-scorers-value"],
)  # fmt: skip
def test_a_taken_name_is_refused(candidate: Scorer, error: str) -> None:
    with pytest.raises(DuplicateScorerError, match=f"^{re.escape(error)}$"):
        register_scorer(candidate)


def test_names_must_be_identifiers() -> None:
    with pytest.raises(ValueError, match="names must match"):
        Scorer("mine", {"Bad-Name": "number"}, _nothing)


@pytest.fixture
def trial() -> TrialInput:
    paris = next(s for s in load_scenarios() if s.id == "weather-paris")
    reply = ModelReply(text="It is sunny.")
    fmt = get_format("xml")
    turn = TurnRecord(request={}, reply=reply, parsed=fmt.parse_reply(reply, paris.tools))
    return TrialInput(paris, fmt, [turn])


@pytest.mark.parametrize(
    ("kind", "value", "error"),
    [
        ("number", 3, None),
        ("number", 2.5, None),
        ("number", None, None),
        ("boolean", False, None),
        ("label", "short", None),
        ("number", True, "scorer 'mine': value(s) ['v'] not of their declared kind"),
        ("boolean", 1, "scorer 'mine': value(s) ['v'] not of their declared kind"),
        ("label", 1.0, "scorer 'mine': value(s) ['v'] not of their declared kind"),
    ],
)
def test_values_must_be_of_their_declared_kind(
    trial: TrialInput, kind: ValueKind, value: Value, error: str | None
) -> None:
    register_scorer(Scorer("mine", {"v": kind}, lambda inp: Scored({"v": ScoreValue(value=value)})))
    if error is None:
        assert run_scorers(trial).values["v"].value == value
    else:
        with pytest.raises(ValueError, match=f"^{re.escape(error)}$"):
            run_scorers(trial)


def test_an_undeclared_value_is_the_scorers_bug(trial: TrialInput) -> None:
    def sneaky(inp: TrialInput) -> Scored:
        return Scored(values={"other": ScoreValue(value=1)})

    register_scorer(Scorer("sneaky", {"declared": "number"}, sneaky))
    with pytest.raises(ValueError, match=r"scorer 'sneaky' gave undeclared value\(s\) \['other'\]"):
        run_scorers(trial)


def test_a_scorers_values_and_problems_reach_the_trial(trial: TrialInput) -> None:
    def judge(inp: TrialInput) -> Scored:
        return Scored({"polite": ScoreValue(value=False, reason="no please")},
                      [("custom.rude", "the reply said no please")])  # fmt: skip

    register_scorer(Scorer("manners", {"polite": "boolean"}, judge))
    scores = score_trial(trial.scenario, trial.fmt, trial.turns)
    assert scores.values["polite"] == ScoreValue(value=False, reason="no please")
    assert scores.get("polite") is False
    assert scores.errors[-1] == "custom.rude" and scores.reasons[-1] == "the reply said no please"


def test_broken_plugins_are_one_warning_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    group = scorer.ENTRY_POINT_GROUP
    scorer.load_entry_points([
        EntryPoint("gone", "no_such_scorer_module:SCORER", group),
        EntryPoint("wrong", "toolbench.results:ScoreValue", group),
    ])  # fmt: skip
    assert capsys.readouterr().err == (
        "warning: scorer plugin 'gone' (no_such_scorer_module:SCORER) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_scorer_module'; its scorers are left out\n"
        "warning: scorer plugin 'wrong' (toolbench.results:ScoreValue) does not name a Scorer "
        "or a sequence of Scorer objects; its scorers are left out\n"
    )
    assert [s.name for s in scorer.all_scorers()] == ["stream"]


def test_stale_metadata_is_said(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(scorer, "entry_points", lambda group: [])
    monkeypatch.setattr(scorer, "_loaded", False)
    scorer._REGISTRY.clear()
    assert scorer.all_scorers() == []
    assert capsys.readouterr().err == (
        "warning: toolbench's own 'toolbench.scorers' entry points are not installed "
        "(metadata older than this checkout): reinstall it, `pip install -e .`\n"
    )
