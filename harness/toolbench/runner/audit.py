"""``toolbench cassettes audit``: scan cassettes for anything shaped like a secret."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolbench.errors import UserError
from toolbench.runner.secrets import SECRET_SHAPES, secret_values


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    kind: str


def audit(root: Path) -> list[Finding]:
    """Every secret-shaped string (and every current ``*_API_KEY``/``*_TOKEN`` value)."""
    if not root.exists():
        raise UserError(f"{root}: no such directory")
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    values = secret_values()
    found: list[Finding] = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for kind, pattern in SECRET_SHAPES:
                if pattern.search(line):
                    found.append(Finding(f, n, kind))
            found.extend(Finding(f, n, "environment secret value") for v in values if v in line)
    return found
