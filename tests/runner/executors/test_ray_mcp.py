"""MCP servers on Ray: the workers get the driver's configured servers and the listings
that failed there. A server whose ``tools/list`` failed when the run was planned fails
its scenario's trials with the same typed fault as a local run, and no worker starts it
again; the other server's scenario runs on the workers."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.environments.test_mcp_runs import REPLIES, SERVER, configure, started
from tests.environments.test_mcp_tools import LISTED, OWN
from tests.runner.conftest import run_fake, trials_by_id
from toolbench.providers.fake import FakeServer, by_last_user

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(by_last_user(REPLIES)) as server:
        yield server


@pytest.mark.usefixtures("cluster")
def test_a_listing_that_failed_on_the_driver_fails_typed_on_the_workers(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # toolbench.toml here: the driver's only
    scen = tmp_path / "listed.yaml"
    scen.write_text(LISTED + OWN.replace("environment: {name: notes}", "environment: {name: ok}"))
    pids = configure(tmp_path, NOTES_START="crash")
    with (tmp_path / "toolbench.toml").open("a") as f:
        f.write(f"[mcp.ok]\ncommand = {json.dumps([sys.executable, str(SERVER)])}\n")
    assert run_fake(fake, tmp_path, scen, out="local") == 0
    assert len(started(pids)) == 1
    assert run_fake(fake, tmp_path, scen, "--executor", "ray", out="ray") == 0
    assert len(started(pids)) == 2  # tried once, on the driver; no worker tried again
    local, ray = trials_by_id(tmp_path / "local"), trials_by_id(tmp_path / "ray")
    fault = ("status", "error_code", "error_type", "infra_error")
    assert local["listed"].model_dump(include=set(fault)) == ray["listed"].model_dump(
        include=set(fault)
    )
    assert (ray["listed"].status, ray["listed"].error_code) == (
        "harness_error", "environment.mcp_start"
    )  # fmt: skip
    assert "refusing to start" in (ray["listed"].infra_error or "")
    assert ray["own"].status == "ok"  # a server configured only on the driver ran
