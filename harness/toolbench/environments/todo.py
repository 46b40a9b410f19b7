"""``todo``: a small task list, toolbench's own example environment.

It is what a user's own environment looks like (the public methods are the tools), and
what the tests and the embedded default's loop scenarios run against. Its initial state
is ``{"tasks": [{"title": str, "done": bool}, ...]}``; a task's id is its position, from 1.
"""

from __future__ import annotations

from typing import Any

from toolbench.environments.env_faults import StateInvalid
from toolbench.environments.environment import Environment, EnvironmentKind, JsonObject


class Todo(Environment):
    """A task list: add, complete, list."""

    def load(self, state: JsonObject) -> None:
        unknown = set(state) - {"tasks"}
        if unknown:
            raise StateInvalid(f"todo: unknown state key(s) {sorted(unknown)}")
        tasks = state.get("tasks", [])
        if not isinstance(tasks, list) or not all(
            isinstance(t, dict)
            and set(t) <= {"title", "done"}
            and isinstance(t.get("title"), str)
            and isinstance(t.get("done", False), bool)
            for t in tasks
        ):
            raise StateInvalid("todo: 'tasks' must be a list of {title: str, done: bool}")
        self.tasks: list[dict[str, Any]] = [
            {"title": t["title"], "done": bool(t.get("done", False))} for t in tasks
        ]

    def snapshot(self) -> JsonObject:
        return {"tasks": [dict(t) for t in self.tasks]}

    def add_task(self, title: str) -> JsonObject:
        """Add a task; its id."""
        if not title.strip():
            raise ValueError("a task needs a title")
        self.tasks.append({"title": title, "done": False})
        return {"id": len(self.tasks)}

    def complete_task(self, id: int) -> JsonObject:
        """Mark task ``id`` done."""
        if not isinstance(id, int) or not 1 <= id <= len(self.tasks):
            raise KeyError(f"no task {id}")
        self.tasks[id - 1]["done"] = True
        return {"id": id, "done": True}

    def list_tasks(self, done: bool | None = None) -> list[JsonObject]:
        """The tasks with their ids (only done or only open ones when ``done`` is given)."""
        return [
            {"id": i, **t} for i, t in enumerate(self.tasks, 1) if done is None or t["done"] == done
        ]


KIND = EnvironmentKind("todo", Todo, "a task list: add_task, complete_task, list_tasks")
