"""What a provider's batch API is to the batch phase: submit, ask, cancel, fetch.

One module per provider speaks its documented wire (:mod:`.openai_batch`,
:mod:`.anthropic_batch`), registered by LiteLLM's provider name in :mod:`.batch_apis`; the
phase (:mod:`.phase`) sees only :class:`BatchWire`. Between them the values are typed:
what is asked (:class:`Item`), where the batch stands (:class:`State`), and what became
of each request (:class:`Answered` or :class:`Failed`).
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


Outcome = Answered | Failed


class BatchRefused(Exception):
    """The provider refused the batch at creation (its file, the batch itself)."""


class BatchWire(Protocol):
    """One provider's batch API, at one base URL with the live requests' key headers."""

    async def submit(self, items: list[Item]) -> str:
        """Create the batch; its id. Raises :class:`BatchRefused`."""
        ...

    async def state(self, batch_id: str) -> State: ...

    async def cancel(self, batch_id: str) -> None: ...

    async def results(self, batch_id: str) -> dict[str, Outcome]:
        """What the batch answered (or failed) so far, by custom id."""
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


def refusal(response: httpx.Response, what: str) -> BatchRefused:
    """The provider's refusal of ``what`` as one redacted line."""
    return BatchRefused(f"{what}: HTTP {response.status_code}: {error_text(response.text)}")


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


def failed_status(status: int | None, message: str) -> Failed:
    """A request the batch answered with an error (``status``: its HTTP status, if any)."""
    said = f"HTTP {status}" if status else "an error"
    return Failed(codes.INFRA_BATCH_FAILED, f"the batch answered {said}: {message}")
