"""The CLI reference in docs/cli.md, generated from the commands themselves.

``python -m toolbench.cli.cli_doc`` prints it; ``--write`` replaces the generated part of
docs/cli.md (between the two marker comments), ``--check`` exits 1 when that part is stale.
``tests/docs/test_cli_reference.py`` runs the check, so a changed option or help text
fails the tests until the page is regenerated. Walking click's command tree (the one
typer builds) means the page shows what ``--help`` shows: the same names, metavars,
defaults and texts, with hidden options left out.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolbench import generated_doc
from toolbench.cli.conventions import fill_choices

BEGIN = "<!-- BEGIN GENERATED REFERENCE: python -m toolbench.cli.cli_doc --write -->"
END = "<!-- END GENERATED REFERENCE -->"
DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
REGENERATE = "python -m toolbench.cli.cli_doc --write"


def _root() -> Any:
    import typer.main

    from toolbench.cli.app import app

    return typer.main.get_command(app)


def _walk(cmd: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    yield cmd, ctx
    sub = getattr(cmd, "commands", None)
    if not sub:
        return
    for name in cmd.list_commands(ctx):
        child = cmd.get_command(ctx, name)
        if child is None or child.hidden:
            continue
        yield from _walk(child, child.context_class(child, info_name=name, parent=ctx))


def _cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped, ``<id>`` kept from reading as HTML."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _value(param: Any, ctx: Any) -> str:
    if param.param_type_name == "argument":
        shown = param.display_type_rich(ctx=ctx)
        return f"`{shown.strip('<>')}`" if shown else ""
    if getattr(param, "is_flag", False):
        return "flag"
    return f"`{param.metavar.replace('|', chr(92) + '|')}`" if param.metavar else ""


def _default(param: Any) -> str:
    if param.required:
        return "required"
    d = param.default
    if d is None or d is False or d == [] or d == () or callable(d):
        return ""
    return f"`{d}`"


def _names(param: Any) -> str:
    if param.param_type_name == "argument":
        return f"`{param.name}`"
    return ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])


def _command(cmd: Any, ctx: Any) -> list[str]:
    path = ctx.command_path
    level = "##" if ctx.parent is None else "###"
    lines = [f"{level} `{path}`", ""]
    if cmd.help:
        lines += [inspect.cleandoc(cmd.help), ""]
    usage = " ".join([path, *cmd.collect_usage_pieces(ctx)])
    lines += ["```", usage, "```", ""]
    fill_choices(cmd.params)
    shown = [p for p in cmd.get_params(ctx) if not p.hidden and p.name != "help"]
    params = sorted(shown, key=lambda p: p.param_type_name != "argument")  # arguments first
    if params:
        lines += ["| name | value | default | description |", "|---|---|---|---|"]
        for p in params:
            help_text = _cell(getattr(p, "help", None) or "")
            row = [_names(p), _value(p, ctx), _default(p), help_text]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return lines


def render() -> str:
    """The generated reference: one section per command, in ``--help`` order."""
    root = _root()
    ctx = root.context_class(root, info_name="toolbench")
    lines: list[str] = []
    for cmd, cctx in _walk(root, ctx):
        lines += _command(cmd, cctx)
    return "\n".join(lines).rstrip() + "\n"


def splice(page: str, reference: str) -> str:
    """``page`` with the text between the markers replaced by ``reference``."""
    return generated_doc.splice(page, reference, BEGIN, END, DOC)


def main(argv: list[str] | None = None) -> int:
    return generated_doc.main(
        argv, prog="python -m toolbench.cli.cli_doc", doc=DOC,
        doc_help="the page (default docs/cli.md)",
        render=render, splice_into=splice, regenerate=REGENERATE,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
