"""``toolbench cassettes audit [DIR]``."""

from __future__ import annotations

from pathlib import Path

import typer

from toolbench.cli.conventions import Command, typer_app

cassettes_app = typer_app("cassettes", "Inspect recorded cassettes.")


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


def register(app: typer.Typer) -> None:
    app.add_typer(cassettes_app, name="cassettes")
