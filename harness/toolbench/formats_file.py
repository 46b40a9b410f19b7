"""The file that fixes each model's format: ``recommend --to yaml`` writes it, ``run
--formats-from FILE`` reads it: ``{version: 1, models: {MODEL: {tool_format: SPEC}}}``.

A leaf, so that the report (which writes it from a stored run) and the run (which reads
it) share one shape without the report importing the formats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolbench.errors import UserError

FORMATS_FILE_VERSION: Literal[1] = 1


class ModelChoice(BaseModel):
    """One model's entry: the format spec to use."""

    model_config = ConfigDict(extra="forbid")

    tool_format: str = Field(min_length=1)


class FormatsFile(BaseModel):
    """``recommend --to yaml``'s file: ``{version: 1, models: {MODEL: {tool_format: SPEC}}}``."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = FORMATS_FILE_VERSION
    models: dict[str, ModelChoice] = Field(min_length=1)

    def formats(self) -> dict[str, str]:
        return {m: c.tool_format for m, c in self.models.items()}

    def dump(self) -> str:
        return yaml.safe_dump(self.model_dump(), sort_keys=True, default_flow_style=False)


def read_formats_file(path: Path) -> FormatsFile:
    """Read and check a formats file; any problem is one :class:`UserError` naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise UserError(f"--formats-from: {path}: cannot read: {why}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UserError(f"--formats-from: {path}: not YAML{where}") from None
    if not isinstance(data, dict):
        raise UserError(f"--formats-from: {path}: expected a mapping with version and models")
    version = data.get("version")
    if version != FORMATS_FILE_VERSION:
        raise UserError(
            f"--formats-from: {path}: version: {version!r} is not a formats-file version "
            f"(this toolbench reads version {FORMATS_FILE_VERSION})"
        )
    try:
        return FormatsFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "file"
        raise UserError(f"--formats-from: {path}: {loc}: {err['msg']}") from None
