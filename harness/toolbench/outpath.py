"""Where a command writes a file the user named (``report -o``, ``export -o``, ``rescore -o``).

A bad output path is the user's input: it fails before anything is rendered, with one
line naming the path and the reason ("afile is not a directory"), never with the
``FileExistsError`` that ``mkdir(parents=True)`` raises for a parent that is a file.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.errors import UserError


def prepare_file(path: Path) -> None:
    """Make ``path``'s parent folders, or say in one line why ``path`` cannot be written."""
    if path.is_dir():
        raise UserError(f"{path}: cannot write: it is a directory")
    prepare_dir(path.parent, shown=path)


def prepare_dir(folder: Path, shown: Path | None = None) -> None:
    """Make ``folder`` (and its parents), or raise a one-line :class:`UserError`."""
    label = shown if shown is not None else folder
    for parent in [*reversed(folder.parents), folder]:
        if parent.exists() and not parent.is_dir():
            raise UserError(f"{label}: cannot write: {parent} is not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{label}: cannot write: {exc.strerror}") from None
