"""A stream's chunks stored as one body and its cuts (cassette version 4): the chunks cut
from it are those version 3 wrote one by one, whatever the bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.cassettes import recording as rec
from toolbench.cassettes.chunk_list import Chunk, ChunkList
from toolbench.errors import CassetteUnreadableError

EURO = "€".encode()
# (chunks as the transport returned them, the stored form's body field)
CASES = [
    pytest.param([b"data: {}\n\n", b"data: [DONE]\n\n"], "text", id="ascii"),
    pytest.param([b'data: {"c": "caf', b'\xc3\xa9"}\n\n'], "text", id="accent-whole"),
    pytest.param([b"data: " + EURO[:1], EURO[1:] + b"\n\n"], "text", id="character-split"),
    pytest.param([b"\x00\x00\x00\x10", b"\xff\xfe binary"], "b64", id="binary"),
    pytest.param([b"", b"a"], "text", id="empty-chunk"),
    pytest.param([], "text", id="no-chunk"),
]


@pytest.mark.parametrize(("datas", "field"), CASES)
def test_stored_chunks_are_cut_back_into_the_chunks_recorded(
    datas: list[bytes], field: str
) -> None:
    chunks = [Chunk.of(d, 1.5 * i) for i, d in enumerate(datas)]
    stored = ChunkList(chunks).stored()
    assert field in stored and stored["sizes"] == [len(d) for d in datas]
    back = ChunkList.of_stored(json.loads(json.dumps(stored)))
    assert back.problem("r") is None
    assert list(back) == chunks  # text where whole UTF-8, base64 where not, as version 3
    assert [c.data() for c in back] == datas
    assert back.offsets_ms == [c.offset_ms for c in chunks]


@given(st.lists(st.binary(max_size=12), max_size=8))
def test_any_bytes_round_trip(datas: list[bytes]) -> None:
    chunks = [Chunk.of(d, float(i)) for i, d in enumerate(datas)]
    back = ChunkList.of_stored(json.loads(json.dumps(ChunkList(chunks).stored())))
    assert back.problem("r") is None
    assert list(back) == chunks
    assert b"".join(c.data() for c in back) == b"".join(datas)


def _cassette(chunks: Any, version: int) -> str:
    exchange = {
        "request": {"method": "POST", "uri": "http://x/v1/chat/completions", "body": {}},
        "response": {"status": 200, "chunks": chunks, "events": [[1.0, "hi"]]},
    }
    return json.dumps({"kind": rec.KIND, "version": version, "exchanges": [exchange]})


def test_version_3_is_read_as_it_is_and_written_as_version_4() -> None:
    chunks = [Chunk.of(b'data: {"x": 1}\n\n', 1.0), Chunk.of(EURO[:2], 2.0)]
    objects = [{k: v for k, v in c._asdict().items() if v is not None} for c in chunks]
    old = rec.parse(_cassette(objects, 3), "c.json")
    new = rec.parse(_cassette(ChunkList(chunks).stored(), 4), "c.json")
    assert old.exchanges == new.exchanges
    assert old.exchanges[0].response.chunks == chunks
    written = json.loads(rec.dump(new))["exchanges"][0]["response"]["chunks"]
    assert written == {"offsets_ms": [1.0, 2.0], "sizes": [16, 2],
                       "b64": "ZGF0YTogeyJ4IjogMX0KCuKC"}  # fmt: skip
    assert rec.parse(rec.dump(old), "c.json").exchanges == new.exchanges


def test_a_lone_surrogate_in_a_stored_body_is_a_typed_error() -> None:
    text = _cassette({"offsets_ms": [1.0], "sizes": [3], "text": "\udc00"}, 4)
    with pytest.raises(CassetteUnreadableError) as info:
        rec.parse(text, "c.json")
    assert str(info.value) == (
        "cassette c.json is unreadable: "
        "exchanges.0.response.chunks.text: not UTF-8 text (a lone surrogate)"
    )


def test_a_response_writes_its_chunks_as_one_body_and_reads_them_back() -> None:
    chunks = [Chunk.of(b"data: {}\n\n", 1.0), Chunk.of(b"\xff\xfe", 2.0)]
    response = rec.RecordedResponse(status=200, chunks=chunks)
    dumped = response.model_dump(mode="json", exclude_none=True)["chunks"]
    assert dumped == {"offsets_ms": [1.0, 2.0], "sizes": [10, 2], "b64": "ZGF0YToge30KCv/+"}
    back = rec.RecordedResponse.model_validate_json(response.model_dump_json())
    assert back.chunks == chunks and back.chunks is not None
    assert [c.data() for c in back.chunks] == [b"data: {}\n\n", b"\xff\xfe"]
