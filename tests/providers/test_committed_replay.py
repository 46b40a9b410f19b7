"""The committed provider cassettes (tests/data/provider_rt, recorded by
``python -m tests.providers.record``; plain, and streamed for the OpenAI-compatible
family) replay offline, with no server and no key, into the results recorded with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.cases import CASES, DUMMY_KEY, KEY_ENVS
from tests.providers.record import ROOT, run_args, summary
from toolbench.cli.app import run_cli
from toolbench.store import load_results

MANIFEST: dict[str, Any] = json.loads((ROOT / "manifest.json").read_text(encoding="utf-8"))


def test_every_provider_is_committed() -> None:
    assert sorted(MANIFEST) == sorted(c.id for c in CASES)
    for entry in MANIFEST.values():
        for trial in [*entry["expected"].values(), *entry.get("expected_stream", {}).values()]:
            assert (trial["status"], trial["call_accuracy"], trial["final_answer_ok"]) == (
                "ok", True, True,
            )  # fmt: skip


def test_no_committed_byte_holds_the_key() -> None:
    for path in ROOT.rglob("*"):
        if path.is_file():
            assert DUMMY_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("case_id", sorted(MANIFEST))
def test_committed_cassettes_replay_offline(
    case_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for env in KEY_ENVS:  # a replay needs no key
        monkeypatch.delenv(env, raising=False)
    entry = MANIFEST[case_id]
    # Nothing listens at the recorded api base: every answer comes from the cassettes.
    assert run_cli(run_args(entry["model"], entry["api_base"], tmp_path / "r", "none")) == 0
    assert summary(load_results(tmp_path / "r")) == entry["expected"]
    if "expected_stream" in entry:  # recorded streamed too (a fake that streams)
        argv = run_args(entry["model"], entry["api_base"], tmp_path / "s", "none", "on")
        assert run_cli(argv) == 0
        assert summary(load_results(tmp_path / "s")) == entry["expected_stream"]
