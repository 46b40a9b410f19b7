"""``toolbench parse --format SPEC [FILE|-]``: run one format's parser on a saved reply.

Useful to see why a reply scored as it did: prints the full ParseResult (calls, status,
issues, stop signals, visible content) as JSON. ``--scenario`` passes the scenario's
tools so unknown tool names are flagged as they are in a run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command
from toolbench.cli.formats_cmd import ScenariosDirOpt, find_scenario
from toolbench.errors import UserError


def read_input(source: str) -> str:
    """The reply text from a file, or from stdin for ``-``."""
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise UserError(f"{path}: cannot read: {reason}") from None


def parse_cmd(
    fmt_name: Annotated[
        str,
        typer.Option(
            "-f",
            "--format",
            metavar="SPEC",
            help="Tool-call format whose parser to run (name[:option=value,...]).",
        ),
    ],
    source: Annotated[str, typer.Argument(help="File with the reply text, or - for stdin.")] = "-",
    scenario: Annotated[
        str | None,
        typer.Option("--scenario", metavar="ID", help="Scenario id whose tools to check against."),
    ] = None,
    scenarios_dir: ScenariosDirOpt = None,
) -> None:
    """Parse a model reply with a format and print the ParseResult as JSON."""
    from toolbench.formats.format_registry import get_format

    fmt = get_format(fmt_name)
    tools = find_scenario(scenario, scenarios_dir).tools if scenario else None
    text = read_input(source)
    typer.echo(fmt.parse(text, tools).model_dump_json(indent=2))


def register(app: typer.Typer) -> None:
    app.command("parse", cls=Command)(parse_cmd)
