"""What a live plain exchange is written as: only a complete reply or a 4xx refusal
(:func:`~.faults.recordable`), its request and response scrubbed (:mod:`.scrub`: secret
headers dropped, secrets redacted in every form, this machine's hosts and model paths as
placeholders), a JSON body kept as decoded data, headers one text a name."""

from __future__ import annotations

import json
from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench.cassettes.faults import recordable
from toolbench.cassettes.scrub import RequestParts, scrub_request, scrub_response


def json_text(text: Any) -> tuple[bool, Any]:
    """``(True, data)`` when ``text`` is a JSON object or array, else ``(False, None)``."""
    if not isinstance(text, str) or text.strip()[:1] not in ("{", "["):
        return False, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def _text(body: Any) -> str:
    return body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")


def _one_text(headers: dict[str, Any]) -> dict[str, str]:
    return {
        k: ", ".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in headers.items()
    }


def recorded_plain(
    request: httpx.Request, sent: bytes, response: httpx.Response, content: bytes, values: list[str]
) -> rec.RecordedExchange | None:
    """The exchange of ``request`` (whose body was ``sent``) and ``response`` (whose raw
    body was ``content``) as its cassette keeps it; None when it is not recorded (a
    transient fault, a 2xx that is no complete reply)."""
    headers: dict[str, list[str]] = {}
    for name, value in response.headers.multi_items():
        headers.setdefault(name, []).append(value)
    served: dict[str, Any] = {
        "status": {"code": response.status_code, "message": response.reason_phrase},
        "headers": headers,
        "body": {"string": content},
    }
    if not recordable(served, request.url.path):
        return None
    scrubbed = scrub_response(served, values)
    if scrubbed is None:
        return None
    parts = RequestParts(request.method, str(request.url), sent, dict(request.headers.items()))
    req = scrub_request(parts, values)
    is_json, body = json_text(_text(req.body) if req.body is not None else None)
    string = _text(scrubbed["body"]["string"])
    reply_json, reply = json_text(string)
    return rec.RecordedExchange(
        request=rec.RecordedRequest(
            method=request.method,
            uri=req.uri,
            body=body if is_json else (None if req.body is None else _text(req.body)),
            headers=_one_text(req.headers),
        ),
        response=rec.RecordedResponse(
            status=response.status_code,
            reason=scrubbed["status"].get("message"),
            headers=_one_text(scrubbed.get("headers", {})),
            body=reply if reply_json else None,
            text=None if reply_json else string,
        ),
    )
