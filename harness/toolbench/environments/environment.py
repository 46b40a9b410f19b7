"""What an environment is: an object whose public methods are the tools, built from a
scenario's initial state, whose state can be snapshotted as JSON.

A scenario file only names an environment and gives its initial state as data; the
environment's code comes from a registered Python class (an entry point in the
``toolbench.environments`` group, :mod:`toolbench.environments.env_registry`), never from the
scenario. The engine calls :meth:`Environment.invoke` through
:func:`toolbench.environments.execute.run_call`, which bounds its time and turns
whatever goes wrong into a tool error the model is told about.

Writing one::

    class Todo(Environment):
        def load(self, state: dict[str, Any]) -> None:
            self.tasks = list(state.get("tasks", []))

        def snapshot(self) -> dict[str, Any]:
            return {"tasks": list(self.tasks)}

        def add_task(self, title: str) -> dict[str, Any]:
            self.tasks.append(title)
            return {"id": len(self.tasks)}
"""

from __future__ import annotations

import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

JsonObject = dict[str, Any]
"""A JSON object (what a snapshot and an initial state are)."""


class Environment(ABC):
    """Tools that run against state. Subclasses define :meth:`load`, :meth:`snapshot`
    and the tools (their public methods); the rest has defaults."""

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.load(dict(state))

    @abstractmethod
    def load(self, state: JsonObject) -> None:
        """Take the scenario's initial state; raise
        :class:`~toolbench.environments.env_faults.StateInvalid` when it does not fit."""

    @abstractmethod
    def snapshot(self) -> JsonObject:
        """The state now, as JSON data (compared after each turn, stored on the trial)."""

    def close(self) -> None:  # noqa: B027 - optional: most environments hold nothing
        """Release what the environment holds (a server process, a connection) when its
        trial ends, however it ends; called once. Default: nothing to release."""

    def tool_names(self) -> frozenset[str]:
        """The tools: public methods a subclass defines (not this base's own)."""
        own = set(dir(Environment))
        return frozenset(
            name
            for name, member in inspect.getmembers(type(self), inspect.isfunction)
            if not name.startswith("_") and name not in own
        )

    def invoke(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call tool ``name`` with keyword ``arguments``; whatever it raises is the tool's."""
        method: Callable[..., Any] = getattr(self, name)
        return method(**arguments)

    def result_text(self, value: Any) -> str:
        """The text a tool's return value is fed back as: a string as it is, anything
        else as JSON (``ValueError``/``TypeError`` when JSON cannot hold it)."""
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    def error_text(self, code: str, message: str, exc: BaseException | None = None) -> str:
        """The text a tool error is fed back as (the scripted results' shape); ``exc`` is
        what the tool raised, for an environment that words it its own way."""
        return json.dumps({"error": message}, ensure_ascii=False)


@dataclass(frozen=True)
class EnvironmentKind:
    """A registered environment: its name and how to build one from an initial state."""

    name: str
    build: Callable[[Mapping[str, Any]], Environment]
    description: str = ""
