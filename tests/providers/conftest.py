"""Fixtures for the provider round trips: keys set (or absent) as a user would have them."""

from __future__ import annotations

import pytest

from tests.providers.cases import DUMMY_KEY, KEY_ENVS


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
    from toolbench.runner import provider

    monkeypatch.setattr(provider, "BACKOFF_S", 0.01)
