"""A plain reply is a stream of one event: the chat reader that assembles a stream's
deltas reads a whole chat completion too (:func:`toolbench.providers.reply.whole`), into
the reply every committed plain body was read into by the plain reader it replaced
(``read_reply``, compared body by body before it was deleted; one reader, not two).

Table-driven over every recorded plain body of the committed cassettes (``cassettes/``
and ``tests/data``), each read three ways (a server of toolbench's own, another
provider's JSON, and with the ids LiteLLM makes up replaced), and over the same bodies
as LiteLLM's ``ModelResponse`` objects (its generic OpenAI conversion); the expected
replies are committed digests (``tests/data/whole_replies.json``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.providers.litellm_api import _model_response, litellm
from toolbench.providers.model_api import Fault
from toolbench.providers.replay import kept_event
from toolbench.providers.reply import reply_of, whole

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO / "tests/data/whole_replies.json"
MODES = {"own": (False, True), "plain": (False, False), "stable": (True, False)}
"""How a body is read: ``(stable, own_server)``."""


def bodies() -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, body)`` of every recorded plain chat completion committed."""
    for root in ("cassettes", "tests/data"):
        for path in sorted((REPO / root).rglob("*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if not isinstance(data, dict) or data.get("kind") != "toolbench-cassette":
                continue
            for i, ex in enumerate(data.get("exchanges") or []):
                body = (ex.get("response") or {}).get("body")
                if isinstance(body, dict) and isinstance(body.get("choices"), list):
                    yield f"{path.relative_to(REPO)}#{i}", body


def body_key(body: dict[str, Any]) -> str:
    """A body's digest (the same body recorded twice is one row)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def digest(replies: list[Any]) -> str:
    """The replies a body was read into, every mode in turn (their JSON, keys in order)."""
    text = json.dumps([r.model_dump(mode="json") for r in replies], sort_keys=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _copy(body: dict[str, Any]) -> dict[str, Any]:
    """A fresh copy (reading with stable ids rewrites the calls' ids in place)."""
    copied: dict[str, Any] = json.loads(json.dumps(body))
    return copied


def _read(body: dict[str, Any], lm: ModuleType | None = None) -> list[ModelReply]:
    """The body read in every mode, as JSON (or, given LiteLLM, as its object)."""
    return [
        reply_of(whole(_copy(body) if lm is None else _model_response(_copy(body), lm)), s, o)
        for s, o in MODES.values()
    ]


def test_every_committed_plain_body_reads_into_the_reply_it_read_into_before() -> None:
    expected: dict[str, list[str]] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    lm = litellm()
    checked = 0
    for where, body in bodies():
        row = expected.get(body_key(body))
        if row is None:  # recorded after the expectations were written
            continue
        assert [digest(_read(body)), digest(_read(body, lm))] == row, where
        checked += 1
    assert checked >= 1792  # every body committed when the expectations were written


@pytest.mark.parametrize(
    "resp",
    [
        {},
        {"choices": []},
        {"choices": [{"delta": {"content": "x"}}]},  # a stream's chunk, not a whole reply
        {"choices": [{"message": None}]},
    ],
)
def test_a_completion_without_a_message_is_a_bad_reply(resp: dict[str, Any]) -> None:
    with pytest.raises(Fault) as got:
        whole(resp)
    assert got.value.code == codes.INFRA_BAD_REPLY


def kept_replies() -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, reply)`` of every reply a committed cassette kept as read."""
    for path in sorted((REPO / "tests/data").rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        if '"read":' not in text:
            continue
        for i, ex in enumerate(json.loads(text).get("exchanges") or []):
            read = ex.get("read")
            if isinstance(read, dict):
                yield f"{path.relative_to(REPO)}#{i}", read["reply"]


def test_a_kept_reply_reads_by_the_one_reader_into_itself() -> None:
    """The reply a recording kept is the one event of its reply (its message as sent),
    read like any other into the very reply kept."""
    n = 0
    for where, kept in kept_replies():
        got = reply_of(whole(kept_event(kept)))
        assert got == ModelReply.model_validate(kept), where
        assert json.dumps(got.raw_message) == json.dumps(kept["raw_message"]), where
        n += 1
    assert n >= 200
