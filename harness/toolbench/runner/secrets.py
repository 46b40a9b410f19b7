"""What counts as a secret, in one place: used when recording and by ``cassettes audit``.

Secrets never reach a cassette, a result file or a report: headers and query keys are
dropped by name, and the value of any environment variable whose name ends in
``_API_KEY`` or ``_TOKEN`` is replaced wherever it appears.
"""

from __future__ import annotations

import os
import re

SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie"}
)
SECRET_QUERY_KEYS = frozenset({"key", "api_key", "api-key"})
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN")
REDACTED = "<redacted>"
MIN_SECRET_LEN = 6
"""Shorter values (``1``, ``true``) would redact ordinary text and protect nothing."""

# Shapes of well-known credentials, for auditing cassettes written by anyone.
SECRET_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("openai-style key", re.compile(r"\bsk-[A-Za-z0-9_-]{20,}")),
    ("anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("bearer token", re.compile(r"Bearer\s+[A-Za-z0-9._~+/-]{16,}")),
    ("github token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("huggingface token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    (
        "secret header",
        re.compile(
            r"^\s*['\"]?(authorization|x-api-key|api-key|x-goog-api-key|cookie)['\"]?\s*:",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    ("key query parameter", re.compile(r"[?&]key=[^&\s<>]{8,}")),
)


def secret_values() -> list[str]:
    """Values of ``*_API_KEY`` / ``*_TOKEN`` variables now in the environment, longest first."""
    vals = {
        v
        for k, v in os.environ.items()
        if k.upper().endswith(SECRET_ENV_SUFFIXES) and len(v) >= MIN_SECRET_LEN
    }
    return sorted(vals, key=len, reverse=True)


def redact(text: str, values: list[str] | None = None) -> str:
    """Replace every secret value in ``text``."""
    for v in secret_values() if values is None else values:
        if v in text:
            text = text.replace(v, REDACTED)
    return text
