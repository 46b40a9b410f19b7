"""The two replay modes agree: ``--replay boundary`` (the default: the cassette answers at
the provider boundary, plain and streamed, without LiteLLM's request and stream
machinery) and ``--replay full`` (every replayed reply re-derived from the recorded
bytes through LiteLLM, for checking a LiteLLM upgrade) give the same trials, turn by
turn, on a sample of the committed cassettes: 6 of the 45 scenarios with streamed
cassettes, both local models, every default format, plain and streamed (120 trials a
mode; the whole set, 1,130 trials a mode, takes minutes through LiteLLM)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolbench.cli.app import run_cli
from toolbench.providers import litellm_api
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
STREAMED = sorted(
    p.stem for p in (ROOT / "cassettes" / "local_smollm2-135m" / "xml_stream").glob("*.json")
)
SAMPLE = STREAMED[::6][:6]
SKIP = ("run_id", "started_at", "finished_at", "harness_s")


@pytest.fixture
def litellm_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many requests reached LiteLLM's ``acompletion`` (the full path)."""
    calls: list[int] = []
    lm = litellm_api.litellm()
    real = lm.acompletion

    async def counted(**kw: Any) -> Any:
        calls.append(1)
        return await real(**kw)

    monkeypatch.setattr(lm, "acompletion", counted)
    yield calls


def _replay(out: Path, mode: str) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    rows = {}
    for part, extra in (("plain", []), ("stream", ["--stream", "on"])):
        argv = ["run", "--record", "none", "--quiet", "--no-report", "--replay", mode,
                "--scenarios", ",".join(SAMPLE), *extra, "--out", str(out / part)]  # fmt: skip
        rc = run_cli(argv)
        assert rc == 0
        for r in load_results(out / part):
            d = r.model_dump(mode="json")
            for k in SKIP:
                d.pop(k, None)
            rows[(r.model, r.format, r.scenario_id, r.sample)] = d
    return rows


def test_boundary_and_full_replay_agree_on_the_committed_cassettes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, litellm_calls: list[int]
) -> None:
    assert len(SAMPLE) == 6
    monkeypatch.chdir(ROOT)
    boundary = _replay(tmp_path / "boundary", "boundary")
    assert litellm_calls == []  # every exchange, plain and streamed, answered at the boundary
    full = _replay(tmp_path / "full", "full")
    assert len(litellm_calls) >= len(full)  # and here every one through LiteLLM
    assert len(boundary) == len(full) == 6 * 2 * 5 * 2
    assert {k for k, v in boundary.items() if v["status"] == "ok"} == set(boundary)
    for key, row in boundary.items():
        assert row == full[key], key


def test_an_unknown_replay_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--record", "none", "--replay", "fast"]) == 2
    assert (
        capsys.readouterr().err == "error: --replay: must be one of boundary, full (got 'fast')\n"
    )
