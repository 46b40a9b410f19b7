"""Replay at the provider boundary: what a cassette needs to answer a request before any
HTTP is made, plain or streamed.

A plain exchange is found by toolbench's own key of the request (:func:`request_key`,
recorded on each exchange) or, in a cassette without keys, by the HTTP request the OpenAI
SDK would send (:func:`wire_request`, matched as the HTTP matcher matches); a streamed one
by that predicted request, and its recorded chunks are read through the same event guard
as on the wire. The run's mode (:data:`ReplayMode`, ``--replay``, carried by each trial's
cassette) says whether the boundary answers at all: ``full`` sends every replayed request
through LiteLLM and the HTTP cassette instead, re-deriving each reply from the recorded
bytes (for checking a LiteLLM upgrade); both modes give the same results
(``tests/runner/test_replay_modes.py``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpx

from toolbench.cassettes.match import echo_equivalent
from toolbench.redaction import json_may_hold, redact_data, secret_values
from toolbench.run_modes import REPLAY_MODES as REPLAY_MODES
from toolbench.run_modes import ReplayMode as ReplayMode


@lru_cache(maxsize=256)
def url_path(uri: str) -> str:
    """The path of ``uri`` as httpx reads it (what ``request.url.path`` says on the
    wire), remembered: parsing a URL is not free in httpx, and a replayed stream asked for
    the path of its request and of each recorded one, the same few URIs all run long."""
    return httpx.URL(uri).path


def request_key(request: dict[str, Any]) -> str:
    """toolbench's own key of a request: a hash of the LiteLLM arguments as data (model,
    messages, tools, sampling parameters; key order ignored). Recorded with each
    exchange, it lets a replay find the exchange without predicting the provider's
    HTTP request. The address is not in it: the cassette's path already names the
    model, and the embedded server's port changes every run.

    Computed on the request as its cassette records it, redacted: a request that holds
    a secret (a key in ``--model-param``'s ``extra_body``; a key a server echoed into a
    reply that the next turn sends back, redacted when that reply is replayed) has the
    same key at record and replay time, plain or streamed, whatever the secret's value
    then. A request that holds none (the screen finds no form of one: one substring
    search a form) is hashed as it is."""
    canon = _canon(request)
    values = secret_values()
    if values and json_may_hold(canon, values):
        canon = _canon(redact_data(request, values))
    return "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _canon(request: dict[str, Any]) -> str:
    return json.dumps(echo_equivalent(request), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, default=str)  # fmt: skip


@dataclass(frozen=True)
class WireRequest:
    """The HTTP request a provider SDK is predicted to send."""

    method: str
    uri: str
    body: dict[str, Any]


WIRE_PROVIDERS = frozenset({"openai"})
"""Providers whose HTTP request is predicted: LiteLLM hands an OpenAI chat completion
request to the OpenAI SDK unchanged but for the model name. A prediction that is wrong
matches nothing and takes the full path."""
OPENAI_BASE = "https://api.openai.com/v1"


def wire_request(
    name: str, provider: str, api_base: str | None, request: dict[str, Any]
) -> WireRequest | None:
    """The HTTP request the OpenAI SDK sends for ``request`` (LiteLLM's arguments) to
    ``provider``'s model ``name``, or None for a provider whose request LiteLLM
    transforms (Anthropic, Gemini, ...)."""
    if provider not in WIRE_PROVIDERS:
        return None
    base = (api_base or OPENAI_BASE).rstrip("/")
    return WireRequest("POST", f"{base}/chat/completions", {**request, "model": name})
