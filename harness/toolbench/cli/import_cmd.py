"""``toolbench import bfcl PATH -o DIR``: other benchmarks' data as scenario files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command, typer_app

import_app = typer_app("import", "Convert other benchmarks' data into scenario files.")


@import_app.command("bfcl", cls=Command)
def bfcl_cmd(
    path: Annotated[
        Path,
        typer.Argument(
            help="BFCL data folder (BFCL_v3_*.json or BFCL_v4_*.json, possible_answer/ beside)"
            " or one question file.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o", "--out", metavar="DIR", help="New (or empty) folder for the scenario files."
        ),
    ],
    skip_bad: Annotated[
        bool,
        typer.Option(
            "--skip-bad",
            help="Leave out entries the BFCL data gets wrong (a malformed line, an answer"
            " naming an unknown function), each printed with file, line and reason and"
            " counted; without it one such entry refuses the import.",
        ),
    ] = False,
) -> None:
    """Import BFCL's single-turn categories; print counts and every skipped entry."""
    from toolbench.bfcl.importer import import_bfcl

    typer.echo(import_bfcl(path, out, skip_bad).render())


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
