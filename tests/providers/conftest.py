"""Fixtures for provider tests: the FIFO fake server, fast retries, a tiny scenario file,
and keys set (or absent) as a user of the round trips would have them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.cases import DUMMY_KEY, KEY_ENVS
from tests.runner.conftest import SCENARIO
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every keyed provider's variable holds the dummy key (the keyless servers need none)."""
    for env in KEY_ENVS:
        monkeypatch.setenv(env, DUMMY_KEY)
    return DUMMY_KEY


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in KEY_ENVS:
        monkeypatch.delenv(env, raising=False)


@pytest.fixture(autouse=True)
def _fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbench.providers import attempts as call

    monkeypatch.setattr(call, "BACKOFF_S", 0.01)


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scen" / "mini.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO, encoding="utf-8")
    return path
