"""Moved to :mod:`toolbench.redaction` (a ground layer the store can import).

Kept as a re-export only so code written against the old path still imports during the
merge of parallel branches; new code imports :mod:`toolbench.redaction`.
"""

from toolbench.redaction import (
    MIN_SECRET_LEN,
    REDACTED,
    SECRET_HEADERS,
    SECRET_QUERY_KEYS,
    redact,
    redact_error,
    register_secret,
    secret_values,
)

__all__ = [
    "MIN_SECRET_LEN",
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY_KEYS",
    "redact",
    "redact_error",
    "register_secret",
    "secret_values",
]
