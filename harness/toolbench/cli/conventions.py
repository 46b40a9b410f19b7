"""What every ``toolbench`` command shares: help that shows what it says, and one
vocabulary (docs/cli.md, "Conventions").

Help is click's plain text, not typer's rich help (``rich_markup_mode=None``): rich is
not imported for ``--help`` or a usage error (it was most of their start-up), and rich
markup ate anything that looked like a tag (``"a [gate] table"`` showed as
``"a  table"``). Flags get no type label (typer labels them ``<bool>``). Every option
that takes a value declares a real metavar (``METRIC=VALUE``, ``html|md|junit``);
``tests/cli/test_conventions.py`` holds every command to that. A metavar listing a
registry's names is :class:`RegistryChoices`: the registry is read when help is shown,
not for every command line (reading it scans the installed entry points).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, get_args

import typer
from typer.core import TyperCommand, TyperGroup

from toolbench.cli.value_coercion import coerce_lazily

_ESCAPED = "_toolbench_escaped"


def choices(values: Sequence[str]) -> str:
    """The metavar of an option with fixed choices: ``html|md|junit``."""
    return "|".join(values)


def _fix_type_labels(params: Iterable[Any]) -> None:
    """No type label for flags (typer 0.29 shows ``<bool>``), and the element type for a
    variadic argument (``paths... <path>``, not ``<list[Path]>``)."""
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""
        desc = getattr(p, "type_descriptor", None)
        if getattr(p, "param_type_name", "") == "argument" and desc is not None and desc.is_list:
            inner = get_args(desc.annotation)
            name = desc.path_type if desc.is_path else (inner[0].__name__ if inner else "str")
            label = name.lower()
            p.display_type_rich = lambda ctx, _label=label: f"<{_label}>"


class RegistryChoices(str):
    """The metavar of an option whose choices are a registry's names (``html|md|...``),
    filled in from ``names`` when help is shown (:func:`fill_choices`); until then it
    reads as its placeholder."""

    names: Callable[[], Sequence[str]]

    def __new__(cls, placeholder: str, names: Callable[[], Sequence[str]]) -> RegistryChoices:
        made = super().__new__(cls, placeholder)
        made.names = names
        return made


def fill_choices(params: Iterable[Any]) -> None:
    """Replace each :class:`RegistryChoices` metavar by the registry's names."""
    for p in params:
        if isinstance(getattr(p, "metavar", None), RegistryChoices):
            p.metavar = choices(p.metavar.names())


class _HelpConventions:
    """Help that shows its texts as written and flags without a type, and values that
    need no pydantic coerced without it (:mod:`toolbench.cli.value_coercion`); mixed in
    before typer's command and group classes, so ``super()`` reaches them."""

    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _fix_type_labels(self.params)
        coerce_lazily(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        opt = super().get_help_option(ctx)  # type: ignore[misc]
        _fix_type_labels([opt] if opt is not None else [])
        coerce_lazily([opt] if opt is not None else [])
        return opt

    def format_help(self, ctx: Any, formatter: Any) -> None:
        fill_choices(self.params)
        super().format_help(ctx, formatter)  # type: ignore[misc]


class Command(_HelpConventions, TyperCommand):
    """A typer command with toolbench's help conventions."""


class Group(_HelpConventions, TyperGroup):
    """A typer group with the same help conventions as :class:`Command`."""


def typer_app(name: str, help: str) -> typer.Typer:
    """A sub-command group built with the conventions above."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        cls=Group,
    )
