"""The embedded server pool: a server that fails to start is an infra fault, once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolbench.errors import InfraError, ToolbenchError
from toolbench.providers import llama_server
from toolbench.providers import local_server as local


def test_a_server_that_cannot_start_fails_each_trial_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts: list[int] = []

    def start(self: local.LlamaServer) -> None:
        starts.append(1)
        raise ToolbenchError("llama-server for local/smollm2-135m exited with code 1")

    monkeypatch.setattr(local.LlamaServer, "start", start)
    monkeypatch.setattr(local, "server_available", lambda: True)
    pool = local.LocalServerPool(tmp_path)

    async def twice() -> list[str]:
        codes = []
        for _ in range(2):
            with pytest.raises(InfraError) as info:
                await pool.base_url("local/smollm2-135m")
            codes.append(info.value.code)
        return codes

    assert asyncio.run(twice()) == ["infra.connection", "infra.connection"]
    assert starts == [1]  # not started again (each start can take minutes)


def _server_running(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str
) -> local.LocalServerPool:
    """A pool whose servers run ``python -c code`` instead of llama-server."""
    import sys

    monkeypatch.setattr(local.LlamaServer, "command", lambda self: [sys.executable, "-c", code])
    monkeypatch.setattr(local, "server_available", lambda: True)
    return local.LocalServerPool(tmp_path)


def test_a_server_that_dies_fails_its_trials_with_its_last_log_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "print('loading model'); print('error: bad magic in GGUF file'); raise SystemExit(3)"
    pool = _server_running(monkeypatch, tmp_path, code)
    with pytest.raises(InfraError) as info:
        asyncio.run(pool.base_url("local/smollm2-135m"))
    log = tmp_path / "server-smollm2-135m.log"
    assert str(info.value) == (
        "llama-server for local/smollm2-135m exited with code 3; last log lines: "
        f"loading model | error: bad magic in GGUF file ({log})"
    )
    assert info.value.code == "infra.connection"


def test_a_starting_server_does_not_block_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other models' trials go on while a server starts (it may take minutes)."""
    monkeypatch.setattr(llama_server, "READY_TIMEOUT_S", 1.5)
    monkeypatch.setattr(llama_server, "POLL_S", 0.05)
    pool = _server_running(monkeypatch, tmp_path, "import time; time.sleep(30)")
    ticks: list[float] = []

    async def other_trials() -> None:
        for _ in range(100):
            ticks.append(1)
            await asyncio.sleep(0.01)

    async def both() -> None:
        other = asyncio.create_task(other_trials())
        try:
            with pytest.raises(InfraError, match=r"not ready after 1.5s"):
                await pool.base_url("local/smollm2-135m")
        finally:
            pool.stop_all()
        other.cancel()

    asyncio.run(both())
    # Blocking polling (time.sleep) let the other task run at most once or twice.
    assert len(ticks) >= 50


def test_a_local_server_that_fails_does_not_stop_the_other_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from tests.runner.conftest import SCENARIO
    from tests.support.fake_openai import FakeOpenAI
    from toolbench.cli.app import run_cli
    from toolbench.store import load_results

    scen = tmp_path / "mini.yaml"
    scen.write_text(SCENARIO)
    code = "print('error: out of memory'); raise SystemExit(1)"
    monkeypatch.setattr(local.LlamaServer, "command", lambda self: [sys.executable, "-c", code])
    monkeypatch.setattr(local, "server_available", lambda: True)
    monkeypatch.setattr("toolbench.providers.local_api.check_ready", lambda models: None)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    with FakeOpenAI() as fake:
        rc = run_cli([
            "run", "--models", "local/smollm2-135m,openai/fake", "--formats", "xml",
            "--scenarios", str(scen), "--api-base", fake.base_url,
            "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
            "--quiet", "--no-report",
        ])  # fmt: skip
    assert rc == 3  # the local model measured nothing
    by_model: dict[str, set[str]] = {}
    for r in load_results(tmp_path / "run"):
        by_model.setdefault(r.model, set()).add(r.status)
        if r.model.startswith("local/"):
            assert r.infra_error is not None and "error: out of memory" in r.infra_error
    assert by_model == {"local/smollm2-135m": {"infra_error"}, "openai/fake": {"ok"}}
    assert "  local/smollm2-135m: 2 trial(s), 2 infra_error (infra.connection)" in (
        capsys.readouterr().out
    )
