"""Every provider reply of ``tests/data/provider_streams.yaml`` is read as its entry says
(the reply, or a typed code never recorded), and a recorded one replays offline to the
same outcome (:mod:`tests.providers.stream_fixtures`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.providers import stream_fixtures as sf

FIXTURES = sf.load()


@pytest.mark.parametrize("fx", FIXTURES, ids=[f.id for f in FIXTURES])
def test_a_provider_reply_is_read_as_its_wire_says(fx: sf.Fixture) -> None:
    assert sf.check(fx) == []


def test_the_fixtures_cover_each_signal() -> None:
    """The file holds, for every wire, the replies the issue names (a guard against a
    fixture dropped by an edit)."""
    codes = {f.expect.get("code") for f in FIXTURES}
    assert {"infra.bad_reply", "infra.server_error", "infra.stream_truncated",
            "provider.filtered"} <= codes  # fmt: skip
    assert any(f.expect.get("parse") == "failed" for f in FIXTURES)
    assert any(f.expect.get("shown") for f in FIXTURES)
    assert len({f.model.split("/")[0] for f in FIXTURES}) >= 6


REPLAYED = [
    f for f in FIXTURES if f.stream and (f.expect.get("code") is None or f.expect.get("recorded"))
]


@pytest.mark.parametrize("fx", REPLAYED, ids=[f.id for f in REPLAYED])
def test_a_recorded_reply_replays_to_the_same_outcome(fx: sf.Fixture, tmp_path: Path) -> None:
    """Recorded live, then replayed with ``--record none`` against no server: the same
    reply, or the same code (a filtered reply is the provider's answer: it is recorded
    and read to ``provider.filtered`` again)."""
    cassette = tmp_path / "trial.json"
    with sf.provider_env(fx):
        live = asyncio.run(sf.run(fx, cassette))
        assert cassette.is_file()
        again = asyncio.run(sf.run(fx, cassette, record="none"))
    live.pop("message", None)
    again.pop("message", None)
    assert again == live
