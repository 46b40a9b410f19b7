"""What each known request parameter takes, and which of its values are secrets.

A ``--model-param`` value the provider cannot take (``temperature=NaN``,
``max_tokens=1e999``, ``extra_headers=[1]``) used to pass, and every trial then failed
five attempts later, blamed on the provider. Each known parameter has a type and a
range here, checked before the first call; a parameter not in the table is passed
through as given (a provider-specific knob toolbench cannot judge).

``extra_headers`` and ``extra_body`` carry credentials (a gateway's ``X-Custom-Pass``,
a ``client_secret``): their values are never shown in an error, and every header
value and every credential-named body field is registered for redaction, so no byte
toolbench writes holds them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from toolbench.redaction import REDACTED, is_secret_header, is_secret_query_key, register_secret

SECRET_KEYS = frozenset({"extra_headers", "extra_body"})
"""Parameters whose values are never echoed (they may hold credentials)."""
MAX_TOKENS_LIMIT = 10_000_000
"""Above any model's window: a larger ``max_tokens`` is a typo, not a setting."""
_CREDENTIAL_WORDS = frozenset({"pass", "passwd", "pwd", "passphrase", "private"})


def _number(low: float, high: float) -> Callable[[Any], bool]:
    def ok(v: Any) -> bool:
        return (
            isinstance(v, int | float) and not isinstance(v, bool)
            and math.isfinite(v) and low <= v <= high
        )  # fmt: skip

    return ok


def _integer(low: int, high: int) -> Callable[[Any], bool]:
    def ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high

    return ok


def _text_list(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v))


def _headers(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(s, str) for s in v.values())


RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "temperature": (_number(0, 2), "a number from 0 to 2"),
    "top_p": (_number(0, 1), "a number from 0 to 1"),
    "presence_penalty": (_number(-2, 2), "a number from -2 to 2"),
    "frequency_penalty": (_number(-2, 2), "a number from -2 to 2"),
    "max_tokens": (_integer(1, MAX_TOKENS_LIMIT), f"a whole number from 1 to {MAX_TOKENS_LIMIT}"),
    "max_completion_tokens": (
        _integer(1, MAX_TOKENS_LIMIT), f"a whole number from 1 to {MAX_TOKENS_LIMIT}"
    ),
    "seed": (_integer(-(2**63), 2**63 - 1), "a whole number"),
    "n": (_integer(1, 128), "a whole number from 1 to 128"),
    "top_logprobs": (_integer(0, 20), "a whole number from 0 to 20"),
    "logprobs": (lambda v: isinstance(v, bool), "true or false"),
    "parallel_tool_calls": (lambda v: isinstance(v, bool), "true or false"),
    "stop": (_text_list, "a text or a list of texts"),
    "reasoning_effort": (lambda v: isinstance(v, str) and v != "", "a text such as low"),
    "extra_headers": (_headers, "a JSON object of header names to text values"),
    "extra_body": (lambda v: isinstance(v, dict), "a JSON object of request fields"),
    "response_format": (lambda v: isinstance(v, dict), "a JSON object"),
}  # fmt: skip
"""Per parameter: whether a value fits, and what it takes (said in the error)."""


def shown(key: str, value: Any) -> str:
    """``value`` as an error line shows it: never a value of :data:`SECRET_KEYS`."""
    if key in SECRET_KEYS:
        return REDACTED
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def shown_text(text: str) -> str:
    """A ``MODEL:key=value`` text as an error line shows it (the value of a secret-bearing
    key, or of a text naming no key, replaced by the placeholder)."""
    head, eq, _ = text.partition("=")
    key = head.rpartition(":")[2].strip()
    if eq and (key in SECRET_KEYS or not key):
        return f"{head}={REDACTED}"
    return text


def why_not(key: str, value: Any) -> str | None:
    """What ``key`` takes, when ``value`` does not fit it (None: it fits, or ``key`` is
    not a parameter toolbench knows the type of)."""
    rule = RULES.get(key)
    if rule is None or rule[0](value):
        return None
    if key in SECRET_KEYS:
        return f"{key} takes {rule[1]}"
    return f"{key} takes {rule[1]} (got {shown(key, value)})"


def is_credential_name(name: str) -> bool:
    """A field or header name that holds a credential (``client_secret``, ``X-Pass``)."""
    words = set(re.split(r"[-_.]", name.lower()))
    return is_secret_header(name) or is_secret_query_key(name) or bool(_CREDENTIAL_WORDS & words)


def register_param_secrets(params: Mapping[str, Any]) -> None:
    """Register every ``extra_headers`` value and every credential-named ``extra_body``
    field (at any depth) so that every writer redacts them."""
    headers = params.get("extra_headers")
    if isinstance(headers, Mapping):
        for value in headers.values():
            if isinstance(value, str):
                _register(value)
    body = params.get("extra_body")
    if isinstance(body, Mapping):
        _register_body(body)


def _register_body(body: Mapping[str, Any]) -> None:
    for name, value in body.items():
        if isinstance(value, Mapping):
            _register_body(value)
        elif isinstance(value, str) and is_credential_name(str(name)):
            _register(value)


def _register(value: str) -> None:
    register_secret(value)
    scheme, _, token = value.partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token"):
        register_secret(token.strip())


BaseUrlProblem = Literal["invalid", "not_http", "query"]


def base_url_problem(value: str) -> tuple[BaseUrlProblem, str] | None:
    """What is wrong with a provider base URL (``--api-base``, a model's ``api_base``):
    one check for both options, each wording its own message. ``query``: LiteLLM appends
    the route to the whole text (``/v1?token=t/chat/completions``)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        return "invalid", str(exc)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not_http", ""
    if parts.query or parts.fragment:
        return "query", ""
    return None
