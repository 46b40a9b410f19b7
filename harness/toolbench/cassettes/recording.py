"""The one cassette format: a JSON file per trial holding every exchange of the trial.

A plain exchange keeps its response body as decoded JSON (``body``; ``text`` when the
body is not JSON); a streamed one keeps the body as the transport returned it, chunk by
chunk, each with its arrival offset in milliseconds (``chunks``). A request keeps its
body as JSON data, toolbench's own request ``key`` (replay at the provider boundary) and
the provider's time of the exchange (``latency_s``). JSON rather than YAML: decoding is a
tenth of the cost, and one reader serves plain and streamed trials alike.

Read with :func:`load`: the schema version is checked, and a file of the layout before
this one (vcrpy's YAML, the ``.sse.json`` SSE cassette) or a stream whose chunks carry
no offsets, or offsets that go backwards, is a :class:`~toolbench.errors.CassetteLayoutError`
naming ``toolbench cassettes migrate`` (:mod:`.migrate` converts them).
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolbench.errors import CassetteLayoutError, CassetteUnreadableError

KIND = "toolbench-cassette"
VERSION = 2
"""Version 1 was the layout before one format: vcrpy's YAML (plain) beside the
``toolbench-sse`` JSON (streamed)."""
SUFFIX = ".json"
LEGACY_SUFFIXES = (".yaml", ".sse.json")
"""What a trial's cassette was called in the old layout (plain, streamed)."""
MIGRATE_HINT = "convert it with: toolbench cassettes migrate DIR"


class Chunk(BaseModel):
    """One piece of a streamed body as the transport returned it, and when (ms from the
    request being handed to the transport). Text when whole UTF-8, else base64 of the
    bytes (a chunk that splits a character is kept as it came)."""

    model_config = ConfigDict(extra="forbid")

    offset_ms: float
    text: str | None = None
    b64: str | None = None

    @classmethod
    def of(cls, data: bytes, offset_ms: float) -> Chunk:
        try:
            return cls(offset_ms=round(offset_ms, 3), text=data.decode("utf-8"))
        except UnicodeDecodeError:
            return cls(offset_ms=round(offset_ms, 3), b64=base64.b64encode(data).decode("ascii"))

    def data(self) -> bytes:
        if self.b64 is not None:
            return base64.b64decode(self.b64)
        return (self.text or "").encode("utf-8")


class RecordedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str
    uri: str
    body: Any = None
    """The request body as JSON data (a string when it was not JSON)."""
    headers: dict[str, Any] = Field(default_factory=dict)


class RecordedResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int
    reason: str | None = None
    headers: dict[str, Any] = Field(default_factory=dict)
    body: Any = None
    """A plain reply's body as JSON data."""
    text: str | None = None
    """A plain reply's body when it is not JSON."""
    chunks: list[Chunk] | None = None
    """A streamed reply's body, chunk by chunk with offsets (None: a plain reply)."""

    @property
    def streamed(self) -> bool:
        return self.chunks is not None

    def content(self) -> str:
        """The whole body as text (a stream's chunks joined)."""
        if self.chunks is not None:
            return b"".join(c.data() for c in self.chunks).decode("utf-8", "replace")
        if self.text is not None:
            return self.text
        if self.body is None:
            return ""
        return json.dumps(self.body, ensure_ascii=False)


class RecordedExchange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request: RecordedRequest
    response: RecordedResponse
    key: str | None = None
    """toolbench's own key of the request (replay at the provider boundary)."""
    latency_s: float | None = None
    """The provider's time when recorded (request to last byte); None: not measured."""


class Recording(BaseModel):
    """Every exchange of one trial (``<scenario>[__sN].json``)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["toolbench-cassette"] = "toolbench-cassette"
    version: int = VERSION
    exchanges: list[RecordedExchange] = Field(default_factory=list)


def legacy_paths(path: Path) -> list[Path]:
    """Where the old layout kept the cassette of the trial whose cassette is ``path``."""
    stem = path.name.removesuffix(SUFFIX)
    return [path.with_name(stem + s) for s in LEGACY_SUFFIXES]


def legacy_error(path: Path) -> CassetteLayoutError | None:
    """The error for a trial whose cassette exists only in the old layout (None: not so)."""
    if path.is_file():
        return None
    for old in legacy_paths(path):
        if old.is_file():
            return CassetteLayoutError(str(old), f"a cassette of the old layout; {MIGRATE_HINT}")
    return None


def parse(text: str | bytes, where: str) -> Recording:
    """A recording from its file's text; any defect is a typed error naming ``where``."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise CassetteUnreadableError(where, "nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise CassetteUnreadableError(where, f"not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise CassetteUnreadableError(where, "not a cassette (not a JSON object)")
    kind, version = data.get("kind"), data.get("version")
    if kind == "toolbench-sse" or (kind is None and "interactions" in data):
        raise CassetteLayoutError(where, f"a cassette of the old layout; {MIGRATE_HINT}")
    if kind != KIND:
        raise CassetteUnreadableError(where, f"not a toolbench cassette (kind {kind!r})")
    if isinstance(version, int) and version > VERSION:
        raise CassetteUnreadableError(
            where, f"written by a newer toolbench (version {version}; this reads {VERSION})"
        )
    if version != VERSION:
        raise CassetteLayoutError(where, f"cassette version {version!r}; {MIGRATE_HINT}")
    try:
        rec = Recording.model_validate(data)
    except RecursionError:
        raise CassetteUnreadableError(where, "nested too deeply") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "missing" and loc.endswith("offset_ms"):
            raise CassetteLayoutError(where, f"{loc}: a streamed event without its offset; "
                                      f"{MIGRATE_HINT} or record it again") from None  # fmt: skip
        raise CassetteUnreadableError(where, f"{loc}: {err['msg']}") from None
    why = _unreplayable(rec)
    if why is not None:
        raise CassetteUnreadableError(where, why)
    return rec


def _unreplayable(rec: Recording) -> str | None:
    """What no recording holds though the shape allows it: a 2xx stream of no chunk, a
    chunk whose base64 does not decode, offsets that go backwards (events out of order)."""
    for i, ex in enumerate(rec.exchanges):
        chunks = ex.response.chunks
        if chunks is None:
            continue
        if 200 <= ex.response.status < 300 and not chunks:
            return f"exchanges.{i}.response.chunks: a {ex.response.status} reply with no chunk"
        last = float("-inf")
        for j, chunk in enumerate(chunks):
            if chunk.offset_ms < last:
                return (f"exchanges.{i}.response.chunks.{j}.offset_ms: events out of order"
                        " (an offset before the previous event's)")  # fmt: skip
            last = chunk.offset_ms
            if chunk.b64 is None:
                continue
            try:
                base64.b64decode(chunk.b64, validate=True)
            except binascii.Error:
                return f"exchanges.{i}.response.chunks.{j}.b64: not base64"
    return None


def load(path: Path) -> Recording:
    """Read a trial's cassette (:func:`parse`); an unreadable file is a typed error."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CassetteUnreadableError(str(path), exc.strerror or str(exc)) from None
    if not raw.strip():
        raise CassetteUnreadableError(str(path), "empty file")
    return parse(raw, str(path))


def dump(rec: Recording) -> str:
    """The file's text: one exchange field per line, values as decoded (readable) text."""
    return rec.model_dump_json(indent=1, exclude_none=True)
