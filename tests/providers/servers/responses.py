"""A fake of OpenAI's Responses API (``POST /v1/responses``, plain and streamed).

Shapes from the OpenAI API reference (https://platform.openai.com/docs/api-reference/
responses/create, .../responses/object, .../responses-streaming) and the function calling
guide (https://platform.openai.com/docs/guides/function-calling: "pass back the
``function_call`` items ... and ``function_call_output`` with the matching ``call_id``";
reasoning models: "pass back the reasoning items", with ``encrypted_content`` when
``include: ["reasoning.encrypted_content"]``); LiteLLM 1.106.2 passes both through
(``llms/openai/responses/transformation.py``, its tests
``tests/test_litellm/llms/openai/responses/``).

The fake refuses what the API refuses: an unknown top-level parameter (``messages``,
``seed``, ``stop``, ``stream_options``: 400 ``Unknown parameter``), a nested chat tool
(``tools[0].name`` missing), a ``function_call_output`` whose ``call_id`` no
``function_call`` item of the input carries, and a ``function_call`` item echoed without
the ``reasoning`` item that preceded it in the model's output (as the API does for
reasoning models: "Item 'fc_...' of type 'function_call' was provided without its
required 'reasoning' item")."""

from __future__ import annotations

import json
from typing import Any

from tests.providers.servers.base import Request, Response, error

TOP_LEVEL = frozenset({
    "model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "temperature", "top_p", "max_output_tokens", "reasoning", "stream", "store", "include",
    "text", "truncation", "metadata", "previous_response_id", "user", "service_tier",
})  # fmt: skip
"""The request body's parameters (the API reference's "Request body")."""

Body = dict[str, Any]


def response(output: list[Body], status: str = "completed", **extra: Any) -> Body:
    """A ``response`` object (the API reference's "The response object")."""
    return {
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b", "object": "response",
        "created_at": 1741476542, "status": status, "error": None,
        "incomplete_details": None, "instructions": None, "max_output_tokens": None,
        "model": "gpt-5-mini-2025-08-07", "output": output, "parallel_tool_calls": True,
        "previous_response_id": None, "reasoning": {"effort": "low", "summary": None},
        "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}},
        "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
        "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4},
                  "total_tokens": 29},
        "user": None, "metadata": {}, **extra,
    }  # fmt: skip


def events(resp: Body, argument_pieces: int = 2) -> list[Body]:
    """The stream of ``resp`` as the API sends it: ``response.created``, per output item
    ``response.output_item.added``, its deltas (``response.output_text.delta``,
    ``response.function_call_arguments.delta``) and ``response.output_item.done``, then
    ``response.completed`` with the whole response."""
    out: list[Body] = [{"type": "response.created",
                        "response": {**resp, "status": "in_progress", "output": []}}]  # fmt: skip
    for i, item in enumerate(resp["output"]):
        kind = item["type"]
        if kind == "function_call":
            out.append({"type": "response.output_item.added", "output_index": i,
                        "item": {**item, "arguments": "", "status": "in_progress"}})  # fmt: skip
            args = item["arguments"]
            cut = max(1, len(args) // argument_pieces)
            for start in range(0, len(args), cut):
                out.append({"type": "response.function_call_arguments.delta", "output_index": i,
                            "item_id": item["id"], "delta": args[start:start + cut]})  # fmt: skip
            out.append({"type": "response.function_call_arguments.done", "output_index": i,
                        "item_id": item["id"], "arguments": args})  # fmt: skip
        elif kind == "message":
            out.append({"type": "response.output_item.added", "output_index": i,
                        "item": {**item, "content": [], "status": "in_progress"}})  # fmt: skip
            text = item["content"][0]["text"]
            for piece in (text[:6], text[6:]):
                out.append({"type": "response.output_text.delta", "output_index": i,
                            "item_id": item["id"], "content_index": 0, "delta": piece})  # fmt: skip
        else:
            out.append({"type": "response.output_item.added", "output_index": i, "item": item})
        out.append({"type": "response.output_item.done", "output_index": i, "item": item})
    out.append({"type": "response.completed", "response": resp})
    return [{**e, "sequence_number": n} for n, e in enumerate(out)]


def sse(evs: list[Body]) -> bytes:
    """Server-sent events as the API frames them (``event: <type>`` then ``data:``)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in evs).encode()


def refused(body: Any) -> Response | None:
    """The 400 the API answers to a request it refuses (None: it takes it)."""
    if not isinstance(body, dict):
        return error(400, "We could not parse the JSON body of your request.")
    for key in body:
        if key not in TOP_LEVEL:
            return error(400, f"Unknown parameter: '{key}'.")
    for n, tool in enumerate(body.get("tools") or []):
        if tool.get("type") == "function" and not isinstance(tool.get("name"), str):
            return error(400, f"Missing required parameter: 'tools[{n}].name'.")
    items = body.get("input")
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    reasoning_before = False
    for n, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "reasoning":
            reasoning_before = True
        elif kind == "function_call":
            if item.get("id", "").startswith("fc_") and not reasoning_before:
                return error(400, f"Item '{item['id']}' of type 'function_call' was provided "
                                  "without its required 'reasoning' item.")  # fmt: skip
            calls.add(item.get("call_id"))
        elif kind == "function_call_output" and item.get("call_id") not in calls:
            return error(400, f"No tool call found for function call output with call_id "
                              f"{item.get('call_id')} (input[{n}]).")  # fmt: skip
    return None


class ResponsesAPI:
    """Answers turn 1 with ``first`` and any request holding a ``function_call_output``
    with ``second`` (plain, or streamed when the request asks), after :func:`refused`."""

    def __init__(self, first: Body, second: Body) -> None:
        self.first, self.second = first, second

    def __call__(self, req: Request) -> Response:
        if req.path.rstrip("/") not in ("/responses", "/v1/responses"):
            return error(404, f"no route {req.path}")
        bad = refused(req.body)
        if bad is not None:
            return bad
        later = any(isinstance(i, dict) and i.get("type") == "function_call_output"
                    for i in req.body.get("input") or [])  # fmt: skip
        resp = self.second if later else self.first
        if req.body.get("stream"):
            return Response(200, sse(events(resp)), {"content-type": "text/event-stream"})
        return Response(200, resp)
