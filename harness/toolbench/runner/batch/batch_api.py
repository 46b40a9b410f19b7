"""What a provider's batch API is to the batch phase: submit, ask, cancel, results.

One module per provider speaks its documented wire (:mod:`.openai_batch`,
:mod:`.anthropic_batch`), registered by LiteLLM's provider name in :mod:`.batch_apis`;
the phase (:mod:`.phase`) and the one poll-then-fetch loop (:mod:`.batch_wait`) see only
:class:`BatchWire`. Between them the values are typed: what is asked (:class:`Item`),
where the batch stands (:class:`State`), and what became of each request
(:class:`Answered` or :class:`Failed`, with the fault as a live call would classify it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from toolbench import codes
from toolbench.redaction import redact


@dataclass(frozen=True)
class Item:
    """One request of the batch: its id in the batch, and what the kind would send."""

    custom_id: str
    path: str
    """The URL path the live request went to (``/v1/chat/completions``)."""
    body: Any


@dataclass(frozen=True)
class State:
    """Where a submitted batch stands."""

    status: str
    """The provider's own word (``in_progress``, ``completed``, ``ended``, ...)."""
    ended: bool
    """Nothing more will be answered (completed, expired, cancelled, failed)."""
    done: int
    total: int
    refused: str | None = None
    """Why the provider failed the whole batch (validation), None if it did not."""


@dataclass(frozen=True)
class Answered:
    """A request the batch answered: the reply body as the live endpoint returns it."""

    body: dict[str, Any]


@dataclass(frozen=True)
class Failed:
    """A request the batch did not answer: its typed code and why (redacted)."""

    code: str
    message: str
    cause: str | None = None
    """The same fault as a live call would classify it (:func:`live_code`: a 429 is
    ``infra.rate_limited``), where the provider said what it was: whether
    ``--resume --batch`` submits the request again (:mod:`.batch_retry`)."""


Outcome = Answered | Failed


class BatchRefused(Exception):
    """The provider refused the batch at creation (its file, the batch itself)."""

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        """The refusal as a live call would classify it (:attr:`Failed.cause`)."""


class BatchWire(Protocol):
    """One provider's batch API, at one base URL with the live requests' key headers."""

    headers: dict[str, str]
    """The key headers every call of the batch API carries (its result files' too)."""

    async def submit(self, items: list[Item]) -> str:
        """Create the batch; its id. Raises :class:`BatchRefused`."""
        ...

    async def state(self, batch_id: str) -> State: ...

    async def cancel(self, batch_id: str) -> None: ...

    async def result_files(self, batch_id: str) -> list[str]:
        """The URLs of the ended batch's JSONL result files, a later file's line for a
        request winning over an earlier one's."""
        ...

    def outcome(self, line: str) -> tuple[str, Outcome] | None:
        """One line of a result file: its custom id and what became of the request
        (None: not a line of a request)."""
        ...


MakeWire = Callable[[httpx.AsyncClient, str, Mapping[str, str]], BatchWire]
"""A wire for (client, the live request's URL, its headers)."""

KEY_HEADERS = frozenset({
    "authorization", "api-key", "x-api-key", "openai-organization", "openai-project",
    "anthropic-version", "anthropic-beta",
})  # fmt: skip
"""The live request's headers a batch request carries too (its key, its API version)."""


def key_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() in KEY_HEADERS}


async def get_object(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str]
) -> dict[str, Any]:
    """The JSON object at ``url`` (a batch), ``{}`` for any other JSON; raises
    :class:`httpx.HTTPStatusError` on an error status, ``ValueError`` on a body not JSON."""
    got = await client.get(url, headers=headers)
    got.raise_for_status()
    data = got.json()
    return data if isinstance(data, dict) else {}


def refusal(response: httpx.Response, what: str) -> BatchRefused:
    """The provider's refusal of ``what`` as one redacted line."""
    status = response.status_code
    text = f"{what}: HTTP {status}: {error_text(response.text)}"
    return BatchRefused(text, live_code(status))


def live_code(status: int | None) -> str:
    """The code a live call gives a fault of HTTP ``status`` (as
    :func:`~toolbench.providers.litellm_faults.classify` does by status): a 408, a 429
    and a 5xx are transient there (asked again), any other 4xx is not."""
    if status == 408:
        return codes.INFRA_TIMEOUT
    if status == 429:
        return codes.INFRA_RATE_LIMITED
    if status is not None and status >= 500:
        return codes.INFRA_SERVER_ERROR
    if status is not None and 400 <= status < 500:
        return codes.INFRA_CLIENT_ERROR
    return codes.INFRA_ERROR


def transport_code(exc: Exception) -> str | None:
    """The code a live call gives ``exc`` raised on the way to the batch API (None: not
    a fault of the provider's, e.g. an answer toolbench cannot read)."""
    if isinstance(exc, httpx.TimeoutException):
        return codes.INFRA_TIMEOUT
    if isinstance(exc, httpx.HTTPStatusError):
        return live_code(exc.response.status_code)
    if isinstance(exc, httpx.TransportError):
        return codes.INFRA_CONNECTION
    return exc.cause if isinstance(exc, BatchRefused) else None


def error_text(text: str) -> str:
    """An error body's message (OpenAI's and Anthropic's ``error.message``), redacted."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    message: Any = text
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("error"), dict):
            err = err["error"]  # Anthropic's result error wraps its error object
        if isinstance(err, dict) and err.get("message"):
            message = err["message"]
    return redact(str(message))[:500]


def failed_status(status: int | None, message: str, cause: str | None = None) -> Failed:
    """A request the batch answered with an error (``status``: its HTTP status, if any;
    ``cause``: the fault's live code where the wire knows it otherwise)."""
    said = f"HTTP {status}" if status else "an error"
    return Failed(codes.INFRA_BATCH_FAILED, f"the batch answered {said}: {message}",
                  cause or live_code(status))  # fmt: skip
