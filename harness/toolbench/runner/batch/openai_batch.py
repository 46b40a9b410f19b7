"""OpenAI's Batch API, over httpx, as documented
(https://platform.openai.com/docs/guides/batch, api-reference/batch and files).

The requests go up as one JSONL file (``POST /v1/files``, ``purpose=batch``; a line per
request: ``custom_id``, ``method``, ``url``, ``body``), the batch is created on it
(``POST /v1/batches``: ``input_file_id``, ``endpoint``, ``completion_window: 24h``) and
asked after (``GET /v1/batches/{id}``: ``status``, ``request_counts``); its
``output_file_id`` and ``error_file_id`` (``GET /v1/files/{id}/content``) hold a line
per request: ``custom_id``, ``response: {status_code, body}``, ``error``. A batch that
expired or was cancelled keeps in its output what it answered before.

Over httpx rather than LiteLLM's ``acreate_file`` / ``acreate_batch``: those hand back
the SDK's objects and retry on their own, and the phase needs one timeout, one progress
line and the raw lines to record as the live endpoint's replies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from toolbench.runner.batch.batch_api import (
    Answered,
    BatchRefused,
    Item,
    Outcome,
    State,
    error_text,
    failed_status,
    get_object,
    key_headers,
    refusal,
)

ENDPOINTS = ("/chat/completions", "/responses")
"""The live endpoints (after the base URL) a batch line may name."""
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})


def base_of(url: str) -> tuple[str, str]:
    """The base URL of a live request's URL and the endpoint after it."""
    for endpoint in ENDPOINTS:
        if url.endswith(endpoint):
            return url[: -len(endpoint)], endpoint
    raise BatchRefused(f"{url}: not an endpoint OpenAI's batch takes")


class OpenAIBatch:
    """OpenAI's Batch API (and any server speaking it) at the live requests' base URL."""

    def __init__(self, client: httpx.AsyncClient, url: str, headers: Mapping[str, str]) -> None:
        self.client = client
        self.base, self.endpoint = base_of(url)
        self.headers = key_headers(headers)

    async def submit(self, items: list[Item]) -> str:
        url = f"/v1{self.endpoint}"
        line = {"method": "POST", "url": url}
        lines = "".join(
            json.dumps({"custom_id": i.custom_id, **line, "body": i.body}) + "\n" for i in items
        )
        uploaded = await self.client.post(
            f"{self.base}/files", headers=self.headers, data={"purpose": "batch"},
            files={"file": ("toolbench-batch.jsonl", lines.encode(), "application/jsonl")},
        )  # fmt: skip
        if not uploaded.is_success:
            raise refusal(uploaded, "the batch's input file")
        file_id = _field(uploaded, "id")
        created = await self.client.post(
            f"{self.base}/batches", headers=self.headers,
            json={"input_file_id": file_id, "endpoint": f"/v1{self.endpoint}",
                  "completion_window": "24h"},
        )  # fmt: skip
        if not created.is_success:
            raise refusal(created, "the batch")
        return _field(created, "id")

    async def _get(self, batch_id: str) -> dict[str, Any]:
        return await get_object(self.client, f"{self.base}/batches/{batch_id}", self.headers)

    async def state(self, batch_id: str) -> State:
        data = await self._get(batch_id)
        status = str(data.get("status"))
        counts = data.get("request_counts") or {}
        done = int(counts.get("completed") or 0) + int(counts.get("failed") or 0)
        refused = None
        if status == "failed":
            errors = (data.get("errors") or {}).get("data") or []
            why = "; ".join(str(e.get("message")) for e in errors if isinstance(e, dict))
            refused = error_text(json.dumps({"error": {"message": why or "failed"}}))
        return State(status, status in ENDED, done, int(counts.get("total") or 0), refused)

    async def cancel(self, batch_id: str) -> None:
        await self.client.post(f"{self.base}/batches/{batch_id}/cancel", headers=self.headers)

    async def result_files(self, batch_id: str) -> list[str]:
        data = await self._get(batch_id)
        return [f"{self.base}/files/{data[key]}/content"  # an answer wins over an error
                for key in ("error_file_id", "output_file_id") if data.get(key)]  # fmt: skip

    def outcome(self, line: str) -> tuple[str, Outcome] | None:
        return _line(line)


def _field(response: httpx.Response, name: str) -> str:
    try:
        value = response.json().get(name)
    except (ValueError, AttributeError):
        value = None
    if not isinstance(value, str) or not value:
        raise BatchRefused(f"{response.request.url.path}: the answer has no {name}")
    return value


def _line(text: str) -> tuple[str, Outcome] | None:
    """One line of an output or error file: its custom id and what became of it."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
        return None
    cid, response, error = data["custom_id"], data.get("response"), data.get("error")
    if isinstance(response, dict):
        status, body = response.get("status_code"), response.get("body")
        if status == 200 and isinstance(body, dict):
            return cid, Answered(body)
        if isinstance(status, int):
            return cid, failed_status(status, error_text(json.dumps(body)))
    message = error.get("message") if isinstance(error, dict) else None
    return cid, failed_status(None, error_text(json.dumps({"error": {"message": message}})))
