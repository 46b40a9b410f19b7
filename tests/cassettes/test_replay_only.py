"""The replay-only cassette reads a recording without vcrpy and hands vcrpy's cassette
of the same file, with what it played, to a request that reaches HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.cassettes import recording as rec
from toolbench.cassettes.replay_only import ReplayOnlyCassette
from toolbench.cassettes.serializer import LATENCY_KEY, REQUEST_KEYS, VCR_VERSION
from toolbench.errors import CassetteMissingError, CassetteUnreadableError


def test_the_vcr_version_written_is_vcrpys() -> None:
    from vcr.serialize import CASSETTE_FORMAT_VERSION

    assert VCR_VERSION == CASSETTE_FORMAT_VERSION


def _recording() -> rec.Recording:
    def ex(key: str, status: int, body: object) -> rec.RecordedExchange:
        return rec.RecordedExchange(
            request=rec.RecordedRequest(method="POST", uri="http://h/v1/chat/completions"),
            response=rec.RecordedResponse(status=status, body=body),
            key=key, latency_s=0.25,
        )  # fmt: skip

    return rec.Recording(exchanges=[
        ex("k-ok", 200, {"choices": [{"message": {"content": "hi"}}]}),
        ex("k-refused", 400, {"error": {"message": "no"}}),
        ex("k-list", 200, [1, 2]),
    ])  # fmt: skip


def test_replies_by_index_a_repeat_read_anew() -> None:
    upgraded: list[int] = []
    cas = ReplayOnlyCassette(_recording(), lambda: upgraded.append(1), _recording)
    assert cas._metadata[REQUEST_KEYS] == ["k-ok", "k-refused", "k-list"]
    assert cas._metadata[LATENCY_KEY] == [0.25, 0.25, 0.25]
    first = cas.reply_body(0)
    assert first == {"choices": [{"message": {"content": "hi"}}]}
    first["choices"] = []  # a reader that changed what it was given
    again = cas.reply_body(0)
    assert again == {"choices": [{"message": {"content": "hi"}}]}  # read anew
    assert again is not first
    assert cas.reply_body(1) is None  # a refusal: the full path acts on it
    assert cas.reply_body(2) is None  # not a JSON object
    assert cas.play_count == 2  # the two plays of the reply; the rest were not plays
    assert upgraded == []


def test_the_upgrade_keeps_what_was_played(tmp_path: Path) -> None:
    class Vcr:
        def __init__(self) -> None:
            from collections import Counter

            self.play_counts: Counter[int] = Counter()

    cas = ReplayOnlyCassette(_recording(), Vcr)
    cas.reply_body(0)
    up = cas.upgrade()
    assert up.play_counts[0] == 1


@pytest.mark.parametrize(
    ("content", "error", "why"),
    [
        (None, CassetteMissingError, "no cassette"),
        (b"", CassetteUnreadableError, "empty file"),
        (b"\xff\xfe", CassetteUnreadableError, "not UTF-8 text"),
        (
            b'{"kind": "toolbench-cassette", "version": 3, "exchanges": 7}',
            CassetteUnreadableError,
            "exchanges",
        ),
    ],
)
def test_unreadable_files_are_typed_errors(
    tmp_path: Path, content: bytes | None, error: type[Exception], why: str
) -> None:
    path = tmp_path / "t.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(error, match=why):
        ReplayOnlyCassette.open(path, lambda: None)


def test_a_repeat_play_of_an_opened_file_is_read_from_the_file_anew(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(rec.dump(_recording()), encoding="utf-8")
    cas = ReplayOnlyCassette.open(path, lambda: None)
    first = cas.reply_body(0)
    assert first is not None
    first["choices"][0]["message"]["content"] = "changed by a reader"
    assert cas.reply_body(0) == {"choices": [{"message": {"content": "hi"}}]}
