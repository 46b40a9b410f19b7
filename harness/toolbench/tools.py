"""Tool definitions as toolbench holds them: a name, a description, JSON Schema parameters.

Scenario files may write tools in OpenAI's ``{"type": "function", "function": {...}}``
shape or flat (BFCL style); both normalise to :class:`ToolDef`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolDef(BaseModel):
    """One function a model may call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def openai(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this function (what native providers receive)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
