"""The ``toolbench`` command line.

Commands are thin: parse options, call one library function, print. Library errors are
typed; here, at the edge, a :class:`~toolbench.errors.UserError` becomes one line on
stderr and exit code 2, with no traceback. Command modules must not import LiteLLM at
import time: ``toolbench --help`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click
import typer

from toolbench.errors import UserError

app = typer.Typer(
    name="toolbench",
    help="Measure which tool-calling format works for which model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines ``register(app)``; one module per command group.
_COMMAND_MODULES = (
    "toolbench.cli.scenarios_cmd",
    "toolbench.cli.formats_cmd",
    "toolbench.cli.parse_cmd",
    "toolbench.cli.run_cmd",
    "toolbench.cli.cassettes_cmd",
    "toolbench.cli.report_cmd",
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
    """Print one error line to stderr (used by :func:`run_cli`)."""
    print(f"error: {message}", file=sys.stderr)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting (tests call this)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args=args, prog_name="toolbench", standalone_mode=False)
    except UserError as exc:
        fail(str(exc))
        return 2
    except click.exceptions.UsageError as exc:
        fail(exc.format_message())
        return 2
    except click.exceptions.ClickException as exc:
        fail(exc.format_message())
        return exc.exit_code
    except click.exceptions.Abort:
        fail("aborted")
        return 130
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    return rv if isinstance(rv, int) else 0


def main() -> None:
    sys.exit(run_cli())
