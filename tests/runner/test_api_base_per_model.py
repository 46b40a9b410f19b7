"""``--api-base`` per model: ``--model-param MODEL:api_base=URL`` (or ``toolbench.toml``)
sends that model's requests to its own server; the run's ``--api-base`` serves the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import trials_by_id
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")


def _run(tmp: Path, scen: Path, out: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", "openai/a,openai/b", "--formats", "prompt-json",
        "--scenarios", str(scen), "--out", str(tmp / out), "--cassettes", str(tmp / "cas"),
        "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def test_each_model_reaches_its_own_server_and_replays_offline(
    tmp_path: Path, scenario_file: Path
) -> None:
    with FakeServer(default="From A.") as a, FakeServer(default="From B.") as b:
        own = f"openai/a:api_base={a.base_url}"
        assert _run(tmp_path, scenario_file, "run", "--api-base", b.base_url,
                    "--model-param", own) == 0  # fmt: skip
        assert {r.body["model"] for r in a.received} == {"a"}
        assert {r.body["model"] for r in b.received} == {"b"}
        for r in load_results(tmp_path / "run"):
            want = "From A." if r.model == "openai/a" else "From B."
            assert r.turns[0].reply.text == want
            assert r.params is not None and "api_base" not in r.params.sent
        info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
        assert info["model_params"]["openai/a"]["api_base"] == a.base_url
        seen = len(a.received) + len(b.received)
    # Both servers gone: the cassettes answer (each base recorded as the placeholder host).
    assert _run(tmp_path, scenario_file, "rep", "--api-base", "http://127.0.0.1:9/v1",
                "--model-param", "openai/a:api_base=http://127.0.0.1:8/v1",
                "--record", "none") == 0  # fmt: skip
    assert all(t.status == "ok" for t in trials_by_id(tmp_path / "rep").values())
    assert seen == 4


def test_a_bad_per_model_api_base_is_refused_before_any_call(
    tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = _run(tmp_path, scenario_file, "run", "--model-param", "openai/a:api_base=ftp://x")
    assert rc == 2
    err = capsys.readouterr().err
    assert "--model-param: openai/a: api_base must be an http:// or https:// URL" in err
