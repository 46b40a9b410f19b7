"""The click exception classes of every click copy the installed typer may use.

Typer up to 0.2x parses with plain ``click``; typer 0.29 bundles its own copy as
``typer._click`` (plain click may still be installed by other packages, unused by typer).
Catching only one copy's classes lets the other's usage errors escape as a traceback, so
the CLI edge catches the union of the copies. Only copies already imported are looked
at: an exception of a copy never imported cannot have been raised, and importing plain
click to catch nothing was a measurable part of a usage error's start-up.
"""

from __future__ import annotations

import sys
from typing import Any

_CLICK_MODULES = ("typer._click.exceptions", "click.exceptions")
_ABORT_MODULES = ("typer.exceptions", "typer._click.exceptions", "click.exceptions")


def _classes(names: tuple[str, ...], attr: str) -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for name in names:
        cls = getattr(sys.modules.get(name), attr, None)
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls not in found:
            found.append(cls)
    return tuple(found)


def click_errors() -> tuple[type[BaseException], ...]:
    """Every loaded ``ClickException`` class: usage errors, bad parameters, unopenable
    files."""
    return _classes(_CLICK_MODULES, "ClickException")


def aborts() -> tuple[type[BaseException], ...]:
    """Ctrl-C at a prompt, or ``typer.Abort`` raised by a command."""
    return _classes(_ABORT_MODULES, "Abort")


def usage_line(exc: Any) -> str | None:
    """The one line to print for a click exception (``None``: print the help text).

    The command path and a pointer to its ``--help`` are added when click knows them, so
    ``toolbench report`` without its RUN argument says which command wanted it.
    """
    if isinstance(exc, _classes(_CLICK_MODULES, "NoArgsIsHelpError")):
        return None  # a group called with no arguments: click raises its help text
    message = " ".join(str(exc.format_message()).split())
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) if ctx is not None else None
    if isinstance(path, str) and path:
        return f"{path}: {message} (see '{path} --help')"
    return message


def help_text(exc: Any) -> str:
    """The help text a no-arguments error carries (empty when rich already printed it)."""
    return str(exc.format_message()).strip()
