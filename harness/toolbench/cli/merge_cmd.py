"""``toolbench merge``: several runs of one matrix into one run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command


def merge(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Two or more run directories of the same matrix (every shard of a "
            "run --shard K/N)."
        ),
    ],
    out: Annotated[
        Path, typer.Option("-o", "--out", metavar="DIR", help="New run directory to write.")
    ],
) -> None:
    """Merge runs or shards of one matrix into a new run, each trial once (an ok trial wins)."""
    from toolbench.store.merge import merge_runs

    typer.echo(merge_runs(runs, out).render())


def register(app: typer.Typer) -> None:
    app.command("merge", cls=Command)(merge)
