"""The embedded server pool: a server that fails to start is an infra fault, once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolbench.errors import InfraError, ToolbenchError
from toolbench.runner import local


def test_a_server_that_cannot_start_fails_each_trial_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts: list[int] = []

    def start(self: local.LocalServer) -> None:
        starts.append(1)
        raise ToolbenchError("local server for local/smollm2-135m exited with code 1")

    monkeypatch.setattr(local.LocalServer, "start", start)
    monkeypatch.setattr(local, "server_available", lambda: True)
    pool = local.LocalServerPool(tmp_path)

    async def twice() -> list[str]:
        codes = []
        for _ in range(2):
            with pytest.raises(InfraError) as info:
                await pool.base_url("local/smollm2-135m", native=False)
            codes.append(info.value.code)
        return codes

    assert asyncio.run(twice()) == ["infra.connection", "infra.connection"]
    assert starts == [1]  # not started again (each start can take minutes)
