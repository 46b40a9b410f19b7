"""Anthropic's Message Batches, over httpx, as documented
(https://docs.anthropic.com/en/api/creating-message-batches, retrieving, results).

The requests go in the create call itself (``POST /v1/messages/batches``:
``requests: [{custom_id, params}]``, ``params`` the Messages API body), the batch is
asked after (``GET /v1/messages/batches/{id}``: ``processing_status`` ``in_progress`` |
``canceling`` | ``ended``, ``request_counts``, ``results_url``) and its results are a
JSONL file at ``results_url``: a line per request, ``custom_id`` and ``result`` of type
``succeeded`` (its ``message`` is what ``POST /v1/messages`` returns), ``errored``,
``canceled`` or ``expired``. Over httpx for the reasons :mod:`.openai_batch` gives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from toolbench import codes
from toolbench.runner.batch.batch_api import (
    Answered,
    BatchRefused,
    Failed,
    Item,
    Outcome,
    State,
    error_text,
    failed_status,
    get_object,
    key_headers,
    live_code,
    refusal,
)

ENDPOINT = "/messages"
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
    "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
    "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}  # fmt: skip
"""Anthropic's error types by the HTTP status the live API answers them with
(https://docs.anthropic.com/en/api/errors): an errored batch request carries the type only."""


class AnthropicBatch:
    """Anthropic's Message Batches at the live requests' base URL."""

    def __init__(self, client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> None:
        if not url.endswith(ENDPOINT):
            raise BatchRefused(f"{url}: not an endpoint Anthropic's batches take")
        self.client = client
        self.base = url[: -len(ENDPOINT)]
        self.headers = key_headers(headers)

    async def submit(self, items: list[Item]) -> str:
        requests = [{"custom_id": i.custom_id, "params": i.body} for i in items]
        created = await self.client.post(f"{self.base}/messages/batches", headers=self.headers,
                                         json={"requests": requests})  # fmt: skip
        if not created.is_success:
            raise refusal(created, "the batch")
        try:
            batch_id = created.json().get("id")
        except (ValueError, AttributeError):
            batch_id = None
        if not isinstance(batch_id, str) or not batch_id:
            raise BatchRefused("the batch: the answer has no id")
        return batch_id

    async def _get(self, batch_id: str) -> dict[str, Any]:
        url = f"{self.base}/messages/batches/{batch_id}"
        return await get_object(self.client, url, self.headers)

    async def state(self, batch_id: str) -> State:
        data = await self._get(batch_id)
        status = str(data.get("processing_status"))
        counts = data.get("request_counts") or {}
        done = sum(int(counts.get(k) or 0) for k in ("succeeded", "errored", "canceled", "expired"))
        total = done + int(counts.get("processing") or 0)
        return State(status, status == "ended", done, total)

    async def cancel(self, batch_id: str) -> None:
        await self.client.post(f"{self.base}/messages/batches/{batch_id}/cancel",
                               headers=self.headers)  # fmt: skip

    async def result_files(self, batch_id: str) -> list[str]:
        url = (await self._get(batch_id)).get("results_url")
        return [url] if isinstance(url, str) and url else []

    def outcome(self, line: str) -> tuple[str, Outcome] | None:
        return _line(line)


def _line(text: str) -> tuple[str, Outcome] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
        return None
    result = data.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded" and isinstance(result, dict) and isinstance(result.get("message"), dict):
        return data["custom_id"], Answered(result["message"])
    if kind in ("expired", "canceled"):
        return data["custom_id"], Failed(
            codes.INFRA_BATCH_EXPIRED, f"the batch {kind} the request before answering it"
        )
    error = result.get("error") if isinstance(result, dict) else None
    text = error_text(json.dumps({"error": error}))
    return data["custom_id"], failed_status(None, text, live_code(_status_of(error)))


def _status_of(error: Any) -> int | None:
    """The HTTP status of an errored request's error type (the body of
    ``{"type": "error", "error": {"type": ...}}``), as the live Messages API gives it."""
    inner = error.get("error") if isinstance(error, dict) else None
    kind = inner.get("type") if isinstance(inner, dict) else None
    return ERROR_STATUS.get(kind) if isinstance(kind, str) else None
