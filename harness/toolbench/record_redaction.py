"""A stored record's error fields, redacted by shape as well as by value.

An error message may echo what a server was sent, credentials nobody told toolbench about
included, so the text under an error key of a stored record (:data:`ERROR_FIELDS`) is
passed through :func:`~toolbench.redaction.redact_error`; the rest of the record gets the
by-value redaction of :func:`~toolbench.redaction.redact`. :func:`redacted_json_line` is
the form every ``results.jsonl`` line is written in.
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolbench.redaction import redact, redact_error_strings

ERROR_FIELDS = frozenset({"infra_error", "error", "errors", "message", "detail", "exception"})
"""Keys whose text is an error message, at any depth of a stored record."""


def redact_error_fields(data: Any) -> Any:
    """``data`` (JSON-like) with every string under an :data:`ERROR_FIELDS` key passed
    through :func:`redact_error`; other strings are left for :func:`redact`."""
    if isinstance(data, dict):
        return {
            k: redact_error_strings(v) if k in ERROR_FIELDS else redact_error_fields(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact_error_fields(v) for v in data]
    return data


def redacted_json_line(json_text: str) -> str:
    """A stored record (one compact JSON object, as pydantic writes it) with every secret
    removed, newline-terminated: the form of a ``results.jsonl`` line.

    Error fields are redacted on the decoded data (by shape as well as by value); the
    text is re-encoded only when that changed something, so a line without secrets keeps
    pydantic's exact bytes.
    """
    fields = _error_fields(json_text)
    if fields:
        spliced = _redact_error_values(json_text, fields)
        if spliced is not None:
            json_text = spliced
        else:  # not the JSON it should be: decoded and walked whole
            data = json.loads(json_text)
            scrubbed = redact_error_fields(data)
            if scrubbed != data:
                json_text = json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":"))
    return redact(json_text) + "\n"


_VALUE = json.JSONDecoder()


def _error_fields(json_text: str) -> list[re.Match[str]]:
    """The matches of :data:`_ERROR_FIELD_TEXT` in ``json_text``, in order, each tried
    only where one of the keys stands (:data:`_ERROR_KEY`, one pass of a literal
    alternation): the field pattern's own search stopped at every quote, and a streamed
    trial's line has about 1,600 of them (a large share of the time of writing the line);
    a search of each key in turn read the line six times (slower than this one pass).
    The key's closing quote is not consumed, so a key that opens with it is still found.
    No two matches can overlap (a match holds one key's two quotes, then only blanks and
    a colon), so these are the search's matches."""
    found: list[re.Match[str]] = []
    for key in _ERROR_KEY.finditer(json_text):
        m = _ERROR_FIELD_TEXT.match(json_text, key.start())
        if m is not None:
            found.append(m)
    return found


def _redact_error_values(json_text: str, fields: list[re.Match[str]]) -> str | None:
    """:func:`redact_error_fields` on the text itself: each error field's value is decoded
    where it stands and, when redacting its strings changed them, written back in place;
    the rest of the record is neither decoded nor walked (a streamed trial's hundreds of
    deltas were walked for the one ``errors`` list beside them). None when a value does
    not decode (the caller walks the whole record)."""
    out: list[str] = []
    done = 0
    for m in fields:
        if m.start() < done:
            continue  # inside an error field's value already redacted whole
        before = m.start() - 1
        while before >= 0 and json_text[before] == "\\":
            before -= 1
        if (m.start() - 1 - before) % 2:
            continue  # an escaped quote: the end of some other key, not this field's name
        try:
            value, end = _VALUE.raw_decode(json_text, m.end())
        except ValueError:
            return None
        scrubbed = redact_error_strings(value)
        if scrubbed != value:
            out.append(json_text[done : m.end()])
            out.append(json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":")))
            done = end
        else:
            out.append(json_text[done:end])
            done = end
    out.append(json_text[done:])
    return "".join(out)


_ERROR_FIELD_TEXT = re.compile(
    '"(?:'
    + "|".join(sorted(ERROR_FIELDS))
    + ')"'
    + r'\s*:\s*(?!null\b|\[\s*\]|\{\s*\}|""|true\b|false\b|-?\d)'
)
"""An error field holding text (a string, or a list or object that may hold one): only
then is the record decoded for :func:`redact_error_fields`. pydantic and :mod:`json`
write object keys as they are (never ``\\u``-escaped ASCII), so a record this does not
match has no error text to redact by shape (a merge of 100,000 trials decoded and walked
every line for nothing)."""
_ERROR_KEY = re.compile('"(?:' + "|".join(sorted(ERROR_FIELDS)) + ')(?=")')
"""Where one of the error keys stands (its closing quote left for the next search)."""
