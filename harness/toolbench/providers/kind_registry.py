"""Provider kinds by name, all through the entry-point group ``toolbench.providers``,
and which kind serves a model string.

The built-in kinds are listed in toolbench's own ``pyproject.toml`` under that group,
exactly as a plugin lists its own: each entry point names a class implementing
:class:`~toolbench.providers.model_api.ModelAPI` (``module:Class``), made with the run's
:class:`~toolbench.providers.model_api.ProviderSettings`. A kind claims model strings by
its ``prefixes`` (``local/``); a model no kind claims goes to :data:`DEFAULT_KIND`
(LiteLLM, which knows the providers by their own prefixes). Loading follows
:mod:`toolbench.registry`: a plugin that fails to load is named in one warning line and
left out; the other kinds still work. Kinds are imported on first use, never LiteLLM
itself (the kind's module defers it: it is slow to import).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeGuard

from toolbench.providers.model_api import ModelAPI, ProviderSettings
from toolbench.registry import Kind as Holds
from toolbench.registry import Registry

ENTRY_POINT_GROUP = "toolbench.providers"
DEFAULT_KIND = "litellm"

Kind = Callable[[ProviderSettings], ModelAPI]


def _is_kind(obj: object) -> TypeGuard[Kind]:
    """A provider kind is a class with a ``send`` and a ``name`` (ModelAPI is a Protocol,
    so the class is checked by what it has)."""
    return (
        isinstance(obj, type)
        and callable(getattr(obj, "send", None))
        and isinstance(getattr(obj, "name", None), str)
    )


def _name_of(kind: Kind) -> str:
    name: str = getattr(kind, "name")  # noqa: B009 - checked by _is_kind, unknown to mypy
    return name


KINDS: Registry[Kind] = Registry(
    ENTRY_POINT_GROUP, Holds(_is_kind, "provider kind class (with send and name)"),
    "provider kind", _name_of,
)  # fmt: skip
"""Every provider kind class by its ``name``."""


class StaleInstallError(RuntimeError):
    """toolbench's installed metadata lacks its own provider kinds (an editable install
    made before they were registered by entry point): reinstall it."""


def kinds() -> dict[str, Kind]:
    """Every registered kind by name (loaded once)."""
    found = {name: KINDS.get(name) for name in KINDS.names()}
    if DEFAULT_KIND not in found:
        raise StaleInstallError(
            f"provider kind {DEFAULT_KIND} is not registered: the installed "
            "toolbench metadata is older than its pyproject.toml; run pip install -e ."
        )
    return found


def kind_of(model: str) -> str:
    """The kind that serves ``model``: the kind claiming the longest prefix of it."""
    claims = [
        (len(p), name)
        for name, cls in kinds().items()
        for p in getattr(cls, "prefixes", ())
        if model.startswith(p)
    ]
    return max(claims)[1] if claims else DEFAULT_KIND


def api_class(kind: str) -> Kind:
    """The class of provider kind ``kind`` (a ``KeyError`` for an unknown kind: a bug)."""
    return kinds()[kind]


class Providers:
    """The provider kinds of one run, made on first use and closed together."""

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._apis: dict[str, ModelAPI] = {}

    def for_model(self, model: str) -> ModelAPI:
        kind = kind_of(model)
        api = self._apis.get(kind)
        if api is None:
            api = self._apis[kind] = api_class(kind)(self.settings)
        return api

    def close(self) -> None:
        for api in self._apis.values():
            api.close()
        self._apis.clear()
