"""Where a trial is scored: in a worker thread while a trial may be waiting on a server,
on the event loop when nothing is (a replay: the thread's handoff cost a third of a
replayed plain trial's CPU and protected no I/O) or when its scoring is known to be quick
(:mod:`toolbench.scoring.quick`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, SCENARIO, run_fake
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.runner import drive
from toolbench.scoring import score_trial
from toolbench.scoring.quick import QUICK_REPLY_CHARS

pytestmark = pytest.mark.usefixtures("openai_key")


def _spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """Patch the scorer to note, for each trial's scenario, whether it was scored on the
    main thread."""
    on_main: dict[str, bool] = {}

    def score(*args: Any, **kwargs: Any) -> Any:
        on_main[args[0].id] = threading.current_thread() is threading.main_thread()
        return score_trial(*args, **kwargs)

    monkeypatch.setattr(drive, "score_trial", score)
    return on_main


# The scenario of conftest with an author's pattern: the answer check's regex.
ANSWER_REGEX = '      final_answer: {regex: "^No\\\\.$"}\n'
PATTERNED = SCENARIO.replace("      no_call: true\n", "      no_call: true\n" + ANSWER_REGEX)


@pytest.mark.parametrize(
    ("text", "live_on_loop"),
    [(SCENARIO, {"weather": True, "chat": True}), (PATTERNED, {"weather": True, "chat": False})],
    ids=["quick to score", "an author's pattern"],
)
def test_live_trials_quick_to_score_are_scored_on_the_loop_and_replays_always(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, live_on_loop: dict[str, bool]
) -> None:
    scenario_file = tmp_path / "scen" / "mini.yaml"
    scenario_file.parent.mkdir()
    scenario_file.write_text(text, encoding="utf-8")
    on_main = _spy(monkeypatch)
    replies = {"Weather in Paris?": GOOD_CALL, "Tell me a joke.": "No."}
    with FakeServer(by_last_user(replies)) as fake:
        assert run_fake(fake, tmp_path, scenario_file) == 0
        # Recorded, each beside the other's I/O: on the loop only when known to be quick.
        assert on_main == live_on_loop
        on_main.clear()
        assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="again") == 0
    assert on_main == {"weather": True, "chat": True}  # replayed: nothing waits on a server


def test_a_long_live_reply_is_scored_in_a_thread(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_main = _spy(monkeypatch)
    long = "No. " * (QUICK_REPLY_CHARS // 4 + 1)
    replies = {"Weather in Paris?": GOOD_CALL, "Tell me a joke.": long}
    with FakeServer(by_last_user(replies)) as fake:
        assert run_fake(fake, tmp_path, scenario_file) == 0
    assert on_main == {"weather": True, "chat": False}  # the long reply in a thread


@pytest.mark.parametrize(
    ("inline", "on_loop"),
    [(None, False), (lambda turns: False, False), (lambda turns: True, True)],
    ids=["not asked", "a thread", "the loop"],
)
def test_score_asks_where_with_the_turns(
    monkeypatch: pytest.MonkeyPatch, inline: Callable[[Any], bool] | None, on_loop: bool
) -> None:
    on_main: list[bool] = []
    monkeypatch.setattr(drive, "score_trial", lambda *a: on_main.append(
        threading.current_thread() is threading.main_thread()))  # fmt: skip
    spec: Any = type("Spec", (), {"scenario": None, "fmt": None, "markers": None})()
    asyncio.run(drive._score(spec, [], None, inline))
    assert on_main == [on_loop]
