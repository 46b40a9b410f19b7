"""A generated section of a checked-in page: printed, written in place, or checked.

The CLI reference (docs/cli.md) and the formats table (docs/formats.md) are generated from
the code and checked by tests and CI, so a page never drifts from what it documents. Both
splice their text between two marker lines and share the same three modes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def splice(page: str, text: str, begin: str, end: str, doc: Path) -> str:
    """``page`` with the text between the ``begin`` and ``end`` markers replaced."""
    head, sep, rest = page.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"{doc}: the markers {begin!r} and {end!r} are missing")
    return f"{head}{begin}\n\n{text}\n{end}{tail}"


def main(
    argv: list[str] | None,
    *,
    prog: str,
    doc: Path,
    doc_help: str,
    render: Callable[[], str],
    splice_into: Callable[[str, str], str],
    regenerate: str,
) -> int:
    """Print the generated text; ``--write``: update ``doc`` in place; ``--check``: exit 1
    when ``doc`` is stale (saying how to regenerate it)."""
    parser = argparse.ArgumentParser(prog=prog)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"update {doc.name} in place")
    mode.add_argument("--check", action="store_true", help=f"exit 1 when {doc.name} is stale")
    parser.add_argument("--doc", type=Path, default=doc, help=doc_help)
    args = parser.parse_args(argv)
    text = render()
    if not (args.write or args.check):
        sys.stdout.write(text)
        return 0
    page = args.doc.read_text(encoding="utf-8")
    wanted = splice_into(page, text)
    if args.check:
        if page != wanted:
            print(f"{args.doc} is stale: run {regenerate}", file=sys.stderr)
            return 1
        return 0
    if page != wanted:
        args.doc.write_text(wanted, encoding="utf-8")
        print(f"wrote {args.doc}")
    return 0
