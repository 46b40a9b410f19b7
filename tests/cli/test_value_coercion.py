"""Option values coerced without pydantic read exactly as typer's own coercion reads them.

Every parameter of every command is given a :class:`LazyCoercion`; each is fed absent
values, its default, and words, numbers and paths (existing or not) of every kind, and
must return what typer's pydantic-built coercion returns (value and type), or refuse
with the same message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer._click import Context
from typer._coercion import build_runtime_param

from toolbench.cli.app import app
from toolbench.cli.value_coercion import LazyCoercion

VALUES: tuple[Any, ...] = (
    None, "", "abc", "0", "7", "-3", "+3", " 3", "3 ", "1_0", "007", "-0", "3.5", "1e3",
    "9" * 19, "x y", "true", "-", "tests", "pyproject.toml", "no/such", 12, 0, -1, True,
    False, 2.5, (), ("a", "b"), ["c"],
)  # fmt: skip


def _params() -> Iterator[tuple[str, Any, Any]]:
    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")
        ctx = Context(cmd, info_name=path)
        for p in [*cmd.params, cmd.get_help_option(ctx)]:
            if p is not None:
                yield f"{path} {p.name}", p, ctx

    yield from walk(typer.main.get_command(app), "toolbench")


PARAMS = list(_params())


def _outcome(coercion: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        got = coercion.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the refusal itself is what is compared
        return ("refused", f"{type(exc).__name__}: {exc}")
    return ("value", (type(got), got))


def test_every_parameter_is_coerced_lazily() -> None:
    assert PARAMS
    for name, param, _ in PARAMS:
        assert isinstance(param._runtime_param, LazyCoercion), name


@pytest.mark.parametrize(("name", "param", "ctx"), PARAMS, ids=[n for n, _, _ in PARAMS])
def test_each_value_reads_as_typer_reads_it(name: str, param: Any, ctx: Any) -> None:
    lazy = LazyCoercion(param.type_descriptor)
    own = build_runtime_param(param.type_descriptor)
    for value in (*VALUES, param.default):
        assert _outcome(lazy, value, param, ctx) == _outcome(own, value, param, ctx), value
