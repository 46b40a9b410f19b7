"""A model that leaves named fields out of its serialized form while they are empty.

Stored records grow fields over time (``notes``, ``via``, ``stream`` ...). Leaving a new
field out while it holds nothing keeps every record that does not use it byte-identical
to what an older toolbench wrote: committed replays, cassettes and diffs only change
where the field applies. One serializer here serves every such model, so the rule of
what "empty" means is written once.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer


def is_empty(value: Any) -> bool:
    """``None``, or an empty list or dict. ``False``, ``0`` and ``""`` are values."""
    return value is None or (isinstance(value, list | dict) and not value)


class SparseModel(BaseModel):
    """A :class:`~pydantic.BaseModel` whose :attr:`omit_when_empty` fields are left out
    of every dump (Python and JSON) while :func:`is_empty`."""

    omit_when_empty: ClassVar[tuple[str, ...]] = ()
    """The fields to leave out while empty (set by each subclass)."""

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.omit_when_empty:
                if name in data and is_empty(data[name]):
                    del data[name]
        return data
