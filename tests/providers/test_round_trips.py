"""Every provider teams ask about, end to end: ``toolbench run`` through LiteLLM and the
cassettes against a local fake of the provider's wire protocol (:mod:`.servers`), every
format's multi-turn scenario, then the same run replayed offline with no server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.cases import CASES, FORMATS, SCENARIOS, Case
from toolbench.cli.app import run_cli
from toolbench.results import TrialResult, load_results


def run(case: Case, base: str, tmp: Path, out: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", case.model, "--formats", ",".join(FORMATS),
        "--scenarios", str(SCENARIOS), "--api-base", base, "--out", str(tmp / out),
        "--cassettes", str(tmp / "cas"), "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def by_key(results: list[TrialResult]) -> dict[tuple[str, str], TrialResult]:
    return {(r.format, r.scenario_id): r for r in results}


def all_bytes(root: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_then_offline_replay(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    if not case.keyed:  # a local server: nothing in the environment, nothing demanded
        for env in ("OPENAI_API_KEY", "HOSTED_VLLM_API_KEY", "LM_STUDIO_API_KEY"):
            monkeypatch.delenv(env, raising=False)
    with case.server() as server:
        base = server.base_url
        assert run(case, base, tmp_path, "live", "--concurrency", "4") == 0
        received = list(server.received)
    live = by_key(load_results(tmp_path / "live"))
    assert len(live) == len(FORMATS) * 2
    for key, r in live.items():
        assert r.status == "ok", (key, r.error_code, r.infra_error)
        assert r.scores is not None
        assert r.scores.call_accuracy is True, (key, r.scores.reasons)
        assert r.scores.final_answer_ok is True, (key, r.scores.reasons)
        assert len(r.turns) == 2
    # Two requests per trial: no fault, no retry, nothing the fake refused.
    assert len(received) == len(live) * 2
    if case.keyed:
        # The key reached the server, and no byte toolbench wrote holds it.
        assert any(keys in str(q.headers) for q in received)
        for path, data in all_bytes(tmp_path):
            assert keys.encode() not in data, path

    # The server is gone: the replay is answered by the cassettes alone.
    assert run(case, base, tmp_path, "replay", "--record", "none") == 0
    replay = by_key(load_results(tmp_path / "replay"))
    assert replay.keys() == live.keys()
    for key, r in replay.items():
        assert r.status == "ok"
        assert r.scores == live[key].scores
        assert [t.reply for t in r.turns] == [t.reply for t in live[key].turns]
        assert [t.request for t in r.turns] == [t.request for t in live[key].turns]
