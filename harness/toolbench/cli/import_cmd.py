"""``toolbench import bfcl PATH -o DIR``: other benchmarks' data as scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command, typer_app
from toolbench.errors import UserError

import_app = typer_app("import", "Convert other benchmarks' data into scenario files.")


@import_app.command("bfcl", cls=Command)
def bfcl_cmd(
    out: Annotated[
        Path,
        typer.Option(
            "-o", "--out", metavar="DIR", help="New (or empty) folder for the scenario files."
        ),
    ],
    path: Annotated[
        Path | None,
        typer.Argument(
            help="BFCL data folder (BFCL_v3_*.json or BFCL_v4_*.json, possible_answer/ beside)"
            " or one question file; with --multi-turn, a bfcl-eval wheel or an unpacked or"
            " installed bfcl_eval folder (default: the cached copy, else fetched).",
        ),
    ] = None,
    skip_bad: Annotated[
        bool,
        typer.Option(
            "--skip-bad",
            help="Leave out entries the BFCL data gets wrong (a malformed line, an answer"
            " naming an unknown function), each printed with file, line and reason and"
            " counted; without it one such entry refuses the import.",
        ),
    ] = False,
    multi_turn: Annotated[
        bool,
        typer.Option(
            "--multi-turn",
            help="Import BFCL v4's multi-turn categories (base, miss_func, miss_param,"
            " long_context) as loop scenarios run against BFCL's own backends, from the"
            " bfcl-eval wheel without its dependencies (docs/environments.md).",
        ),
    ] = False,
) -> None:
    """Import BFCL's single-turn categories (or, with --multi-turn, its multi-turn ones);
    print counts and every skipped entry."""
    from toolbench.bfcl.importer import import_bfcl
    from toolbench.bfcl.multi_turn import import_multi_turn

    if multi_turn:
        typer.echo(import_multi_turn(path, out, skip_bad).render())
        return
    if path is None:
        raise UserError("import bfcl: give the BFCL data folder (or --multi-turn)")
    typer.echo(import_bfcl(path, out, skip_bad).render())


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
