"""Provider kinds by name, and which kind serves a model string.

A model string names its kind by a prefix (``local/`` for the embedded models); every
other model goes to LiteLLM, which knows the providers by their own prefixes. A new
kind is one module with a :class:`~toolbench.providers.base.ModelAPI` class and one
entry in :data:`KINDS` (and, if it claims model strings, one in :data:`PREFIXES`).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from toolbench.providers.base import ModelAPI, ProviderSettings

KINDS: dict[str, str] = {
    "litellm": "toolbench.providers.litellm_api:LiteLLMAPI",
    "local": "toolbench.providers.local_api:LocalAPI",
}
"""Kind name -> ``module:Class`` (imported on first use: LiteLLM takes seconds)."""
PREFIXES: dict[str, str] = {"local/": "local"}
"""Model-string prefix -> kind; a model with none of them is LiteLLM's."""
DEFAULT_KIND = "litellm"


def kind_of(model: str) -> str:
    """The kind that serves ``model``."""
    return next((k for p, k in PREFIXES.items() if model.startswith(p)), DEFAULT_KIND)


def api_class(kind: str) -> Callable[[ProviderSettings], ModelAPI]:
    """The class of provider kind ``kind`` (a ``KeyError`` for an unknown kind: a bug)."""
    module, _, attr = KINDS[kind].partition(":")
    cls: Callable[[ProviderSettings], ModelAPI] = getattr(import_module(module), attr)
    return cls


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
