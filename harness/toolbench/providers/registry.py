"""Provider kinds by name, all through the entry-point group ``toolbench.providers``,
and which kind serves a model string.

The built-in kinds are listed in toolbench's own ``pyproject.toml`` under that group,
exactly as a plugin lists its own: each entry point names a class implementing
:class:`~toolbench.providers.base.ModelAPI` (``module:Class``), made with the run's
:class:`~toolbench.providers.base.ProviderSettings`. A kind claims model strings by
its ``prefixes`` (``local/``); a model no kind claims goes to :data:`DEFAULT_KIND`
(LiteLLM, which knows the providers by their own prefixes). A plugin that fails to
load is named in one warning line and skipped; the other kinds still work. Kinds are
imported on first use, never LiteLLM itself (it takes seconds).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points

from toolbench.providers.base import ModelAPI, ProviderSettings

ENTRY_POINT_GROUP = "toolbench.providers"
DEFAULT_KIND = "litellm"
BUILTIN_KINDS = ("litellm", "local")
"""The kinds toolbench's own ``pyproject.toml`` registers (a test keeps them equal)."""

log = logging.getLogger("toolbench.providers")

Kind = Callable[[ProviderSettings], ModelAPI]
_KINDS: dict[str, Kind] = {}


class StaleInstallError(RuntimeError):
    """toolbench's installed metadata lacks its own provider kinds (an editable install
    made before they were registered by entry point): reinstall it."""


def _load(value: str) -> Kind:
    module, _, attr = value.partition(":")
    obj: object = import_module(module.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and callable(getattr(obj, "send", None))):
        raise TypeError(f"{value} is not a provider kind class (no send)")
    kind: Kind = obj
    return kind


def kinds() -> dict[str, Kind]:
    """Every registered kind by name (loaded once)."""
    if _KINDS:
        return _KINDS
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _KINDS:
            continue
        try:
            _KINDS[ep.name] = _load(ep.value)
        except Exception as exc:  # a broken plugin must not take the other kinds down
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            log.warning("warning: provider kind '%s' (%s) failed to load and is skipped: %s",
                        ep.name, ep.value, why.rstrip(": "))  # fmt: skip
    missing = [k for k in BUILTIN_KINDS if k not in _KINDS]
    if missing:
        _KINDS.clear()
        raise StaleInstallError(
            f"provider kinds {', '.join(missing)} are not registered: the installed "
            "toolbench metadata is older than its pyproject.toml; run pip install -e ."
        )
    return _KINDS


def reload_kinds() -> None:
    """Forget what was loaded and read the entry points again (tests, plugins)."""
    _KINDS.clear()


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
