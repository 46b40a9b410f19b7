"""The trial cassette answers at the provider boundary without HTTP (and without vcrpy):
a plain reply by its request key, a repeat play read anew from the file, a refusal or a
body that is no object left to the full path; an unreadable file is a typed error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolbench.cassettes import recording as rec
from toolbench.cassettes.legacy_yaml import VCR_VERSION
from toolbench.cassettes.trial import TrialCassette
from toolbench.cassettes.use import use_cassette
from toolbench.errors import CassetteMissingError, CassetteUnreadableError


def test_the_vcr_version_read_is_vcrpys() -> None:
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


def test_replies_by_key_a_repeat_play_a_copy() -> None:
    tc = TrialCassette(Path("t.json"), "none", _recording(), [])
    assert tc.may_replay()
    first = tc.replay_reply("k-ok", None)
    assert first == {"choices": [{"message": {"content": "hi"}}]}
    assert tc.last_replayed and tc.latency(0, 9.0, replayed=True) == 0.25
    first["choices"] = []  # a reader that changed what it was given
    again = tc.replay_reply("k-ok", None)
    assert again == {"choices": [{"message": {"content": "hi"}}]}
    assert again is not first
    assert tc.replay_reply("k-refused", None) is None  # a refusal: the full path acts on it
    assert tc.replay_reply("k-list", None) is None  # not a JSON object
    assert tc.replay_reply("k-unknown", None) is None
    assert tc.played() == 2  # the two plays of the reply; the rest were not plays


def test_a_cassette_that_may_be_saved_hands_out_copies() -> None:
    recording = _recording()
    tc = TrialCassette(Path("t.json"), "new", recording, [])
    body = tc.replay_reply("k-ok", None)
    assert body is not None
    body["choices"][0]["message"]["content"] = "changed by a reader"
    assert recording.exchanges[0].response.body == {"choices": [{"message": {"content": "hi"}}]}


def test_record_all_answers_nothing() -> None:
    tc = TrialCassette(Path("t.json"), "all", _recording(), [])
    assert not tc.may_replay()
    assert tc.replay_reply("k-ok", None) is None
    assert tc.kept_capabilities() is None


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
    with pytest.raises(error, match=why), use_cassette(path, "none"):
        pass


def test_a_repeat_play_of_an_opened_file_is_read_from_the_file_anew(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(rec.dump(_recording()), encoding="utf-8")
    with use_cassette(path, "none") as tc:
        first = tc.replay_reply("k-ok", None)
        assert first is not None
        first["choices"][0]["message"]["content"] = "changed by a reader"
        assert tc.replay_reply("k-ok", None) == {"choices": [{"message": {"content": "hi"}}]}


def test_a_replay_imports_no_vcrpy(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(rec.dump(_recording()), encoding="utf-8")
    for name in [m for m in sys.modules if m == "vcr" or m.startswith("vcr.")]:
        del sys.modules[name]
    with use_cassette(path, "none") as tc:
        assert tc.replay_reply("k-ok", None) is not None
    assert "vcr" not in sys.modules


def test_a_plain_exchange_recorded_then_replayed_through_http_sync_and_async(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One route for every request: a plain exchange recorded from a blocking client is
    answered offline, to a blocking and an async client alike, with the body it recorded
    (its secret redacted on disk, the request holding it matched as recorded)."""
    import asyncio

    import httpx

    from tests.support.fake_openai import FakeOpenAI
    from toolbench.cassettes import router

    secret = "sk-live-trial-route-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    path = tmp_path / "t.json"
    body = {"messages": [{"role": "user", "content": f"my key is {secret}"}]}
    with FakeOpenAI() as server:
        url = server.base_url + "/chat/completions"
        with router(), use_cassette(path, "new") as tc, httpx.Client() as client:
            live = client.post(url, json=body, headers={"Authorization": f"Bearer {secret}"})
            assert not tc.last_replayed and tc.last_fault is None
            tc.remember_key("sha256:k")
        asked = len(server.received)
        text = path.read_text(encoding="utf-8")
        assert secret not in text and "authorization" not in text.lower()
        (ex,) = rec.parse(text, "t.json").exchanges
        assert ex.key == "sha256:k" and ex.response.body == live.json()
        with router(), use_cassette(path, "none") as tc, httpx.Client() as client:
            again = client.post(url, json=body)
            assert tc.last_replayed and tc.played() == 1
            assert again.json() == live.json()

        async def go() -> dict[str, object]:
            with router(), use_cassette(path, "none") as tc:
                async with httpx.AsyncClient() as client:
                    got = await client.post(url, json=body)
                assert tc.last_replayed
                data: dict[str, object] = got.json()
                return data

        assert asyncio.run(go()) == live.json()
        assert len(server.received) == asked  # both replays offline
        with router(), use_cassette(path, "none") as tc, httpx.Client() as client:
            with pytest.raises(CassetteMissingError):
                client.post(url, json={"messages": []})
            assert tc.unmatched == ["POST /v1/chat/completions"]
