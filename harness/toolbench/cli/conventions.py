"""What every ``toolbench`` command shares: help that shows what it says, and one
vocabulary (docs/cli.md, "Conventions").

Typer renders help through rich markup, which eats anything that looks like a tag
(``"a [gate] table"`` showed as ``"a  table"``) and labels every flag ``<bool>``. Help
texts here are plain text: :class:`Command` and :class:`Group` escape them just before
rendering (so the reference generator reads them unescaped) and give flags no type label.
Every option that takes a value declares a real metavar (``METRIC=VALUE``,
``html|md|junit``); ``tests/cli/test_conventions.py`` holds every command to that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, get_args

import typer
from typer.core import TyperCommand, TyperGroup

_ESCAPED = "_toolbench_escaped"


def choices(values: Sequence[str]) -> str:
    """The metavar of an option with fixed choices: ``html|md|junit``."""
    return "|".join(values)


def _fix_type_labels(params: Iterable[Any]) -> None:
    """No type label for flags (typer 0.29 shows ``<bool>``), and the element type for a
    variadic argument (``paths... <path>``, not ``<list[Path]>``)."""
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""
        desc = getattr(p, "type_descriptor", None)
        if getattr(p, "param_type_name", "") == "argument" and desc is not None and desc.is_list:
            inner = get_args(desc.annotation)
            name = desc.path_type if desc.is_path else (inner[0].__name__ if inner else "str")
            label = name.lower()
            p.display_type_rich = lambda ctx, _label=label: f"<{_label}>"


def _escape(text: str | None) -> str | None:
    from rich.markup import escape

    return None if text is None else escape(text)


def escape_help(cmd: Any) -> None:
    """Escape rich markup in a command's texts, its parameters' and its subcommands' (once)."""
    if getattr(cmd, _ESCAPED, False):
        return
    setattr(cmd, _ESCAPED, True)
    cmd.help = _escape(cmd.help)
    cmd.short_help = _escape(cmd.short_help)
    cmd.epilog = _escape(cmd.epilog)
    for p in cmd.params:
        if getattr(p, "help", None):
            p.help = _escape(p.help)
    for sub in getattr(cmd, "commands", {}).values():
        escape_help(sub)


class _HelpConventions:
    """Help that shows its texts as written and flags without a type (mixed in before
    typer's command and group classes, so ``super()`` reaches them)."""

    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _fix_type_labels(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        opt = super().get_help_option(ctx)  # type: ignore[misc]
        _fix_type_labels([opt] if opt is not None else [])
        return opt

    def format_help(self, ctx: Any, formatter: Any) -> None:
        escape_help(self)
        super().format_help(ctx, formatter)  # type: ignore[misc]


class Command(_HelpConventions, TyperCommand):
    """A typer command with toolbench's help conventions."""


class Group(_HelpConventions, TyperGroup):
    """A typer group with the same help conventions as :class:`Command`."""


def typer_app(name: str, help: str) -> typer.Typer:
    """A sub-command group built with the conventions above."""
    return typer.Typer(name=name, help=help, no_args_is_help=True, add_completion=False, cls=Group)
