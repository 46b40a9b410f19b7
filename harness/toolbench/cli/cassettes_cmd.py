"""``toolbench cassettes audit [DIR]`` and ``toolbench cassettes migrate DIR``."""

from __future__ import annotations

from pathlib import Path

import typer

from toolbench.cli.conventions import Command, typer_app

cassettes_app = typer_app("cassettes", "Inspect and convert recorded cassettes.")


@cassettes_app.command("audit", cls=Command)
def audit_cmd(
    directory: Path = typer.Argument(Path("cassettes"), help="Cassette directory or file."),
) -> None:
    """Scan cassettes for secrets; exit 1 when anything is found."""
    from toolbench.runner.audit import audit

    findings = audit(directory)
    for f in findings:
        print(f"{f.path}:{f.line}: {f.kind}")
    if findings:
        print(f"{len(findings)} possible secret(s) found")
        raise typer.Exit(1)
    print(f"ok: no secrets found in {directory}")


@cassettes_app.command("migrate", cls=Command)
def migrate_cmd(
    directory: Path = typer.Argument(..., help="Cassette directory (or one old-layout file)."),
) -> None:
    """Convert old-layout cassettes (vcrpy YAML, .sse.json, JSON of an earlier version) to
    one JSON cassette per trial of this version, removing each old file once its new one
    is written; exit 1 when any could not be."""
    from toolbench.cassettes.migrate import migrate
    from toolbench.errors import UserError

    if not directory.exists():
        raise UserError(f"cassettes migrate: {directory}: no such file or directory")
    done = migrate(directory)
    for path, why in done.failed:
        print(f"{path}: not converted: {why}")
    print(f"migrated {len(done.converted)} cassette(s) in {directory}"
          + (f"; {len(done.failed)} not converted" if done.failed else ""))  # fmt: skip
    if done.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(cassettes_app, name="cassettes")
