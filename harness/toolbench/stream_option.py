"""The ``stream`` option of a format spec, as text: ``xml:stream``, ``native:stream|xml``.

A leaf, so that whatever reads a stored spec (the reports, the streaming metrics) tells a
streamed cell from its non-streamed twin by the spec alone, without building the format.
What the option does to a format is :mod:`toolbench.formats.stream_spec`.
"""

from __future__ import annotations

STREAM_OPTION = "stream"
"""The spec option (a bare word, no ``=value``)."""


def split_stream(spec: str) -> tuple[str, bool]:
    """``spec`` without its ``stream`` option, and whether it had one.

    Only the first part of a composition may carry it (``native:stream|xml``).
    """
    head, sep, rest = spec.strip().partition("|")
    name, _, opts = head.partition(":")
    # Empty items kept: the options' parser refuses them (an empty option is a typo).
    items = [p.strip() for p in opts.split(",")] if opts.strip() else []
    kept = [p for p in items if p != STREAM_OPTION]
    if len(kept) == len(items):
        return spec.strip(), False
    base = name.strip() + (":" + ",".join(kept) if kept else "")
    return base + (sep + rest if sep else ""), True


def with_stream(spec: str) -> str:
    """``spec`` with the ``stream`` option (unchanged when it has it)."""
    base, streamed = split_stream(spec)
    if streamed:
        return spec.strip()
    head, sep, rest = base.partition("|")
    joined = f"{head},{STREAM_OPTION}" if ":" in head else f"{head}:{STREAM_OPTION}"
    return joined + (sep + rest if sep else "")
