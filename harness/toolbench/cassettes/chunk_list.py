"""A stream's recorded chunks: on disk one body and where it was cut, read lazily.

A streamed exchange keeps its body as the transport returned it, chunk by chunk, each
with its arrival offset (what ``--replay full`` hands to LiteLLM). Version 3 of the
cassette wrote each chunk as its own object, ``{"offset_ms": ..., "text": "data: {...}"}``:
about 200 a stream, most of a streamed cassette's bytes, and building them was most of the
work of reading one, though a replay at the provider boundary never reads them (it reads
the decoded ``events`` beside them).

Version 4 writes the same chunks as the joined body (``text`` when it is UTF-8, else
``b64``) with the arrival offsets and byte sizes of its pieces (``offsets_ms``,
``sizes``): one string to read, and the chunks are cut from it only when something asks
for them (``--replay full``, a stream the boundary cannot read, redaction, migration).
The chunks cut are those version 3 held: a piece that is whole UTF-8 is ``text``, any
other (a character split between two chunks, a binary eventstream frame) ``b64``. The
version-3 list is still read, as it always was.
"""

from __future__ import annotations

import base64
import binascii
import operator
from collections.abc import Iterator, Sequence
from itertools import accumulate, islice
from typing import Any, NamedTuple, NotRequired, overload

from pydantic import ConfigDict, GetCoreSchemaHandler, with_config
from pydantic_core import core_schema as cs
from typing_extensions import TypedDict


class Chunk(NamedTuple):
    """One piece of a streamed body as the transport returned it, and when (ms from the
    request being handed to the transport). Text when whole UTF-8, else base64 of the
    bytes (a chunk that splits a character is kept as it came)."""

    offset_ms: float
    text: str | None = None
    b64: str | None = None

    @classmethod
    def of(cls, data: bytes, offset_ms: float) -> Chunk:
        return _cut(data, round(offset_ms, 3))

    def data(self) -> bytes:
        if self.b64 is not None:
            return base64.b64decode(self.b64)
        return (self.text or "").encode("utf-8")


def _cut(data: bytes, offset_ms: float) -> Chunk:
    try:
        return Chunk(offset_ms, data.decode("utf-8"))
    except UnicodeDecodeError:
        return Chunk(offset_ms, None, base64.b64encode(data).decode("ascii"))


@with_config(ConfigDict(extra="forbid"))
class _StoredChunk(TypedDict):
    """A chunk as a version-3 cassette holds it."""

    offset_ms: float
    text: NotRequired[str | None]
    b64: NotRequired[str | None]


@with_config(ConfigDict(extra="forbid"))
class StoredBody(TypedDict):
    """A stream's chunks as a version-4 cassette holds them."""

    offsets_ms: list[float]
    sizes: list[int]
    text: NotRequired[str]
    b64: NotRequired[str]


def in_order(offsets: Sequence[float]) -> bool:
    """Whether ``offsets`` never go backwards (compared in C: a stream has 200 of them)."""
    return all(map(operator.le, offsets, islice(offsets, 1, None)))


class ChunkList(Sequence[Chunk]):
    """The chunks of one stream: built from a list of :class:`Chunk` (a recording), or
    from a stored body (a version-4 cassette), cut into chunks on first use."""

    __slots__ = ("_items", "_stored")

    def __init__(self, items: Sequence[Chunk] = ()) -> None:
        self._items: list[Chunk] | None = list(items)
        self._stored: StoredBody | None = None

    @classmethod
    def of_stored(cls, stored: StoredBody) -> ChunkList:
        out = cls()
        out._items, out._stored = None, stored
        return out

    @classmethod
    def of_objects(cls, objects: list[dict[str, Any]]) -> ChunkList:
        """A version-3 list of chunk objects."""
        return cls([Chunk(o["offset_ms"], o.get("text"), o.get("b64")) for o in objects])

    # -- what a replay asks without cutting the body

    @property
    def offsets_ms(self) -> Sequence[float]:
        """Each chunk's arrival offset."""
        if self._stored is not None:
            return self._stored["offsets_ms"]
        return [c.offset_ms for c in self._items or ()]

    def problem(self, where: str) -> str | None:
        """Why these chunks replay no stream (None: they do): offsets that go backwards,
        base64 that does not decode, a stored body whose sizes do not add up to it."""
        stored = self._stored
        if stored is None:
            return self._items_problem(where)
        offsets, sizes = stored["offsets_ms"], stored["sizes"]
        text, b64 = stored.get("text"), stored.get("b64")
        if len(offsets) != len(sizes):
            return f"{where}.chunks: {len(offsets)} offsets for {len(sizes)} sizes"
        if text is None and b64 is None:
            return f"{where}.chunks: no body (text or b64)"
        if text is not None and b64 is not None:
            return f"{where}.chunks: a body both as text and as b64"
        if not in_order(offsets):
            j = next(j for j in range(1, len(offsets)) if offsets[j] < offsets[j - 1])
            return (f"{where}.chunks.offsets_ms.{j}: events out of order"
                    " (an offset before the previous event's)")  # fmt: skip
        if sizes and min(sizes) < 0:
            return f"{where}.chunks.sizes: a negative size"
        if text is not None:
            try:
                length = len(text) if text.isascii() else len(text.encode("utf-8"))
            except UnicodeEncodeError:
                return f"{where}.chunks.text: not UTF-8 text (a lone surrogate)"
        else:
            try:
                length = len(base64.b64decode(b64 or "", validate=True))
            except binascii.Error:
                return f"{where}.chunks.b64: not base64"
        if sum(sizes) != length:
            return f"{where}.chunks.sizes: {sum(sizes)} bytes of chunks for a body of {length}"
        return None

    def _items_problem(self, where: str) -> str | None:
        items = self._items or []
        if in_order(self.offsets_ms) and all(c.b64 is None for c in items):
            return None
        last = float("-inf")
        for j, chunk in enumerate(items):
            if chunk.offset_ms < last:
                return (f"{where}.chunks.{j}.offset_ms: events out of order"
                        " (an offset before the previous event's)")  # fmt: skip
            last = chunk.offset_ms
            if chunk.b64 is None:
                continue
            try:
                base64.b64decode(chunk.b64, validate=True)
            except binascii.Error:
                return f"{where}.chunks.{j}.b64: not base64"
        return None

    # -- the chunks themselves

    def _chunks(self) -> list[Chunk]:
        if self._items is None:
            self._items = _cut_stored(self._stored)  # type: ignore[arg-type]
        return self._items

    def stored(self) -> StoredBody:
        """What a version-4 cassette writes of these chunks."""
        if self._stored is not None:
            return self._stored
        items = self._chunks()
        datas = [c.data() for c in items]
        body = b"".join(datas)
        out = StoredBody(offsets_ms=[c.offset_ms for c in items], sizes=list(map(len, datas)))
        try:
            out["text"] = body.decode("utf-8")
        except UnicodeDecodeError:
            out["b64"] = base64.b64encode(body).decode("ascii")
        return out

    def __len__(self) -> int:
        if self._stored is not None:
            return len(self._stored["offsets_ms"])
        return len(self._chunks())

    @overload
    def __getitem__(self, index: int) -> Chunk: ...
    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...
    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        return self._chunks()[index]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self._chunks())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkList | list):
            return self._chunks() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChunkList({self._chunks()!r})"

    # -- pydantic

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> cs.CoreSchema:
        objects = handler.generate_schema(list[_StoredChunk])
        body = handler.generate_schema(StoredBody)
        either = cs.union_schema([
            (cs.no_info_after_validator_function(cls.of_stored, body), STORED_FORMS[0]),
            (cs.no_info_after_validator_function(cls.of_objects, objects), STORED_FORMS[1]),
        ])  # fmt: skip
        return cs.json_or_python_schema(
            json_schema=either,
            python_schema=cs.no_info_wrap_validator_function(_from_python, either),
            serialization=cs.plain_serializer_function_ser_schema(ChunkList.stored),
        )


STORED_FORMS = ("(version 4)", "(version 3)")
"""How an error's location names the stored form it was read as (:func:`error_of`)."""


def error_of(errors: list[Any]) -> tuple[str, Any]:
    """The location (dotted) and the error to report of a cassette's validation errors:
    where chunks were read as both stored forms, the error inside the form the file
    used, not the other form's "not a list"/"not an object"; the form named nowhere."""

    def inside(err: Any) -> bool:
        loc = err["loc"]
        return not (loc and loc[-1] in STORED_FORMS)

    err = next((e for e in errors if inside(e)), errors[0])
    loc = ".".join(str(p) for p in err["loc"] if p not in STORED_FORMS)
    return loc, err


def _from_python(value: Any, check: cs.ValidatorFunctionWrapHandler) -> ChunkList:
    """A ChunkList as it is; a list of chunks (what a recording made) wrapped; objects of
    either stored form checked as the file's are."""
    if type(value) is ChunkList:
        return value
    if type(value) is list and all(type(v) is Chunk for v in value):
        return ChunkList(value)
    if isinstance(value, list):
        value = [v._asdict() if type(v) is Chunk else v for v in value]
    out = check(value)
    assert type(out) is ChunkList
    return out


def _cut_stored(stored: StoredBody) -> list[Chunk]:
    """The chunks a stored body was cut from."""
    offsets, sizes, text = stored["offsets_ms"], stored["sizes"], stored.get("text")
    ends = list(accumulate(sizes))
    starts = [0, *ends[:-1]] if ends else []
    if text is not None and text.isascii():  # a byte a character: cut the text itself
        return [Chunk(o, text[a:b]) for o, a, b in zip(offsets, starts, ends, strict=True)]
    body = text.encode("utf-8") if text is not None else base64.b64decode(stored.get("b64", ""))
    return [_cut(body[a:b], o) for o, a, b in zip(offsets, starts, ends, strict=True)]
