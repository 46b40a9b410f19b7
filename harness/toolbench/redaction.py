"""Secrets never reach a byte toolbench writes: what counts as a secret, and its removal.

A ground-layer module, so the store (``results``), the cassettes, the runner and the
report writers all use the same rules without importing upward.

Known secrets are replaced by value wherever they appear, in every encoding a writer
might give them (JSON-escaped, percent-encoded, HTML/XML-escaped, Markdown-escaped):

- the value of every secret-bearing environment variable (:func:`is_secret_env_name`:
  ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``, ``*_ACCESS_KEY*``,
  ``*CREDENTIAL*``...; LiteLLM reads dozens of such names, so the rule is by shape,
  not a list), and the credentials inside URL-valued ones (``*_API_BASE`` with
  ``user:pw@`` or ``?token=``);
- every credential passed on the command line, registered with :func:`register_secret`
  or :func:`register_url_secrets` (``--api-base``).

Secrets nobody told us about are removed by shape where text is an error message a
server may echo (:func:`redact_error`), by name for headers (:func:`is_secret_header`)
and query parameters (:func:`is_secret_query_key`), and userinfo is always stripped from
recorded URIs (:func:`redact_uri`). A stored record's error fields are redacted by shape
in :mod:`toolbench.record_redaction`.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import os
import re
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

from toolbench.secret_shapes import find_shapes

REDACTED = "<redacted>"
MIN_SECRET_LEN = 6
"""Shorter values (``1``, ``true``) would redact ordinary text and protect nothing."""

_SECRET_ENV = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|ACCESS_KEY|SIGNATURE|SAS)(?:_|$)"
    r"|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY",
)
_NOT_SECRET_ENV = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "GPG_AGENT_INFO"})
_URL_ENV = re.compile(r"(?:_API_BASE|_BASE_URL|_URL|_ENDPOINT|_HOST|_URI)$")

_SECRET_HEADER_WORDS = frozenset(
    {
        "authorization", "auth", "cookie", "set-cookie", "key", "apikey", "token", "secret",
        "password", "signature", "credential", "credentials", "session", "sas",
    }
)  # fmt: skip
SECRET_HEADERS = frozenset(
    {
        "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
        "cookie", "set-cookie", "set-cookie2", "ocp-apim-subscription-key", "x-auth-token",
        "private-token", "x-amz-security-token",
    }
)  # fmt: skip
SECRET_QUERY_KEYS = frozenset(
    {
        "key", "api_key", "api-key", "apikey", "token", "access_token", "refresh_token",
        "id_token", "auth", "auth_token", "sig", "signature", "client_secret", "secret",
        "password", "code",
    }
)  # fmt: skip

_registered: set[str] = set()


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable's value is a credential (by the shape of its name)."""
    upper = name.upper()
    return upper not in _NOT_SECRET_ENV and bool(_SECRET_ENV.search(upper))


@functools.lru_cache(maxsize=1024)
def is_secret_header(name: str) -> bool:
    """Headers dropped by name: any whose name has a credential word (``x-auth-token``).

    ``x-ratelimit-remaining-tokens`` stays: the words are compared whole.
    """
    low = name.lower()
    return low in SECRET_HEADERS or bool(_SECRET_HEADER_WORDS & set(re.split(r"[-_.]", low)))


def is_secret_query_key(name: str) -> bool:
    low = name.lower()
    return low in SECRET_QUERY_KEYS or low.startswith("x-amz-") or low.endswith(("_key", "-key"))


_NOT_A_SECRET = re.compile(r"[\d.eE+-]*|true|false|none|null", re.IGNORECASE)
"""A number or a flag: redacting it would rewrite token counts (and break JSON numbers)."""


def _is_secret_value(value: str) -> bool:
    return len(value) >= MIN_SECRET_LEN and not _NOT_A_SECRET.fullmatch(value)


def register_secret(value: str | None) -> None:
    """Redact ``value`` from everything written from now on (a credential given on the
    command line, or one toolbench read from anywhere but the environment)."""
    if value and _is_secret_value(value):
        _registered.add(value)


_USERINFO = re.compile(r":/{1,2}([^/?#@\s]{1,2048})@")
"""Userinfo after one slash too: a URL read as a file path (``https:/user:pw@host``,
pathlib's form of it) has lost one, and urlsplit then sees no host."""


def url_secrets(url: str) -> list[str]:
    """The credentials inside a URL: userinfo user and password, secret query values."""
    try:
        parts = urlsplit(url.strip())
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
    except ValueError:
        # Not a valid URL (the option check is about to say so, quoting it): its
        # userinfo is still a credential.
        return _userinfo_secrets(url)
    if parts.scheme and not parts.netloc and parts.path[:1] == "/" and "@" in parts.path:
        return url_secrets(f"{parts.scheme}:/{parts.path}?{parts.query}")  # a slash lost
    found = [user, password]
    if password:  # what an HTTP client sends for user:pw@ (Authorization: Basic ...)
        found.append(base64.b64encode(f"{user}:{password}".encode()).decode())
    found += [
        v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_query_key(k)
    ]
    return [v for v in found if _is_secret_value(v)]


def _userinfo_secrets(url: str) -> list[str]:
    m = _USERINFO.search(url)
    user, _, password = (m.group(1) if m else "").partition(":")
    return [v for v in (unquote(user), unquote(password)) if _is_secret_value(v)]


def register_url_secrets(url: str | None) -> None:
    """Register the credentials inside a URL given on the command line (``--api-base``)."""
    for value in url_secrets(url or ""):
        register_secret(value)


_env_cache: tuple[dict[Any, Any], frozenset[str]] | None = None


def _env_secrets() -> frozenset[str]:
    """The secret values of the environment, recomputed only when it changed (a merge of
    100,000 trials asked ~50 variable names per line through every regex before)."""
    global _env_cache
    # CPython keeps the environment as a dict of the OS's own strings (``_data``):
    # comparing it with a copy is cheap (cheaper than a tuple of its items made to
    # compare), decoding every name and value on each line was not.
    raw = getattr(os.environ, "_data", None)
    current = raw if isinstance(raw, dict) else dict(os.environ.items())
    if _env_cache is not None and _env_cache[0] == current:
        return _env_cache[1]
    snapshot = dict(current)
    vals: set[str] = set()
    for k, v in os.environ.items():
        if is_secret_env_name(k) and _is_secret_value(v):
            vals.add(v)
        elif _URL_ENV.search(k.upper()) and ("@" in v or "=" in v):
            vals.update(url_secrets(v))
    _env_cache = (snapshot, frozenset(vals))
    return _env_cache[1]


def secret_values() -> list[str]:
    """Every known secret value (environment and registered), longest first."""
    return sorted(_env_secrets() | _registered, key=len, reverse=True)


def _md_escape(s: str) -> str:
    out = s.replace("\\", "\\\\")
    for ch in "|<>*_`[]":
        out = out.replace(ch, "\\" + ch)
    return out


def _variants(value: str) -> set[str]:
    """The forms a writer may give a value: raw, JSON, URL, HTML/XML and Markdown escaped."""
    out = {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),  # JSON may escape a slash
        quote(value, safe=""),
        quote_plus(value, safe=""),
        quote(value),
        html.escape(value),
        html.escape(value, quote=False),
        html.escape(value, quote=False).replace('"', "&quot;"),  # XML attributes
        html.escape(value, quote=False).replace('"', "&#34;").replace("'", "&#39;"),  # jinja
        _md_escape(value),
    }
    out.add(json.dumps(html.escape(value), ensure_ascii=False)[1:-1])
    return {v for v in out if len(v) >= MIN_SECRET_LEN}


@functools.lru_cache(maxsize=32)
def _forms(values: tuple[str, ...]) -> tuple[str, ...]:
    """Every form of every value, longest first: an escaped form must win over the raw
    value it contains."""
    return tuple(sorted({f for v in values for f in _variants(v)}, key=len, reverse=True))


@functools.lru_cache(maxsize=256)
def _pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, forms)))


@functools.lru_cache(maxsize=32)
def _json_forms(values: tuple[str, ...]) -> tuple[str, ...]:
    """Every form of every value as it reads inside a JSON string written with the short
    escapes only (``\\"``, ``\\\\``, ``\\n``...; no ``\\u``)."""
    return tuple({json.dumps(f, ensure_ascii=False)[1:-1] for f in _forms(values)})


def json_may_hold(text: str, values: list[str] | None = None) -> bool:
    """Whether the decoded strings of the JSON ``text`` may hold a known secret (False:
    certainly none, so :func:`redact_data` of it changes nothing), told without decoding.

    A JSON string that uses no ``\\u`` and no ``\\/`` escape spells each character the one
    way a JSON writer does with the short escapes, character by character; so a value
    found in a decoded string is found, so spelled, in the text. A text with either escape
    may spell a character another way: it may hold one."""
    if "\\u" in text or "\\/" in text:
        return True
    forms = _json_forms(tuple(secret_values() if values is None else values))
    return any(f in text for f in forms)


def redact(text: str, values: list[str] | None = None) -> str:
    """Replace every known secret value (in any of its encoded forms) in ``text``.

    A substring test first (a fast C search): most texts hold no secret, and one regex
    alternation of every form would cost a pass per form over a multi-megabyte reply.
    """
    forms = _forms(tuple(secret_values() if values is None else values))
    present = tuple(f for f in forms if f in text)
    return _pattern(present).sub(REDACTED, text) if present else text


def redact_shapes(text: str) -> str:
    """Replace every substring shaped like a credential (see :mod:`toolbench.secret_shapes`).

    Short texts are cached: the shapes depend on the text alone, and the same header
    values and error lines come back for every request of a run (replaying 340 trials
    scanned ~30,000 such strings with every detect-secrets plugin)."""
    if len(text) <= _CACHE_TEXT_LIMIT:
        return _redact_shapes_cached(text)
    return _redact_shapes(text)


_CACHE_TEXT_LIMIT = 4096


def _redact_shapes(text: str) -> str:
    for shape in sorted(find_shapes(text), key=lambda s: len(s.value), reverse=True):
        text = text.replace(shape.value, REDACTED)
    return text


_redact_shapes_cached = functools.lru_cache(maxsize=8192)(_redact_shapes)


def redact_error(text: str, values: list[str] | None = None) -> str:
    """An error text, which may echo what a server was sent: by value and by shape."""
    return redact_shapes(redact(text, values))


def redact_error_strings(data: Any) -> Any:
    """JSON-like ``data`` with every string (keys left as they are) passed through
    :func:`redact_error`: all of it is error text."""
    if isinstance(data, str):
        return redact_error(data)
    if isinstance(data, dict):
        return {k: redact_error_strings(v) for k, v in data.items()}
    if isinstance(data, list):
        return [redact_error_strings(v) for v in data]
    return data


def redact_uri(uri: str, values: list[str] | None = None) -> str:
    """A URI with no userinfo, no secret query parameter and no known secret value."""
    try:
        parts = urlsplit(uri)
        netloc = parts.netloc.rpartition("@")[2]
        query = urlencode(
            [
                (k, v)
                for k, v in parse_qsl(parts.query, keep_blank_values=True)
                if not is_secret_query_key(k)
            ]
        )
        uri = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        uri = redact_shapes(uri)
    return redact(uri, values)


# ------------------------------------------------------------ decoded values, split pieces


def redact_pieces(pieces: list[str], values: list[str] | None = None) -> list[str]:
    """``pieces`` (consecutive parts of one text: a stream's deltas) with every known
    secret removed from their joined text, each piece keeping its place.

    A key split over two deltas is in neither piece alone, so each piece redacted by
    itself would keep both halves. Here a secret's span is cut out of every piece it
    touches, and :data:`REDACTED` stands in the piece where the span began. Pieces
    without a secret are returned as they are (the same list when nothing changed).
    """
    joined = "".join(pieces)
    forms = _forms(tuple(secret_values() if values is None else values))
    present = tuple(f for f in forms if f in joined)
    if not present:
        return pieces
    spans = [m.span() for m in _pattern(present).finditer(joined)]
    out: list[str] = []
    pos = 0
    span_i = 0
    for piece in pieces:
        start, end = pos, pos + len(piece)
        kept: list[str] = []
        at = start
        while at < end:
            while span_i < len(spans) and spans[span_i][1] <= at:
                span_i += 1
            if span_i >= len(spans) or spans[span_i][0] >= end:
                kept.append(joined[at:end])
                break
            s, e = spans[span_i]
            if s > at:
                kept.append(joined[at:s])
            if s >= start:
                kept.append(REDACTED)  # the span begins in this piece
            at = min(e, end)
        out.append("".join(kept))
        pos = end
    return out


def redact_data(data: Any, values: list[str] | None = None) -> Any:
    """JSON-like ``data`` with every known secret removed from its decoded strings (keys
    and values). A server may escape any character of a JSON string (``\\u0073k-...``,
    ``\\/``): a search of the encoded bytes misses what a decoder, and the cassette
    serializer, then writes in clear. Returns ``data`` itself when nothing changed.

    Screened first on ``data`` written as JSON (:func:`json_may_hold`): one C pass and a
    substring search per form, where the walk searches every key and string for every
    form (noticeable on a live trial's kept reply). Data JSON cannot write is walked."""
    vals = secret_values() if values is None else values
    if not vals:
        return data
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        return _redact_data(data, vals)
    return _redact_data(data, vals) if json_may_hold(text, vals) else data


def _redact_data(data: Any, values: list[str]) -> Any:
    if isinstance(data, str):
        return redact(data, values)
    if isinstance(data, dict):
        out = {_redact_data(k, values): _redact_data(v, values) for k, v in data.items()}
        same = len(out) == len(data) and all(k in data and data[k] is v for k, v in out.items())
        return data if same else out
    if isinstance(data, list):
        items = [_redact_data(v, values) for v in data]
        return data if all(a is b for a, b in zip(items, data, strict=True)) else items
    return data
