"""``toolbench scenarios list|validate``: look at and check scenario files.

``validate`` reports every broken file, one line each on stderr
(``error: <file>: <field path>: <message>``, prefixed like every other bad input) and
exits 2, so it can gate a CI job that edits
scenarios; on success it prints ``ok: N scenarios in M files``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolbench.cli.conventions import Command, typer_app

scenarios_app = typer_app("scenarios", "List and validate scenario files.")

PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(help="Scenario files or directories (default: the bundled suite)."),
]


@scenarios_app.command("list", cls=Command)
def list_cmd(paths: PathsArg = None) -> None:
    """Print each scenario's id, kind, tool count and tags, then the count per tag."""
    from toolbench.scenarios.loader import load_scenarios, tag_counts

    scenarios = load_scenarios(paths or None)
    rows = [(sc.id, sc.expect.kind, str(len(sc.tools)), ",".join(sc.tags)) for sc in scenarios]
    header = ("ID", "KIND", "TOOLS", "TAGS")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        typer.echo("  ".join([*cells, row[3]]).rstrip())
    counts = tag_counts(scenarios)
    if counts:
        width = max(len("TAG"), *map(len, counts))
        typer.echo("")
        typer.echo(f"{'TAG'.ljust(width)}  SCENARIOS")
        for tag, n in counts.items():
            typer.echo(f"{tag.ljust(width)}  {n}")
        typer.echo("")
    typer.echo(f"{len(scenarios)} scenario" + ("" if len(scenarios) == 1 else "s"))


@scenarios_app.command("validate", cls=Command)
def validate_cmd(paths: PathsArg = None) -> None:
    """Check scenario files against the schema; exit 2 listing every error."""
    from toolbench.environments import scenario_problems
    from toolbench.scenarios.loader import (
        bundled_dir,
        load_scenarios,
        scenario_files,
        validate_paths,
    )

    targets: list[Path] = list(paths) if paths else [bundled_dir()]
    errors = validate_paths(targets)
    if errors:
        for line in errors:
            print(f"error: {line}", file=sys.stderr)
        raise typer.Exit(code=2)
    files = scenario_files(targets)
    if not files:
        where = ", ".join(map(str, targets))
        print(f"error: {where}: no scenario files found", file=sys.stderr)
        raise typer.Exit(code=2)
    scenarios = load_scenarios(targets)
    unknown = scenario_problems(scenarios)  # environments nobody registered
    if unknown:
        for line in unknown:
            print(f"error: {line}", file=sys.stderr)
        raise typer.Exit(code=2)
    typer.echo(f"ok: {len(scenarios)} scenarios in {len(files)} files")


def register(app: typer.Typer) -> None:
    app.add_typer(scenarios_app, name="scenarios")
