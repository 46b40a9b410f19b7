"""Environments written for the tests: ones that misbehave in every way a tool can."""

from __future__ import annotations

import threading
from typing import Any

from toolbench.environments import Environment, EnvironmentKind, JsonObject, StateInvalid

RELEASE = threading.Event()
"""Set to let a hung tool return (the tests set it when done)."""


class Faulty(Environment):
    """A counter whose tools fail: raise, return what JSON cannot hold, hang."""

    def load(self, state: JsonObject) -> None:
        if not isinstance(state.get("count", 0), int):
            raise StateInvalid("faulty: 'count' must be an integer")
        self.count: int = state.get("count", 0)

    def snapshot(self) -> JsonObject:
        return {"count": self.count}

    def bump(self, by: int = 1) -> int:
        self.count += by
        return self.count

    def explode(self) -> None:
        raise RuntimeError("the tool blew up")

    def unjsonable(self) -> Any:
        return {1, 2}

    def nan(self) -> float:
        return float("nan")

    def hang(self) -> None:
        RELEASE.wait(30)


class Picky(Environment):
    """An environment whose constructor refuses state with a plain exception."""

    def load(self, state: JsonObject) -> None:
        self.n = int(state["n"])  # KeyError / ValueError: the environment's own check

    def snapshot(self) -> JsonObject:
        return {"n": self.n}

    def get(self) -> int:
        return self.n


FAULTY = EnvironmentKind("faulty", Faulty)
PICKY = EnvironmentKind("picky", Picky)
