"""A cassette holds only the exchange that answered (issue 34, section 7).

A provider's error object sent with status 200, a reply the sender could not read, a
stream that carried an error event: none is recorded, so a retry, ``--record new`` and
``--record none`` never answer from it (they ask the server again, or report the request
missing). Driven through the CLI against the fake servers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.providers.cases import CASES, SCENARIOS
from tests.providers.servers.base import Request, Response
from tests.runner.conftest import GOOD_CALL, run_fake, trials_by_id
from toolbench.cassettes import reply_fault
from toolbench.cassettes.faults import error_object
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, Fault, SseScript, in_order
from toolbench.store import load_results

ANTHROPIC_OVERLOADED = {"type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"}}  # fmt: skip


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (ANTHROPIC_OVERLOADED, "overloaded_error: Overloaded"),
        ({"error": {"code": 502, "message": "upstream down"}}, "502: upstream down"),  # gateway
        ({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}},
         "UNAVAILABLE: busy"),  # Gemini
        ({"error": "model 'llama3' not found"}, "model 'llama3' not found"),  # Ollama
        ({"type": "error"}, "an error"),
        ({"error": None, "choices": [{"message": {"content": "hi"}}]}, None),
        ({"error": {"message": "x"}, "choices": [{"message": {"content": "hi"}}]}, None),
        ({"object": "response", "error": None, "output": [{"type": "message"}]}, None),
        ({"type": "message", "content": [{"type": "text", "text": "hi"}]}, None),
        ({"error": {}}, None),
    ],
)  # fmt: skip
def test_error_object_is_told_by_its_shape(body: dict[str, Any], said: str | None) -> None:
    assert error_object(body) == said
    fault = reply_fault(200, json.dumps(body).encode(), "/v1/messages")
    if said is not None:
        # Worded as a status fault: the sender's exception classifies it, as for a 5xx.
        assert fault == f"HTTP 200 carrying an error object ({said})"
    else:
        assert fault is None or "error object" not in fault


ANTHROPIC = {c.id: c for c in CASES}["anthropic"]
OSLO = "rt-weather-oslo.json"


@pytest.fixture
def anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-rt-dummy-7f3a9c2e41b86d05")


def _anthropic_run(base: str, tmp: Path, out: str, *extra: str) -> int:
    return run_cli([
        "run", "--models", ANTHROPIC.model, "--formats", "native",
        "--scenarios", str(SCENARIOS), "--api-base", base, "--out", str(tmp / out),
        "--cassettes", str(tmp / "cas"), "--quiet", "--no-report", *extra,
    ])  # fmt: skip


def _oslo_errors(times: int) -> tuple[Any, list[int]]:
    """An override that answers the Oslo conversation's first ``times`` requests with
    Anthropic's overloaded error object under status 200 (counted)."""
    seen = [0]

    def override(req: Request) -> Response | None:
        if "Oslo" not in json.dumps(req.body):
            return None
        seen[0] += 1
        return Response(200, ANTHROPIC_OVERLOADED) if seen[0] <= times else None

    return override, seen


def _cassettes(tmp: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (tmp / "cas").rglob("*.json")}


@pytest.mark.usefixtures("anthropic_key")
def test_an_error_object_under_200_is_never_recorded_nor_replayed(tmp_path: Path) -> None:
    """Every attempt answered with the error object: the trial is typed, nothing of it is
    written; ``--record none`` reports the request missing and ``--record new`` asks the
    server again (and records the answer it now gets)."""
    with ANTHROPIC.server() as srv:
        srv.override, seen = _oslo_errors(times=10**6)
        assert _anthropic_run(srv.base_url, tmp_path, "live") == 0
        oslo = trials_by_id(tmp_path / "live")["rt-weather-oslo"]
        assert (oslo.status, oslo.error_code) == ("infra_error", "infra.server_error")
        assert len(oslo.attempts) == 5 and seen[0] == 5  # every retry reached the server
        assert OSLO not in _cassettes(tmp_path)
        assert "rt-weather-lisbon.json" in _cassettes(tmp_path)
        asked = len(srv.received)
        assert _anthropic_run(srv.base_url, tmp_path, "replay", "--record", "none") == 0
        again = trials_by_id(tmp_path / "replay")["rt-weather-oslo"]
        assert (again.status, again.error_code) == ("cassette_missing", "cassette.missing")
        assert len(srv.received) == asked
        srv.override = None  # the provider recovered
        assert _anthropic_run(srv.base_url, tmp_path, "new", "--record", "new") == 0
        assert trials_by_id(tmp_path / "new")["rt-weather-oslo"].status == "ok"
        assert len(srv.received) > asked
    assert b"overloaded_error" not in _cassettes(tmp_path)[OSLO]


@pytest.mark.usefixtures("anthropic_key")
def test_a_trial_that_recovered_keeps_only_the_exchange_that_answered(tmp_path: Path) -> None:
    with ANTHROPIC.server() as srv:
        srv.override, seen = _oslo_errors(times=2)
        assert _anthropic_run(srv.base_url, tmp_path, "live") == 0
        assert seen[0] == 4  # two errors, then the two turns' answers
        live = trials_by_id(tmp_path / "live")["rt-weather-oslo"]
        assert live.status == "ok" and [a.outcome for a in live.attempts][:3] == [
            "retry",
            "retry",
            "ok",
        ]
        recorded = json.loads(_cassettes(tmp_path)[OSLO])["exchanges"]
        assert len(recorded) == 2  # the two turns' answers, no fault
        assert all(ex["response"]["body"].get("type") == "message" for ex in recorded)
        asked = len(srv.received)
        assert _anthropic_run(srv.base_url, tmp_path, "replay", "--record", "none") == 0
        assert len(srv.received) == asked
    replayed = trials_by_id(tmp_path / "replay")["rt-weather-oslo"]
    assert replayed.status == "ok" and replayed.scores == live.scores


@pytest.mark.usefixtures("anthropic_key")
def test_an_error_object_recorded_before_is_not_replayed(tmp_path: Path) -> None:
    """A cassette written by an older toolbench holding the error object as a reply: the
    exchange is never played (``--record none``: missing), ``--record new`` asks again
    and saves the cassette without it."""
    with ANTHROPIC.server() as srv:
        assert _anthropic_run(srv.base_url, tmp_path, "live") == 0
        path = next((tmp_path / "cas").rglob(OSLO))
        data = json.loads(path.read_text())
        data["exchanges"][0]["response"]["body"] = ANTHROPIC_OVERLOADED
        data["exchanges"][0].pop("read", None)
        path.write_text(json.dumps(data))
        asked = len(srv.received)
        assert _anthropic_run(srv.base_url, tmp_path, "none", "--record", "none") == 0
        oslo = trials_by_id(tmp_path / "none")["rt-weather-oslo"]
        assert oslo.status == "cassette_missing", oslo.infra_error
        assert len(srv.received) == asked
        assert _anthropic_run(srv.base_url, tmp_path, "new", "--record", "new") == 0
        assert trials_by_id(tmp_path / "new")["rt-weather-oslo"].status == "ok"
        assert len(srv.received) == asked + 1  # the first turn asked again, the second kept
    assert b"overloaded_error" not in path.read_bytes()


UNREADABLE: dict[
    str, dict[str, Any]
] = {  # 2xx bodies the recording rule lets through but the sender cannot read
    "tool_calls-not-a-list": {"role": "assistant", "content": None, "tool_calls": "oops"},
    "content-not-text": {"role": "assistant", "content": 5},
}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


def _chat(message: dict[str, Any]) -> Fault:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip
    return Fault(200, body=json.dumps(body).encode())


@pytest.mark.usefixtures("openai_key")
@pytest.mark.parametrize("case", list(UNREADABLE))
def test_a_reply_whose_attempt_failed_is_not_kept(
    server: FakeServer, tmp_path: Path, scenario_file: Path, case: str
) -> None:
    """The attempt failed on a reply the cassette had recorded: the retry asks the server (it
    was answered from the recording before), and the cassette keeps only the answer."""
    bad = _chat(UNREADABLE[case])
    server.respond = in_order({"Weather in Paris": [bad, GOOD_CALL]}, default="A joke.")
    assert run_fake(server, tmp_path, scenario_file) == 0
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert weather.status == "ok", weather.infra_error
    assert [a.outcome for a in weather.attempts] == ["retry", "ok"]
    cas = tmp_path / "cas" / "openai_fake" / "prompt-json" / "weather.json"
    (only,) = json.loads(cas.read_text())["exchanges"]
    assert only["response"]["body"]["choices"][0]["message"]["content"] == GOOD_CALL
    # Never answered: nothing of the trial is kept, and a replay says it is missing.
    server.respond = in_order({"Weather in Paris": [bad] * 5}, default="A joke.")
    assert run_fake(server, tmp_path, scenario_file, "--record", "all", out="all") == 0
    failed = trials_by_id(tmp_path / "all")["weather"]
    assert failed.status == "infra_error" and len(failed.attempts) == 5
    assert run_fake(server, tmp_path, scenario_file, "--record", "none", out="none") == 0
    assert trials_by_id(tmp_path / "none")["weather"].status == "ok"  # the old file kept


def _chunk(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


HELLO = _chunk({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "f",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"},
                             "finish_reason": None}]})  # fmt: skip
GATEWAY_ERROR = _chunk({"error": {"code": 502, "message": "upstream provider failed"}})


@pytest.mark.usefixtures("openai_key")
def test_a_stream_that_carried_an_error_event_is_never_recorded(
    server: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """A gateway's error chunk mid-stream (OpenRouter's shape): whatever the reader made
    of the stream, the cassette does not hold it."""
    broken = SseScript([HELLO, GATEWAY_ERROR, b"data: [DONE]\n\n"])
    server.respond = in_order({"Weather in Paris": [broken] * 5}, default="A joke.")
    run_fake(server, tmp_path, scenario_file, "--stream", "on")
    cas = tmp_path / "cas" / "openai_fake" / "prompt-json_stream"
    assert (cas / "chat.json").is_file()
    weather = cas / "weather.json"
    assert not weather.exists() or b"upstream provider failed" not in weather.read_bytes()
    asked = len(server.received)
    run_fake(server, tmp_path, scenario_file, "--stream", "on", "--record", "none", out="none")
    assert len(server.received) == asked
    again = {r.scenario_id: r for r in load_results(tmp_path / "none")}["weather"]
    assert again.status == "cassette_missing"


ANTHROPIC_ERROR_EVENT = b"event: error\n" + _chunk(ANTHROPIC_OVERLOADED)


@pytest.mark.parametrize(
    ("parts", "kept"),
    [
        ([HELLO, b"data: [DONE]\n\n"], True),
        ([HELLO, ANTHROPIC_ERROR_EVENT, b"data: [DONE]\n\n"], False),
        ([HELLO, GATEWAY_ERROR], False),
        ([_chunk({"error": "model 'llama3' not found"})], False),  # Ollama's line
    ],
    ids=["reply", "anthropic-error-event", "gateway-error-chunk", "ollama-error"],
)
def test_the_trial_cassette_commits_no_stream_that_carried_an_error(
    server: FakeServer, tmp_path: Path, parts: list[bytes], kept: bool
) -> None:
    """At the layer, for a reader that would take the stream as read (the commit is its
    verdict that the reply is whole): a stream holding a provider's error event is still
    not written."""
    import asyncio

    import httpx

    from toolbench.cassettes import router, use_cassette

    server.respond = lambda body: SseScript(list(parts))
    cas = tmp_path / "s.json"

    async def go() -> None:
        with router(), use_cassette(cas, "new", streamed=True) as tc:
            async with httpx.AsyncClient() as client:
                r = await client.post(server.base_url + "/chat/completions",
                                      json={"stream": True, "messages": []})  # fmt: skip
                await r.aread()
            tc.commit()

    asyncio.run(go())
    assert cas.is_file() is kept
