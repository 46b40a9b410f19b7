"""Rendering the families' real chat templates (``../shared/templates``) in tests.

The environment mirrors how Hugging Face ``transformers`` renders chat templates (``tojson``
keeps key order and non-ASCII text, ``raise_exception``, ``strftime_now``), so the text a
test compares against is what an inference server would build from the same messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATES = Path(__file__).resolve().parents[2].parent / "shared" / "templates"


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise(message: str) -> None:
    raise ValueError(message)


def render(template: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    """Render ``template`` (a file name under the templates folder); skip if it is absent."""
    path = TEMPLATES / template
    if not path.is_file():
        pytest.skip(f"chat template not found: {path}")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, undefined=Undefined)
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    tpl = env.from_string(path.read_text(encoding="utf-8"))
    return tpl.render(
        messages=messages, bos_token="<s>", eos_token="</s>", add_generation_prompt=True, **kwargs
    )


__all__ = ["render"]
