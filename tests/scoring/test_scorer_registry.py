"""The scorer registry: one entry-point group for built-ins and plugins; a name or value
name is taken once; a broken plugin is one warning line; a scorer's bug fails its trial."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points

import pytest

from toolbench.results import ScoreValue
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


def test_an_undeclared_value_is_the_scorers_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    def sneaky(inp: TrialInput) -> Scored:
        return Scored(values={"other": ScoreValue(value=1)})

    register_scorer(Scorer("sneaky", {"declared": "number"}, sneaky))
    inp = TrialInput.__new__(TrialInput)  # never read: the stream scorer is removed below
    scorer.unregister_scorer("stream")
    with pytest.raises(ValueError, match=r"scorer 'sneaky' gave undeclared value\(s\) \['other'\]"):
        run_scorers(inp)


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
