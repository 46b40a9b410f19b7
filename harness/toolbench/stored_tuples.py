"""Lists of small named tuples stored as lists of JSON objects, read and written fast.

A streamed turn keeps about 200 text deltas (a cassette keeps its chunks otherwise:
:mod:`toolbench.cassettes.chunk_list`).
As pydantic models, each cost a model built on every read (and pydantic validates a named
tuple by calling its Python ``__new__``, slower still), which was a noticeable share of a
replayed streamed trial and most of reading its results line back. Here such a list is checked
from JSON as typed dicts by pydantic's own reader (unknown keys refused, as a model with
``extra="forbid"`` refused them), then each dict becomes its tuple in one pass; from
Python, a list of the tuples is taken as it is (what a reader made is typed already);
written back as the same objects, in one call for the whole list. The bytes on disk are
those the models wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import itemgetter, methodcaller
from typing import Any, Generic, TypeVar

from pydantic import GetCoreSchemaHandler, ValidatorFunctionWrapHandler
from pydantic_core import core_schema as cs

T = TypeVar("T", bound=tuple[Any, ...])


def columns_of(kind: type[tuple[Any, ...]]) -> list[Callable[[dict[str, Any]], Any]]:
    """A C-level getter for each field of the named tuple ``kind`` (a field with a
    default, None, may be absent from an object)."""
    fields: tuple[str, ...] = kind._fields  # type: ignore[attr-defined]
    optional: dict[str, Any] = kind._field_defaults  # type: ignore[attr-defined]
    return [methodcaller("get", f) if f in optional else itemgetter(f) for f in fields]


def tuples_of(
    kind: type[T], columns: list[Callable[[dict[str, Any]], Any]], items: list[dict[str, Any]]
) -> list[T]:
    """The objects ``items`` as ``kind`` tuples: each field read over the whole list by
    its getter (:func:`columns_of`), the tuples made by zip (a Python function called
    for each of a streamed replay's 200 items was not cheap)."""
    read = [map(get, items) for get in columns]
    return list(map(tuple.__new__, repeat(kind), zip(*read, strict=True)))


class StoredAsObjects(Generic[T]):
    """The annotation of a ``list[T]`` field stored as objects: ``Annotated[list[T],
    StoredAsObjects(T, Stored, to_objects)]``, where ``T`` is a named tuple whose fields
    are the keys of ``Stored``, the object's ``TypedDict`` (a field with a default, None,
    may be absent), and ``to_objects`` the objects written for a list of ``T`` (a
    comprehension: no call a tuple)."""

    def __init__(
        self,
        kind: type[T],
        stored: type[Any],
        to_objects: Callable[[list[T]], list[dict[str, Any]]],
    ) -> None:
        self.kind, self.stored, self.to_objects = kind, stored, to_objects
        self._columns = columns_of(kind)

    def _from_stored(self, items: list[dict[str, Any]]) -> list[T]:
        return tuples_of(self.kind, self._columns, items)

    def _from_python(self, value: Any, check: ValidatorFunctionWrapHandler) -> list[T]:
        kind = self.kind
        if type(value) is list and all(type(v) is kind for v in value):
            return list(value)
        if isinstance(value, list):  # objects, or tuples beside them
            value = [self.to_objects([v])[0] if type(v) is kind else v for v in value]
        return self._from_stored(check(value))

    def _to_json(self, items: list[T]) -> list[dict[str, Any]]:
        return self.to_objects(items)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> cs.CoreSchema:
        stored = handler.generate_schema(list[self.stored])  # type: ignore[name-defined]
        return cs.json_or_python_schema(
            json_schema=cs.no_info_after_validator_function(self._from_stored, stored),
            python_schema=cs.no_info_wrap_validator_function(self._from_python, stored),
            serialization=cs.plain_serializer_function_ser_schema(self._to_json),
        )
