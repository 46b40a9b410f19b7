"""Reading ``toolbench.toml`` (or another TOML file a user names): one reader, so every
table in it (models, environments, MCP servers, rate limits) is refused in the same words
when the file itself cannot be read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolbench.errors import UserError

CONFIG_FILE = Path("toolbench.toml")
"""toolbench's own settings file, read from the working directory (as ``gate`` reads
its ``[gate]`` table there)."""


def read_toml(path: Path) -> dict[str, Any]:
    """The file's data, empty when it is absent; one line naming the file when it cannot
    be read or is not TOML."""
    if not path.is_file():
        return {}
    # imported only when there is a file: checking options without one loads no parser
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read: not UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None
