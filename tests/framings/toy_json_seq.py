"""A framing written only for the tests: RFC 7464 JSON text sequences
(``application/json-seq``, each record an RS byte, a JSON text and a line feed). It is
one module and one entry point (``ENTRY`` in test_framings.py), touching nothing in
cassettes/, providers/ or runner/."""

from __future__ import annotations

from toolbench.framings import Framing


def _record(line: bytes) -> bytes | None:
    return line[1:] if line.startswith(b"\x1e") else None


JSON_SEQ = Framing("json-seq", ("json-seq",), "a JSON text sequence record", line=_record,
                   event_per_line=True)  # fmt: skip
