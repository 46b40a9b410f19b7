"""The scorer registry: one entry-point group for built-ins and plugins; a name or value
name is taken once; a broken plugin is one warning line; a scorer's bug fails its trial."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points

import pytest

from toolbench import ModelReply, TurnRecord, get_format, load_scenarios, registry, score_trial
from toolbench.results import ScoreValue, Value, ValueKind
from toolbench.scoring import accuracy, scorer
from toolbench.scoring import builtin_scorers as builtin
from toolbench.scoring.scorer import (
    Scored,
    Scorer,
    ScorerRegistrationError,
    TrialInput,
    register_scorer,
    run_scorers,
    value_kind,
)


@pytest.fixture(autouse=True)
def restore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    scorer.SCORERS.load()
    saved = dict(scorer._REGISTRY)
    yield
    scorer._REGISTRY.clear()
    scorer._REGISTRY.update(saved)


def _nothing(inp: TrialInput) -> Scored:
    return Scored()


BUILTIN = ["parse", "calls", "schema", "stop", "leakage", "retry", "fallback", "stream", "loop"]


def test_the_built_in_scorers_are_one_entry_point_of_the_group() -> None:
    ours = [ep for ep in entry_points(group=scorer.ENTRY_POINT_GROUP) if registry.ours(ep)]
    assert [(ep.name, ep.value) for ep in ours] == [
        ("builtin", "toolbench.scoring.builtin_scorers:SCORERS")
    ]
    assert [s.name for s in builtin.SCORERS] == BUILTIN
    assert [s.name for s in scorer.all_scorers()] == BUILTIN


@pytest.mark.parametrize(
    ("name", "kind"),
    [("call_accuracy", "boolean"), ("parse", "label"), ("stop", "label"),
     ("first_try_ok", "boolean"), ("ttft_ms", "number"), ("stream_leak", "boolean"),
     ("display", "label"), ("nope", None)],
)  # fmt: skip
def test_value_kinds_are_the_declared_ones(name: str, kind: str | None) -> None:
    assert value_kind(name) == kind


@pytest.mark.parametrize(
    ("candidate", "error"),
    [
        (Scorer("stream", {"x": "number"}, _nothing), "scorer 'stream' is already registered"),
        (Scorer("mine", {"call_accuracy": "boolean"}, _nothing),
         "scorer 'mine': value name(s) call_accuracy already given"),
        (Scorer("mine", {"call_accuracy": "boolean"}, _nothing, replaces="nothing"),
         "scorer 'mine' replaces 'nothing', which is not registered"),
        (Scorer("mine", {"call_accuracy": "boolean"}, _nothing, replaces="calls"),
         "scorer 'mine' replaces 'calls' but does not declare its value(s) "
         "final_answer_ok, no_call_correct with the same kind"),
        (Scorer("mine", {"call_accuracy": "number", "no_call_correct": "boolean",
                         "final_answer_ok": "boolean"}, _nothing, replaces="calls"),
         "scorer 'mine' replaces 'calls' but does not declare its value(s) "
         "call_accuracy with the same kind"),
        (Scorer("stop", {**accuracy.SCORER.values}, _nothing, replaces="calls"),
         "scorer 'stop' is already registered"),
        (Scorer("mine", {**accuracy.SCORER.values, "parse_ok": "boolean"}, _nothing,
                replaces="calls"),
         "scorer 'mine': value name(s) parse_ok already given"),
        (Scorer("mine", {"ttft_ms": "number"}, _nothing),
         "scorer 'mine': value name(s) ttft_ms already given"),
    ],
    ids=["scorer-name", "core-value", "replaces-nothing", "replacement-drops-values",
         "replacement-changes-a-kind", "replacement-takes-a-taken-name",
         "replacement-takes-a-taken-value", "other-scorers-value"],
)  # fmt: skip
def test_a_taken_name_or_a_bad_replacement_is_refused(candidate: Scorer, error: str) -> None:
    before = scorer.all_scorers()
    with pytest.raises(ScorerRegistrationError, match=f"^{re.escape(error)}$"):
        register_scorer(candidate)
    assert scorer.all_scorers() == before


def test_a_replacement_takes_the_place_of_the_scorer_it_replaces(
    capsys: pytest.CaptureFixture[str],
) -> None:
    values = {**accuracy.SCORER.values, "strict_extra": "boolean"}
    mine = Scorer("strict_calls", values, _nothing, replaces="calls")
    register_scorer(mine)
    assert capsys.readouterr().err == "warning: scorer 'strict_calls' replaces scorer 'calls'\n"
    assert [s.name for s in scorer.all_scorers()] == ["parse", "strict_calls", *BUILTIN[2:]]
    assert value_kind("strict_extra") == "boolean"
    with pytest.raises(KeyError):
        scorer.get_scorer("calls")


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
    assert [s.name for s in scorer.all_scorers()] == BUILTIN


def test_stale_metadata_is_said(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(scorer.SCORERS, "find", lambda group: [])
    monkeypatch.setattr(scorer.SCORERS, "_loaded", False)
    scorer._REGISTRY.clear()
    assert scorer.all_scorers() == []
    assert capsys.readouterr().err == (
        "warning: toolbench's own 'toolbench.scorers' entry points are not installed "
        "(metadata older than this checkout): reinstall it, `pip install -e .`\n"
    )


def test_scorers_after_a_replacement_read_its_values() -> None:
    """``retry`` reads ``call_accuracy`` as the scorers before it gave it: replace the
    built-in ``calls`` with one that fails every call, and a retry that the built-in
    counts as recovered is not."""
    from scoring_helpers import FakeFormat, call, scenario, turn

    builtin_calls = scorer.get_scorer("calls")

    def failing(inp: TrialInput) -> Scored:
        got = builtin_calls.score(inp)
        got.values["call_accuracy"] = ScoreValue(value=False, reason="never")
        return got

    turns = [turn(status="failed"), turn([call("get_weather", city="Paris")], retry=True)]
    paris = scenario({"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]})
    before = score_trial(paris, FakeFormat(), turns)
    assert (before.get("call_accuracy"), before.get("retry_recovered")) == (True, True)
    register_scorer(Scorer("failing", builtin_calls.values, failing, replaces="calls"))
    after = score_trial(paris, FakeFormat(), turns)
    assert (after.get("call_accuracy"), after.get("retry_recovered")) == (False, False)
    assert after.values["call_accuracy"].reason == "never"
