"""A damaged SSE cassette is ``cassette.unreadable`` on its trial, never an ``ok`` trial
or the provider's fault, and ``--record new`` moves it aside and records again.

One row per kind of damage (issue 22): each once replayed as something else (an empty
``chunks`` list as an ``ok`` trial, a corrupt base64 chunk as ``infra.server_error``, a
deeply nested file as ``harness.error``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake, trials_by_id
from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes.chunk_list import ChunkList
from toolbench.cassettes.recording import VERSION

pytestmark = pytest.mark.usefixtures("openai_key")
FORMAT = "xml:stream"
CASSETTE = Path("cas") / "openai_fake" / "xml_stream" / "weather.json"


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        d = json.loads(data)
        change(d)
        return json.dumps(d).encode()

    return damage


def _response(d: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = d["exchanges"][0]["response"]
    return response


def _v3_chunks(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded stream's chunks as version 3 wrote them (a list of objects), put in
    their place: version 3 is read as it is, so its damage is found as before."""
    stored = ChunkList.of_stored(_response(d)["chunks"])
    chunks = [{k: v for k, v in c._asdict().items() if v is not None} for c in stored]
    _response(d)["chunks"] = chunks
    d["version"] = 3
    return chunks


def _body(**stored: Any) -> Callable[[dict[str, Any]], None]:
    """Replace the recorded stream's stored body (version 4) by ``stored``."""
    return lambda d: _response(d).update(chunks=stored)


# (how the recorded cassette is damaged, the reason after "is unreadable: ")
DAMAGE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "empty-chunks": (
        _edit(lambda d: _response(d).update(chunks=[])),
        "exchanges.0.response.chunks: a 200 reply with no chunk",
    ),
    "corrupt-base64": (
        _edit(lambda d: _v3_chunks(d).insert(0, {"offset_ms": 0, "b64": "!!not*b64"})),
        "exchanges.0.response.chunks.0.b64: not base64",
    ),
    "corrupt-base64-body": (
        _edit(_body(offsets_ms=[0.0], sizes=[3], b64="!!not*b64")),
        "exchanges.0.response.chunks.b64: not base64",
    ),
    "sizes-not-the-body": (
        _edit(_body(offsets_ms=[0.0], sizes=[5], text="abc")),
        "exchanges.0.response.chunks.sizes: 5 bytes of chunks for a body of 3",
    ),
    "offsets-not-sizes": (
        _edit(_body(offsets_ms=[0.0, 1.0], sizes=[3], text="abc")),
        "exchanges.0.response.chunks: 2 offsets for 1 sizes",
    ),
    "negative-size": (
        _edit(_body(offsets_ms=[0.0, 1.0], sizes=[4, -1], text="abc")),
        "exchanges.0.response.chunks.sizes: a negative size",
    ),
    "no-body": (
        _edit(_body(offsets_ms=[0.0], sizes=[3])),
        "exchanges.0.response.chunks: no body (text or b64)",
    ),
    "two-bodies": (
        _edit(_body(offsets_ms=[0.0], sizes=[3], text="abc", b64="YWJj")),
        "exchanges.0.response.chunks: a body both as text and as b64",
    ),
    "unknown-body-field": (
        _edit(_body(offsets_ms=[0.0], sizes=[3], text="abc", gzip="x")),
        "exchanges.0.response.chunks.gzip: Extra inputs are not permitted",
    ),
    "deeply-nested": (
        lambda data: b'{"exchanges": ' + b"[" * 200_000,
        "nested too deeply",
    ),
    "deeply-nested-body": (
        lambda data: b'{"exchanges": [{"request": {"body": ' + b"[" * 200_000,
        "nested too deeply",
    ),
    "newer-version": (
        _edit(lambda d: d.update(version=99)),
        f"written by a newer toolbench (version 99; this reads {VERSION})",
    ),
    "events-out-of-order": (
        _edit(lambda d: _response(d)["events"].insert(1, [-1.0, {}])),
        "exchanges.0.response.events.1: events out of order (an offset before the previous"
        " event's or outside the chunks')",
    ),
    "out-of-order": (
        _edit(lambda d: _v3_chunks(d).insert(1, {"offset_ms": -1.0, "text": ""})),
        "exchanges.0.response.chunks.1.offset_ms: events out of order"
        " (an offset before the previous event's)",
    ),
    "out-of-order-body": (
        _edit(_body(offsets_ms=[0.0, 2.0, 1.0], sizes=[1, 1, 1], text="abc")),
        "exchanges.0.response.chunks.offsets_ms.2: events out of order"
        " (an offset before the previous event's)",
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_sse_cassette_is_unreadable_and_recorded_again(
    case: str, fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    damage, reason = DAMAGE[case]
    fake.enqueue(GOOD_CALL, "A joke.")
    assert run_fake(fake, tmp_path, scenario_file, formats=FORMAT) == 0
    cas = tmp_path / CASSETTE
    cas.write_bytes(damage(cas.read_bytes()))
    asked = len(fake.received)

    # The other trial (chat) replays: the cell is measured, the run exits 0.
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay",
                    formats=FORMAT) == 0  # fmt: skip
    weather = trials_by_id(tmp_path / "replay")["weather"]
    assert (weather.status, weather.error_code) == ("cassette_unreadable", "cassette.unreadable")
    assert weather.infra_error == (
        f"cassette {cas} is unreadable: {reason}; record it again with --record new"
    )
    assert len(fake.received) == asked  # replayed offline

    fake.enqueue(GOOD_CALL)
    assert run_fake(fake, tmp_path, scenario_file, out="new", formats=FORMAT) == 0
    fresh = trials_by_id(tmp_path / "new")["weather"]
    assert fresh.status == "ok" and fresh.scores is not None
    assert "moved to weather.json.unreadable-" in fresh.notes[0]
    assert list(cas.parent.glob("weather.json.unreadable-*"))
