"""``--record new`` over a cassette (``replay_then_live``): a trial is driven once. It is
replayed until its cassette cannot answer a request; that request goes live (through the
endpoint the scheduler turns live), is recorded, and the trial goes on from there."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import MT_SCENARIO, run_fake
from toolbench.formats.base import Format
from toolbench.providers.fake import FakeServer, Reply, by_turn, turn_of
from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.providers.model_api import Endpoint
from toolbench.results import TrialResult
from toolbench.runner import schedule
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")

CALL = '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}'
ANSWER = "It is 23 degrees in Lisbon."


@pytest.fixture
def mt_file(tmp_path: Path) -> Path:
    path = tmp_path / "scen" / "mt.yaml"
    path.parent.mkdir()
    path.write_text(MT_SCENARIO, encoding="utf-8")
    return path


@pytest.fixture
def drives(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scenario of every trial the scheduler drives (each call of ``run_trial``)."""
    seen: list[str] = []
    real = schedule.run_trial  # type: ignore[attr-defined]

    async def counted(spec: Any, *args: Any) -> TrialResult:
        seen.append(spec.scenario.id)
        return await real(spec, *args)

    monkeypatch.setattr(schedule, "run_trial", counted)
    return seen


@pytest.fixture
def endpoints(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each endpoint the kind made was live."""
    made: list[bool] = []
    real = LiteLLMAPI.endpoint

    async def counted(self: LiteLLMAPI, model: str, fmt: Format, live: bool) -> Endpoint:
        made.append(live)
        return await real(self, model, fmt, live)

    monkeypatch.setattr(LiteLLMAPI, "endpoint", counted)
    return made


def _cassette(tmp: Path, fmt: str) -> Path:
    return tmp / "cas" / "openai_fake" / fmt.replace(":", "_") / "mt.json"


def _keep_turn_one(path: Path) -> None:
    """Cut the recording down to its first exchange (turn 1)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["exchanges"]) == 2
    data["exchanges"] = data["exchanges"][:1]
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["prompt-json", "prompt-json:stream"])
def test_a_cassette_that_falls_short_is_replayed_then_recorded_in_one_drive(
    tmp_path: Path, mt_file: Path, drives: list[str], endpoints: list[bool], fmt: str
) -> None:
    with FakeServer(by_turn([CALL, ANSWER])) as first:
        assert run_fake(first, tmp_path, mt_file, formats=fmt, out="rec") == 0
    cas = _cassette(tmp_path, fmt)
    _keep_turn_one(cas)
    drives.clear()
    endpoints.clear()

    with FakeServer(by_turn([CALL, ANSWER])) as fake:
        assert run_fake(fake, tmp_path, mt_file, formats=fmt) == 0
    assert drives == ["mt"]  # driven once
    assert endpoints == [False, True]  # replayed, then turned live at turn 2
    assert len(fake.received) == 1  # turn 1 replayed, turn 2 live
    assert turn_of(fake.received[0].body) == 1
    (result,) = load_results(tmp_path / "run")
    assert result.status == "ok" and len(result.turns) == 2
    assert result.scores is not None and result.scores.get("call_accuracy") is True
    assert [a.outcome for a in result.attempts] == ["ok", "ok"]
    assert json.loads(cas.read_text(encoding="utf-8"))["exchanges"].__len__() == 2

    # What it recorded answers a replay whole: nothing reaches a server.
    with FakeServer(by_turn([])) as idle:
        assert run_fake(idle, tmp_path, mt_file, "--record", "none", formats=fmt,
                        out="replay") == 0  # fmt: skip
    assert idle.received == []
    (again,) = load_results(tmp_path / "replay")
    assert [t.reply for t in again.turns] == [t.reply for t in result.turns]


def test_an_unreadable_cassette_is_moved_aside_and_recorded_anew_in_one_drive(
    tmp_path: Path, mt_file: Path, drives: list[str], endpoints: list[bool]
) -> None:
    cas = _cassette(tmp_path, "prompt-json")
    cas.parent.mkdir(parents=True)
    cas.write_text("{not json", encoding="utf-8")
    with FakeServer(by_turn([CALL, ANSWER])) as fake:
        assert run_fake(fake, tmp_path, mt_file) == 0
    assert drives == ["mt"]
    assert endpoints == [False, True]  # live from its first request
    assert len(fake.received) == 2
    (result,) = load_results(tmp_path / "run")
    assert result.status == "ok"
    assert any("moved to" in n and "recorded again" in n for n in result.notes), result.notes
    assert len(json.loads(cas.read_text(encoding="utf-8"))["exchanges"]) == 2
    assert [p.name for p in cas.parent.iterdir() if p != cas]  # the unreadable file, aside


def test_a_trial_that_goes_live_counts_as_live_within_its_kinds_width(
    tmp_path: Path, mt_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two trials whose cassettes fall short at turn 2, of a kind one request wide: they
    replay side by side, then reach the server one at a time, each counted live (scored
    as a live trial is) while it talks to it."""
    text = MT_SCENARIO.replace("id: mt", "id: mt2").replace("Lisbon?", "Lisbon today?")
    (mt_file.parent / "mt2.yaml").write_text(text, encoding="utf-8")
    scen = mt_file.parent
    with FakeServer(by_turn([CALL, ANSWER])) as first:
        assert run_fake(first, tmp_path, scen, out="rec") == 0
    for name in ("mt", "mt2"):
        _keep_turn_one(_cassette(tmp_path, "prompt-json").with_name(f"{name}.json"))

    scheduler: list[Any] = []
    real_init = schedule._Scheduler.__init__

    def init(self: Any, *args: Any) -> None:
        real_init(self, *args)
        scheduler.append(self)

    monkeypatch.setattr(schedule._Scheduler, "__init__", init)
    monkeypatch.setattr(LiteLLMAPI, "width", 1)
    lock = threading.Lock()
    inflight, most, live_seen = [0], [0], []
    script = by_turn([CALL, ANSWER])

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            inflight[0] += 1
            most[0] = max(most[0], inflight[0])
            live_seen.append(scheduler[0].live)
        time.sleep(0.2)
        with lock:
            inflight[0] -= 1
        return script(body)

    with FakeServer(respond) as fake:
        assert run_fake(fake, tmp_path, scen) == 0
    assert len(fake.received) == 2
    assert most[0] == 1  # the kind's width, shared by trials that went live
    assert live_seen == [1, 1]
    assert scheduler[0].live == 0
    assert {r.status for r in load_results(tmp_path / "run")} == {"ok"}
