"""Scrubbing what is recorded: secrets out of requests and responses, local hosts as
placeholders, transient faults not recorded at all."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from toolbench.cassettes.hosts import normalise_local_body, placeholder
from toolbench.redaction import (
    is_secret_header,
    json_may_hold,
    redact,
    redact_data,
    redact_error,
    redact_error_strings,
    redact_uri,
    secret_values,
)


class HttpRequest(Protocol):
    """A request as scrubbing reads and rewrites it: its address, headers and body."""

    uri: str
    headers: Any
    body: Any


@dataclass
class RequestParts:
    """A live request's parts, as its cassette records them once scrubbed."""

    method: str
    uri: str
    body: bytes | str | None
    headers: dict[str, Any] = field(default_factory=dict)


def scrub_headers(headers: dict[str, Any], values: list[str]) -> None:
    """Drop secret-bearing headers by name; redact values and shapes in every other one."""
    for name in list(headers):
        if is_secret_header(name):
            del headers[name]
            continue
        value = headers[name]
        if isinstance(value, str):
            headers[name] = redact_error(value, values)
        elif isinstance(value, list):
            headers[name] = [redact_error(v, values) if isinstance(v, str) else v for v in value]


def _scrub_body(body: Any, values: list[str], shapes: bool = False) -> Any:
    """A body with every secret removed from what will be written: a JSON body's decoded
    strings (the serializer writes them decoded, so an escaped ``\\u0073k-...`` would
    reach the file in clear), else its text."""
    if not body:
        return body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    scrubbed = _scrub_json(text, values)
    if shapes:
        scrubbed = redact_error(_scrub_json_shapes(scrubbed), values)
    else:
        scrubbed = redact(scrubbed, values)
    if scrubbed == text:
        return body
    return scrubbed.encode("utf-8") if isinstance(body, bytes) else scrubbed


def _scrub_json(text: str, values: list[str]) -> str:
    """``text`` re-encoded with its decoded secrets redacted, when it is JSON that holds
    one; else ``text`` as it is (the same bytes: nothing to change)."""
    if "\\" not in text or text.lstrip()[:1] not in ("{", "["):
        return text  # no escape: the search of the text itself sees every string
    if not json_may_hold(text, values):
        return text  # short escapes only, and no secret spelled with them: none decoded
    try:
        data = json.loads(text)
    except ValueError:
        return text
    scrubbed = redact_data(data, values)
    return text if scrubbed is data else json.dumps(scrubbed, ensure_ascii=False)


def _scrub_json_shapes(text: str) -> str:
    """An error body's JSON with what is shaped like a secret redacted in its decoded
    strings: an escape (``\\u0065yJ...``) hides the shape from a search of the text."""
    if "\\" not in text or text.lstrip()[:1] not in ("{", "["):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    scrubbed = redact_error_strings(data)
    return text if scrubbed == data else json.dumps(scrubbed, ensure_ascii=False)


def scrub_body_data(body: Any, values: list[str]) -> Any:
    """A streamed request's JSON body as its cassette records it: encoded as sent, its
    secrets redacted (:func:`_scrub_body`, as :func:`scrub_request` does), decoded again
    (a text that is not JSON stays text).

    The one function for both ends of a streamed replay: the recorded body is made by
    it, and a replay matches the live request made by it against what was recorded. A
    request holding a secret (a key in ``--model-param``'s ``extra_body``) is recorded
    redacted; compared as sent, it would match nothing (``cassette_missing``), compared
    as recorded it is the same request."""
    raw = (
        body.encode("utf-8")
        if isinstance(body, str)
        else json.dumps(body, ensure_ascii=False).encode("utf-8")
    )
    scrubbed = _scrub_body(raw, values) or b""
    try:
        return json.loads(scrubbed or b"null")
    except ValueError:
        text: str = scrubbed.decode("utf-8", "replace")
        return text


def scrub_request(request: HttpRequest, values: list[str] | None = None) -> HttpRequest:
    """Drop secret headers, userinfo and secret query keys, redact secret values, normalise
    the local host."""
    req = _copy_request(request)
    values = secret_values() if values is None else values
    scrub_headers(req.headers, values)
    parts = urlsplit(req.uri)
    netloc = parts.netloc.rpartition("@")[2]
    scheme = parts.scheme
    host = placeholder(netloc)
    if host is not None:
        netloc, scheme = host, "http"
    req.uri = redact_uri(
        urlunsplit((scheme, netloc, parts.path, parts.query, parts.fragment)), values
    )
    if "host" in req.headers:
        req.headers["host"] = netloc
    req.body = _scrub_body(req.body, values)
    return req


def _copy_request(request: HttpRequest) -> HttpRequest:
    """A copy of ``request`` that scrubbing may change without touching the original.

    Scrubbing replaces the uri and the body and edits the headers in place: a shallow copy
    with its own headers is enough. ``copy.deepcopy`` walked every header and the parsed
    uri, work that no scrub needs."""
    req = copy.copy(request)
    req.headers = dict(request.headers.items())  # its own dict of str values
    return req


def scrub_response(
    response: dict[str, Any], values: list[str] | None = None
) -> dict[str, Any] | None:
    """Drop secret headers, redact secret values a server may echo back (and, in an error
    reply, anything shaped like a secret).

    Transient faults (429, 5xx, a truncated or non-JSON body) are not recorded (None):
    a retry must reach the server again, not replay the fault.
    """
    status = int(response.get("status", {}).get("code", 200))
    if status == 429 or status >= 500 or not _complete_json(response):
        return None
    resp = _copy_response(response)
    values = secret_values() if values is None else values
    scrub_headers(resp.get("headers", {}), values)
    if "body" in resp and "string" in resp["body"]:
        body = _scrub_body(resp["body"]["string"], values, shapes=status >= 400)
        resp["body"]["string"] = normalise_local_body(body)
    return resp


def _copy_response(response: dict[str, Any]) -> dict[str, Any]:
    """A copy of a serialized ``response`` that scrubbing may change without touching the
    original: scrubbing replaces header values and the body's ``string`` (immutable
    bytes or text), so the response, its headers and its body are copied, not walked
    (``copy.deepcopy`` visited every header value: most of the scrub's time)."""
    resp = dict(response)
    for part in ("headers", "body"):
        if isinstance(resp.get(part), dict):
            resp[part] = dict(resp[part])
    return resp


def _complete_json(response: dict[str, Any]) -> bool:
    headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
    ctype = headers.get("content-type", [""])
    ctype = ctype[0] if isinstance(ctype, list) and ctype else str(ctype)
    if "json" not in ctype:
        return True
    body = response.get("body", {}).get("string", b"")
    try:
        json.loads(body or b"null")
    except ValueError:
        return False
    return True
