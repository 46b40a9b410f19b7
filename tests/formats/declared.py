"""Each registered format's own test cases, as its class declares them
(``Format.test_cases``: a module imported here, by tests only). The shared tests iterate
the registry and these, rather than keeping per-format lists of their own, so a new
dialect's module, its test table and one entry point put it through the contract and
stream tests too."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from pydantic import BaseModel

from toolbench.formats.base import Requirements
from toolbench.formats.format_registry import format_class, format_names

Contract = tuple[type[BaseModel], Requirements]


def cases_module(name: str) -> ModuleType | None:
    """The module format ``name`` declares its test cases in (None: it declares none)."""
    where = format_class(name).test_cases
    return import_module(where) if where else None


def contract(name: str) -> Contract | None:
    """Format ``name``'s contract row (options model, requirements), None if undeclared."""
    module = cases_module(name)
    row = getattr(module, "CONTRACT", None) if module is not None else None
    return row if isinstance(row, tuple) else None


def replies(name: str) -> list[tuple[str, str]]:
    """``(source, reply)`` of every row of format ``name``'s parse tables: each ``*CASES``
    list of its test-case module whose rows are ``(id, reply text, ...)``."""
    module = cases_module(name)
    if module is None:
        return []
    out: list[tuple[str, str]] = []
    for attr in sorted(dir(module)):
        rows = getattr(module, attr)
        if not (attr.endswith("CASES") and isinstance(rows, list)):
            continue
        for row in rows:
            if isinstance(row, tuple) and len(row) > 1 and isinstance(row[1], str):
                out.append((f"{module.__name__}.{attr}:{row[0]}", row[1]))
    return out


def declaring() -> list[str]:
    """The registered formats that declare test cases."""
    return [n for n in format_names() if format_class(n).test_cases]
