"""What a credential looks like, for text whose secrets toolbench was never told about.

Two sources, one answer. The maintained set is Yelp's ``detect-secrets`` (AWS, Slack,
JWT, private keys, basic-auth URLs, ``password=``-style keywords, Stripe, GitLab, npm,
PyPI, ...): its plugins are run directly on a string (``analyze_string``), without its
file and baseline machinery, so checking one line is cheap (a few are left out, see
:data:`_SKIPPED_PLUGINS`; long texts are cut into overlapping windows). Toolbench adds the shapes
detect-secrets lacks or matches too narrowly (``sk-``/``sk-ant-`` keys of any length,
``AIza``, ``hf_``, ``gh*_``, bearer/basic credentials, secret query parameters, a JWT
with its signature, a URL's password after one slash as after two) and a filter for the
placeholders models write (``api_key=YOUR_API_KEY``). A finding is the secret and no
more: a ``password=`` value ends before a bracket it never opened.

Used by ``cassettes audit`` (detection) and by :func:`toolbench.redaction.redact_error`
(error texts echoed by servers).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_SKIPPED_PLUGINS = frozenset(
    {"Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)", "OpenAI Token"}
)
"""Entropy: every id would be a finding. Public IPs are not credentials. OpenAI Token:
toolbench's ``sk-`` shape covers it, and its regex is quadratic in a run of ``sk-``."""

# Names whose value is a credential: as a query parameter or a ``name=value`` in text.
SECRET_PARAM = (
    r"(?:api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token"
    r"|auth[_-]?token|session[_-]?token|client[_-]?secret|secret|password|passwd|pwd"
    r"|sig|signature|x-amz-(?:credential|signature|security-token)|code)"
)
STRONG = (
    r"(?:api[_-]?key|access[_-]?key|secret|password|passwd|token|access[_-]?token"
    r"|auth[_-]?token|session[_-]?token|refresh[_-]?token|private[_-]?key)"
)
"""Names that are a credential with any prefix: ``aws_secret_access_key``, ``db_password``;
the weak ones (``key``, ``code``, ``sig``) only alone, so ``zip_code=`` is not one."""
_JWT_TAIL = r"[A-Za-z0-9_-]*=*"
"""A JWT's signature (base64url, padding tolerated): detect-secrets' pattern ends lazily
before it, so its finding is extended over it (the whole token is the secret)."""
# Own shapes: (kind, pattern); the named group ``v`` (or the whole match) is the secret.
TOOLBENCH_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic key", re.compile(r"(?<![A-Za-z0-9])(?P<v>sk-ant-[A-Za-z0-9_-]{20,})")),
    ("openai-style key", re.compile(r"(?<![A-Za-z0-9])(?P<v>sk-(?!ant-)[A-Za-z0-9_-]{20,})")),
    ("google api key", re.compile(r"(?<![A-Za-z0-9])(?P<v>AIza[0-9A-Za-z_-]{30,})")),
    ("github token", re.compile(r"(?<![A-Za-z0-9])(?P<v>(?:gh[pousr]_|github_pat_)\w{30,})")),
    ("huggingface token", re.compile(r"(?<![A-Za-z0-9])(?P<v>hf_[A-Za-z0-9]{30,})")),
    ("bearer token", re.compile(r"\b[Bb]earer\s+(?P<v>[A-Za-z0-9._~+/=-]{16,})")),
    ("basic credentials", re.compile(r"\bBasic\s+(?P<v>[A-Za-z0-9+/]{12,}={0,2})")),
    (
        "secret query parameter",
        re.compile(rf"[?&;]{SECRET_PARAM}=(?P<v>[^&\s\"'`<>#\\]{{6,}})", re.IGNORECASE),
    ),
    (
        "secret assignment",
        re.compile(
            rf"(?:(?<![A-Za-z0-9_-]){SECRET_PARAM}|(?<![A-Za-z0-9_-])(?:[A-Za-z0-9]+_)*{STRONG})"
            r"\s*=\s*[\"'`]?(?P<v>[^\s\"'`&,;<>\\(){}\[\]]{6,})(?![\w(])",
            re.IGNORECASE,
        ),
    ),
    (
        "url credentials",
        re.compile(
            r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:/{1,2}[^/\s:@\"'<>]+:(?P<v>[^/\s@\"'<>]+)@",
            re.IGNORECASE,
        ),
    ),
    (
        "json web token",
        re.compile(rf"(?<![A-Za-z0-9_-])(?P<v>eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.{_JWT_TAIL})"),
    ),
    (
        "private key",
        re.compile(
            r"(?P<v>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*))",
            re.DOTALL,
        ),
    ),
)

_PLACEHOLDER = re.compile(
    r"^(?:[A-Z]+(?:_[A-Z0-9]+)+|<[^>]*>|\{[^}]*\}|\$\{?[A-Za-z_]\w*\}?|\[[^\]]*\]|[xX*.#-]{3,}"
    r"|(?i:(?:your|my|the|some|example|dummy|fake)(?:[_-][a-z]+)*|null|none|undefined))$"
)
"""What models and docs write where a key goes: ``YOUR_API_KEY``, ``<key>``, ``${TOKEN}``."""
_CUT = re.compile(r"[\s&\"'`\\,;]")
"""Where a keyword's value ends: quotes (a backtick too: code and Markdown quote with it)."""
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim_closers(value: str) -> str:
    """``value`` without the closing brackets it ends with that it never opened: in
    ``f(password=hunter22)`` the call's ``)`` is no part of the password, and redacting
    it would change the text around the secret."""
    while (
        value
        and value[-1] in _CLOSERS
        and value.count(value[-1]) > value.count(_CLOSERS[value[-1]])
    ):
        value = value[:-1]
    return value


@dataclass(frozen=True)
class Shape:
    kind: str
    value: str


def is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value)) or "<redacted>" in value


@functools.cache
def _plugins() -> tuple[tuple[str, Any, Any], ...]:
    """detect-secrets plugin instances (with the YAML keyword regexes), built once."""
    # detect-secrets is slow to import: loaded when a text is first checked by shape
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.keyword import REGEX_BY_FILETYPE, KeywordDetector
    from detect_secrets.util.filetype import FileType

    out: list[tuple[str, Any, Any]] = []
    mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for kind, cls in sorted(mapping.items()):
        if kind in _SKIPPED_PLUGINS:
            continue
        extra = REGEX_BY_FILETYPE[FileType.YAML] if cls is KeywordDetector else None
        out.append((kind, cls(), extra))
    return tuple(out)


WINDOW = 2048
OVERLAP = 512
"""detect-secrets' JWT regex is quadratic in a run of ``eyJ``, so its
plugins see overlapping windows: a secret up to :data:`OVERLAP` characters long lies whole
in one of them, and the cost stays linear in the text."""


def _windows(text: str) -> Iterator[str]:
    if len(text) <= WINDOW:
        yield text
        return
    for start in range(0, len(text) - OVERLAP, WINDOW - OVERLAP):
        yield text[start : start + WINDOW]


_MAY_MATCH_PLUGIN = re.compile(
    r"key|pass|pw|secret|token|contrase|auth|://|eyj|xox|private|putty|aws|sq0csp|_live_"
    r"|[a-z0-9_-]{20}|(?-i:AKC|AP[0-9A-F])[a-z0-9]{8}",
    re.IGNORECASE,
)
"""What a text holds if any detect-secrets plugin run here can match in it: a keyword
one of its patterns requires (``key``, ``pass``/``pw``, ``secret``, ``token``, ``auth``,
``://``, ``eyJ``, ``xox``, ``BEGIN ... PRIVATE KEY``, PuTTY, ``aws``, ``sq0csp-``,
``k_live_``), a run of 20 token characters (every fixed-shape token: AWS, GitHub, GitLab,
Discord, Mailchimp, PyPI, SendGrid, Telegram, Twilio...), or Artifactory's short shapes.
A text without any of them is not scanned, so one short line (a usage error) does not
load detect-secrets and its plugins. ``tests/test_secret_shapes.py`` pins every plugin
pattern this was derived from: a detect-secrets upgrade that changes one fails there."""


def may_match_plugin(text: str) -> bool:
    """Whether a detect-secrets plugin could find anything in ``text`` (False: certainly
    not, see :data:`_MAY_MATCH_PLUGIN`)."""
    return _MAY_MATCH_PLUGIN.search(text) is not None


def _detect_secrets(text: str) -> Iterator[Shape]:
    if not may_match_plugin(text):
        return
    for window in _windows(text):
        yield from _detect_secrets_in(window)


def _detect_secrets_in(text: str) -> Iterator[Shape]:
    for kind, plugin, extra in _plugins():
        found = plugin.analyze_string(text) if extra is None else plugin.analyze_string(text, extra)
        for value in found:
            if kind == "Secret Keyword":
                value = _trim_closers(_CUT.split(str(value), maxsplit=1)[0])
            if len(value) >= 4 and not is_placeholder(value):
                yield Shape(kind.lower(), str(value))


def find_shapes(text: str) -> list[Shape]:
    """Every secret-shaped substring of ``text`` (one line or a whole string)."""
    found: list[Shape] = []
    for kind, pattern in TOOLBENCH_SHAPES:
        for m in pattern.finditer(text):
            value = m.group("v")
            if not is_placeholder(value):
                found.append(Shape(kind, value))
    plugins = list(dict.fromkeys(_detect_secrets(text)))  # windows overlap: each once
    jwts = [s for s in plugins if s.kind == "json web token"]
    found.extend(s for s in plugins if s.kind != "json web token")
    found.extend(_whole_jwts(text, jwts) if jwts else [])
    return found


_SIGNATURE = re.compile(_JWT_TAIL)
_PAYLOAD_REST = re.compile(rf"[A-Za-z0-9_-]*(?:\.{_JWT_TAIL})?")


def _whole_jwts(text: str, jwts: list[Shape]) -> list[Shape]:
    """detect-secrets' JWT findings (``header.payload.``: its pattern stops before the
    signature, and a window may cut the payload) extended over the rest of the token
    wherever they stand. One pass over the places ``eyJ`` stands, each looked up by its
    first characters, so many findings in a long text do not each search all of it."""
    width = min(16, *(len(s.value) for s in jwts))
    by_start: dict[str, list[str]] = {}
    for s in jwts:
        by_start.setdefault(s.value[:width], []).append(s.value)
    out: list[Shape] = []
    at = text.find("eyJ")
    while at >= 0:
        for value in by_start.get(text[at : at + width], ()):
            if text.startswith(value, at):
                rest = _SIGNATURE if value.endswith(".") else _PAYLOAD_REST
                end = rest.match(text, at + len(value))
                out.append(Shape("json web token", text[at : end.end() if end else at]))
        at = text.find("eyJ", at + 1)
    return out or jwts
