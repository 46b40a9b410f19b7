"""The ``toolbench`` command line.

Commands are thin: parse options, call one library function, print. Library errors are
typed; here, at the edge, a :class:`~toolbench.errors.UserError` becomes one line on
stderr and exit code 2, with no traceback. Command modules must not import LiteLLM at
import time: ``toolbench --help`` stays fast.

Typer 0.29 and later parse the command line with their own bundled copy of click
(``typer._click``), whose exceptions are not plain click's: :mod:`toolbench.cli.clicks`
collects the exception classes of whichever copies are importable, so a usage error of
either becomes one line and exit 2.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from toolbench import __version__
from toolbench.cli.clicks import aborts, click_errors, help_text, usage_line
from toolbench.cli.conventions import Group
from toolbench.errors import EXIT_STORAGE, StorageError, UserError

app = typer.Typer(
    name="toolbench",
    help="Measure which tool-calling format works for which model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: rich is not imported (cli/conventions.py)
    cls=Group,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"toolbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Measure which tool-calling format works for which model."""


# Each module defines ``register(app)``; one module per command group.
_COMMAND_MODULES = (
    "toolbench.cli.scenarios_cmd",
    "toolbench.cli.formats_cmd",
    "toolbench.cli.parse_cmd",
    "toolbench.cli.run_cmd",
    "toolbench.cli.cassettes_cmd",
    "toolbench.cli.report_cmd",
    "toolbench.cli.compare_cmd",
    "toolbench.cli.merge_cmd",
    "toolbench.cli.import_cmd",
)

for _mod in _COMMAND_MODULES:
    try:
        module = importlib.import_module(_mod)
    except ModuleNotFoundError as _exc:  # a command group not written yet
        if _exc.name != _mod:
            raise
        continue
    module.register(app)


def fail(message: str) -> None:
    """Print one error line to stderr (used by :func:`run_cli`).

    Redacted like every byte toolbench writes: an error may quote an option that holds a
    credential (``--api-base https://user:pw@host``), and CI keeps its logs.
    """
    # Imported when an error is printed: its regexes are no part of ``--help``'s start-up.
    from toolbench.redaction import redact_error

    print(f"error: {' '.join(redact_error(message).split())}", file=sys.stderr)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting (tests call this)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args=args, prog_name="toolbench", standalone_mode=False)
    except UserError as exc:
        fail(str(exc))
        return 2
    except StorageError as exc:  # a run that could no longer keep what it wrote
        fail(str(exc))
        return EXIT_STORAGE
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    except Exception as exc:
        if isinstance(exc, click_errors()):
            line = usage_line(exc)
            if line is None:  # no arguments at all: the help text (already shown) is the answer
                text = help_text(exc)
                if text:
                    print(text, file=sys.stderr)
                return 2
            fail(line)
            return 2
        if isinstance(exc, aborts()):
            fail("aborted")
            return 130
        raise
    return rv if isinstance(rv, int) else 0


def main() -> None:
    sys.exit(run_cli())
