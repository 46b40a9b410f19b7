"""Gemini API ``generateContent`` (``POST {base}/models/{model}:generateContent``).

Shapes: Gemini API reference, "Generating content"
(https://ai.google.dev/api/generate-content) and "Function calling"
(https://ai.google.dev/gemini-api/docs/function-calling): the ``x-goog-api-key`` header;
``contents[]`` of ``{"role": "user" | "model", "parts": [...]}`` with ``text``,
``functionCall {name, args}`` and ``functionResponse {name, response}`` parts;
``systemInstruction``; ``tools[].functionDeclarations``; ``generationConfig
.stopSequences``; a reply ``{"candidates": [{"content": {"role": "model", "parts":
[...]}, "finishReason": "STOP", "index": 0}], "usageMetadata": {...}, "modelVersion"}``,
as LiteLLM's own tests mock it (BerriAI/litellm
tests/test_litellm/llms/vertex_ai/gemini/test_vertex_and_google_ai_studio_gemini.py;
test_thought_signature_in_tool_call_id.py for the signature LiteLLM carries in the call
id, ``call_<id>__thought__<signature>``).

Thought signatures ("Thought signatures", https://ai.google.dev/gemini-api/docs/thought-signatures):
a ``functionCall`` part comes with an opaque ``thoughtSignature``; a later request whose
history holds that call without its signature is refused with HTTP 400, as Gemini 3
models refuse it ("Function call is missing a thought_signature in functionCall
parts"). This fake applies the rule to every model name, so a client that drops the
signature fails its second turn here. For ``gemini-3*`` models a call also has an ``id``
("the client ... return[s] the response with the matching id", FunctionCall in the API
reference): a ``functionResponse`` without it is refused.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from tests.providers.servers.base import FakeServer, Request, Response
from tests.providers.servers.brain import Answer, Call, Turn, as_text, cut_at_stop, decide, style_in


def _error(status: int, message: str, kind: str = "INVALID_ARGUMENT") -> Response:
    return Response(status, {"error": {"code": status, "message": message, "status": kind}})


def signature(call: dict[str, Any]) -> str:
    """The opaque signature this fake gives a call (a function of the call, so a replayed
    or concurrent trial gets the same one)."""
    raw = f"fake-thought:{call.get('name')}:{json.dumps(call.get('args'), sort_keys=True)}"
    return base64.b64encode(raw.encode()).decode()


def _field(part: dict[str, Any], camel: str) -> Any:
    """A part's field by its proto3 JSON name (``functionCall``) or its proto field name
    (``function_call``): the API accepts both, and LiteLLM sends the latter."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return part.get(camel, part.get(snake))


def _parts_text(parts: list[dict[str, Any]]) -> str:
    out = []
    for p in parts:
        if "text" in p:
            out.append(str(p["text"]))
        elif _field(p, "functionResponse") is not None:
            out.append(json.dumps(_field(p, "functionResponse").get("response")))
    return "".join(out)


def check(body: dict[str, Any]) -> Response | None:
    """The request Gemini would refuse, or None."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return _error(400, "* GenerateContentRequest.contents: contents is not specified")
    call_ids: set[str] = set()
    for i, c in enumerate(contents):
        if c.get("role") not in ("user", "model", "function"):
            return _error(400, f"Please use a valid role: user, model. (contents[{i}])")
        for j, p in enumerate(c.get("parts") or []):
            answer = _field(p, "functionResponse")
            if answer is not None and call_ids and answer.get("id") not in call_ids:
                return _error(400, f"contents[{i}].parts[{j}].function_response.id: "
                              f"{answer.get('id')!r} matches no function call")  # fmt: skip
            call = _field(p, "functionCall")
            if call is not None and call.get("id"):
                call_ids.add(str(call["id"]))
            if call is not None and _field(p, "thoughtSignature") != signature(call):
                return _error(400, (
                    "Function call is missing a thought_signature in functionCall parts. "
                    "This is required for tools to work correctly, and missing "
                    "thought_signature may lead to degraded model performance. Additional "
                    f"data, function call `default_api:{call.get('name')}` , position {j + 1}. "
                    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                    "for more details."
                ))  # fmt: skip
    return None


def turns_of(body: dict[str, Any]) -> list[Turn]:
    system = body.get("systemInstruction") or body.get("system_instruction")
    turns: list[Turn] = []
    if isinstance(system, dict):
        turns.append(("system", _parts_text(system.get("parts") or [])))
    for c in body.get("contents", []):
        parts = c.get("parts") or []
        if any(_field(p, "functionResponse") is not None for p in parts):
            turns.append(("tool", _parts_text(parts)))
        else:
            turns.append(("assistant" if c.get("role") == "model" else "user", _parts_text(parts)))
    return turns


ROUTE = re.compile(r"/models/(?P<model>[^/:]+):generateContent$")


def handle(req: Request) -> Response:
    m = ROUTE.search(req.path)
    if m is None:
        return _error(404, f"no route {req.path}", "NOT_FOUND")
    if not (req.headers.get("x-goog-api-key") or req.query.get("key")):
        return _error(403, "Method doesn't allow unregistered callers.", "PERMISSION_DENIED")
    body = req.body
    if not isinstance(body, dict):
        return _error(400, "Invalid JSON payload received.")
    refused = check(body)
    if refused is not None:
        return refused
    turns = turns_of(body)
    style = style_in(turns)
    action = decide(turns)
    declared = any(t.get("functionDeclarations") or t.get("function_declarations")
                   for t in body.get("tools") or [])  # fmt: skip
    if declared and style is None and isinstance(action, Call):
        call: dict[str, Any] = {"name": action.name, "args": action.arguments}
        if "gemini-3" in m.group("model"):
            # Newer models name each call; the id must come back on its functionResponse.
            call["id"] = f"fc-{action.arguments.get('city', 'x').lower()}-0"
        parts: list[dict[str, Any]] = [{"functionCall": call, "thoughtSignature": signature(call)}]
    else:
        if isinstance(action, Call) and style is None:
            action = Answer("I cannot call tools here.")
        stop = (body.get("generationConfig") or {}).get("stopSequences")
        text, _hit = cut_at_stop(as_text(action, style or "prompt-json"), stop)
        parts = [{"text": text}]
    return Response(200, {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 8,
                          "totalTokenCount": 28},
        "modelVersion": m.group("model"), "responseId": "fake-response",
    })  # fmt: skip


def server(variant: str = "gemini", port: int = 0) -> FakeServer:
    return FakeServer(handle, port, "/v1beta")
