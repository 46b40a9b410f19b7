"""The one cassette format: a JSON file per trial holding every exchange of the trial.

A plain exchange keeps its response body as decoded JSON (``body``; ``text`` when the
body is not JSON); a streamed one keeps the body as the transport returned it, chunk by
chunk, each with its arrival offset in milliseconds (``chunks``: what ``--replay full``
hands to LiteLLM), and beside it the JSON events those chunks carried, already decoded,
each at the offset of the chunk that completed it (``events``: what a boundary replay
feeds the protocol reader, with no SSE framing parsed and no JSON decoded per event; a
streamed replay cost several plain ones when each event was read again). A request keeps its
body as JSON data, toolbench's own request ``key`` (replay at the provider boundary) and
the provider's time of the exchange (``latency_s``); an exchange of a LiteLLM kind keeps
too the reply as toolbench read it and what LiteLLM decided about its request (``read``),
and the cassette what LiteLLM's tables said the model takes (``capabilities``), so that
its replay needs no LiteLLM (:mod:`toolbench.providers.replay`; both optional, within
version 3). JSON rather than YAML: decoding it is far
cheaper, and one reader serves plain and streamed trials alike.

Read with :func:`load`: the schema version is checked, and a file of the layout before
this one (vcrpy's YAML, the ``.sse.json`` SSE cassette) or a stream whose chunks carry
no offsets, or offsets that go backwards, is a :class:`~toolbench.errors.CassetteLayoutError`
naming ``toolbench cassettes migrate`` (:mod:`.migrate` converts them).
"""

from __future__ import annotations

import json
import operator
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from toolbench.cassettes.chunk_list import Chunk as Chunk  # re-exported: its home before
from toolbench.cassettes.chunk_list import ChunkList, error_of, in_order
from toolbench.cassettes.persist import read_cassette
from toolbench.errors import CassetteLayoutError, CassetteUnreadableError

KIND = "toolbench-cassette"
VERSION = 4
"""Version 1 was the layout before one format: vcrpy's YAML (plain) beside the
``toolbench-sse`` JSON (streamed); version 2 kept a stream's chunks without its decoded
``events``; version 3 kept each chunk as its own object, version 4 a stream's body whole
with where it was cut (:mod:`.chunk_list`). Fields added within version 3 are optional
(``capabilities``, an exchange's ``read``; from version 4, ``tools``: an MCP server's
exchanges): a file without them is read as before."""
READABLE = frozenset({3, VERSION})
"""The versions read as they are: version 3 differs from 4 only in how a stream's chunks
are written, so it is read without a migration (``migrate`` rewrites it, for speed)."""
SUFFIX = ".json"
LEGACY_SUFFIXES = (".yaml", ".sse.json")
"""What a trial's cassette was called in the old layout (plain, streamed)."""
MIGRATE_HINT = "convert it with: toolbench cassettes migrate DIR"


Chunks = ChunkList
"""A stream's chunks (:mod:`.chunk_list`: one body and its cuts on disk, from version 4)."""


Event = tuple[float, Any]
"""One JSON event of a streamed body (an SSE ``data:`` payload, an NDJSON line, an
eventstream frame's payload), decoded, after the offset (ms) of the chunk that completed
it: ``[offset_ms, data]`` on disk, or ``[offset_ms, "text"]`` for an OpenAI chat chunk
that carries only a text delta (:func:`content_only`: most events of a stream, whose
repeated id, model and timestamps no reader reads). Derived from the recorded (redacted)
chunks, never written apart from them. Pairs rather than models, text rather than the
chunk: validating 200 models a stream was a large share of a replayed trial's CPU, and
decoding 200 whole chunks as large again."""

CHUNK_FIELDS = frozenset({"id", "object", "created", "model", "system_fingerprint", "choices"})
"""The top-level fields of an OpenAI ``chat.completion.chunk`` that may sit beside a
content-only choice: no reader reads them but ``choices``."""
CHOICE_FIELDS = frozenset({"index", "delta", "finish_reason", "logprobs"})


def content_only(data: Any) -> str | None:
    """The text of a chat chunk that carries a text delta and nothing any reader reads
    besides (one choice, index 0, no finish reason, no usage, a delta of ``content``
    alone); None for any other event, which is kept whole."""
    if type(data) is not dict or not data.keys() <= CHUNK_FIELDS:
        return None
    choices = data.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or not choice.keys() <= CHOICE_FIELDS:
        return None
    if choice.get("index", 0) != 0 or choice.get("finish_reason") is not None:
        return None
    delta = choice.get("delta")
    if choice.get("logprobs") is not None or type(delta) is not dict or delta.keys() != {"content"}:
        return None
    text = delta["content"]
    return text if type(text) is str and text else None


def kept(events: list[Event]) -> list[Event]:
    """Decoded events as a cassette keeps them: JSON objects only (a bare value carries
    no reply; a stream of no object is read from its chunks), content-only chat chunks
    as their text."""
    return [
        (offset, content_only(data) or data) for offset, data in events if isinstance(data, dict)
    ]


def _one_text(headers: Any) -> Any:
    """Headers as one text a name: a list (vcrpy's way, in the plain exchanges recorded
    before one representation) joined with ``", "``, as httpx joins a repeated header."""
    if type(headers) is dict and any(type(v) is list for v in headers.values()):
        return {k: ", ".join(map(str, v)) if type(v) is list else v for k, v in headers.items()}
    return headers


Headers = Annotated[dict[str, str], BeforeValidator(_one_text)]
"""A recorded exchange's HTTP headers, plain or streamed alike: one text a name (what
``httpx.Headers.items()`` gives). Plain exchanges recorded before this kept a list a name
(vcrpy's form); they are read as one text, within the same version."""


class RecordedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: str
    uri: str
    body: Any = None
    """The request body as JSON data (a string when it was not JSON)."""
    headers: Headers = Field(default_factory=dict)


class RecordedResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int
    reason: str | None = None
    headers: Headers = Field(default_factory=dict)
    body: Any = None
    """A plain reply's body as JSON data."""
    text: str | None = None
    """A plain reply's body when it is not JSON."""
    chunks: Chunks | None = None
    """A streamed reply's body, chunk by chunk with offsets (None: a plain reply)."""
    events: list[Event] | None = None
    """The JSON events the chunks of a 2xx stream carried, decoded, in order (None: a
    plain reply, a refusal, or a stream whose framing failed; then the chunks are read)."""

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


class ReadReply(BaseModel):
    """A plain reply as toolbench read it when it was recorded, and what the sender
    (LiteLLM) decided about its request, so that a replay at the boundary answers from it
    without asking the sender again (:mod:`toolbench.providers.replay`). Derived from
    the recorded (redacted) exchange when it was written; ``--replay full`` ignores it and
    reads the recorded body through the sender."""

    model_config = ConfigDict(extra="forbid")

    asked_key: str
    """toolbench's key of the request before the sender's tables dropped any sampling
    parameter: what a replay can compute without asking them."""
    params: dict[str, Any]
    """The sampling parameters asked, sent and dropped (a ``RequestParams``)."""
    reply: dict[str, Any]
    """The reply read (a ``ModelReply``: text, tool calls, finish reason, raw message)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    """The sender's price of the reply (None: it has none)."""
    stream: dict[str, Any] | None = None
    """A streamed reply's stream record (a ``StreamTurn``: its text deltas with their
    offsets, timings and delta-sequence issues), as the reader assembled it."""


class RecordedExchange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request: RecordedRequest
    response: RecordedResponse
    key: str | None = None
    """toolbench's own key of the request (replay at the provider boundary)."""
    latency_s: float | None = None
    """The provider's time when recorded (request to last byte); None: not measured."""
    read: ReadReply | None = None
    """The reply as read and what the sender decided about the request (None: a
    cassette recorded before it was kept, a refusal, a retried turn: the exchange's
    recorded body or chunks are read)."""


class ToolExchange(BaseModel):
    """One JSON-RPC exchange of a trial's tool server (an MCP server: ``initialize``,
    ``tools/list``, ``tools/call``), as sent and as answered, redacted like the model's
    exchanges. A replay answers the trial's environment from these, starting no server
    (:mod:`toolbench.environments.mcp_tape`)."""

    model_config = ConfigDict(extra="forbid")

    server: str
    """The configured server's name (a scenario may use several)."""
    method: str
    params: Any = None
    result: Any = None
    """The JSON-RPC ``result`` (None: the exchange failed; see ``error``)."""
    error: dict[str, Any] | None = None
    """The JSON-RPC ``error`` object (``code``, ``message``, ``data``), or the one
    toolbench wrote for a server that timed out or exited."""


class Recording(BaseModel):
    """Every exchange of one trial (``<scenario>[__sN].json``)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["toolbench-cassette"] = "toolbench-cassette"
    version: int = VERSION
    capabilities: dict[str, Any] | None = None
    """What the sender's tables said the model takes when it was recorded (a
    ``Capabilities``: params, function_calling, echo_extras); None: not kept (then a
    replay asks the sender)."""
    exchanges: list[RecordedExchange] = Field(default_factory=list)
    tools: list[ToolExchange] | None = None
    """The trial's tool-server exchanges, in order (None: it ran none; optional within
    version 4, so every cassette recorded before them reads and writes as it did)."""


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
        # One pass in pydantic's own JSON reader (less CPU than decoding, then
        # validating, a replayed stream's cassette); anything it refuses is read again
        # below, where each defect gets its typed reason.
        fast = Recording.model_validate_json(text)
    except (ValidationError, ValueError, RecursionError):
        fast = None
    if fast is not None and fast.version in READABLE:
        why = _unreplayable(fast)
        if why is not None:
            raise CassetteUnreadableError(where, why)
        return fast
    try:
        data = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except RecursionError:
        raise CassetteUnreadableError(where, "nested too deeply") from None
    except UnicodeDecodeError:
        raise CassetteUnreadableError(where, "not UTF-8 text") from None
    except ValueError as exc:
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
    if version not in READABLE:
        raise CassetteLayoutError(where, f"cassette version {version!r}; {MIGRATE_HINT}")
    try:
        rec = Recording.model_validate(data)
    except RecursionError:
        raise CassetteUnreadableError(where, "nested too deeply") from None
    except ValidationError as exc:
        loc, err = error_of(exc.errors())
        if err["type"] == "missing" and loc.endswith("offset_ms"):
            raise CassetteLayoutError(where, f"{loc}: a streamed event without its offset; "
                                      f"{MIGRATE_HINT} or record it again") from None  # fmt: skip
        if ".events." in loc:
            what = f"{loc}: a decoded event that is not [offset_ms, data]"
            raise CassetteLayoutError(where, f"{what}; {MIGRATE_HINT} or record it again") from None
        raise CassetteUnreadableError(where, f"{loc}: {err['msg']}") from None
    why = _unreplayable(rec)
    if why is not None:
        raise CassetteUnreadableError(where, why)
    return rec


_OFFSET = operator.itemgetter(0)


def _unreplayable(rec: Recording) -> str | None:
    """What no recording holds though the shape allows it: a 2xx stream of no chunk, a
    chunk whose base64 does not decode, offsets that go backwards (events out of order),
    a stored body whose cuts do not add up to it (:meth:`.ChunkList.problem`)."""
    for i, ex in enumerate(rec.exchanges):
        chunks = ex.response.chunks
        if chunks is None:
            continue
        if 200 <= ex.response.status < 300 and not chunks:
            return f"exchanges.{i}.response.chunks: a {ex.response.status} reply with no chunk"
        where = f"exchanges.{i}.response"
        why = chunks.problem(where) or _events_unreplayable(ex.response, where)
        if why is not None:
            return why
    return None


def _events_unreplayable(response: RecordedResponse, where: str) -> str | None:
    """Decoded events that no stream of these chunks carries: events of no 2xx stream,
    offsets that go backwards or outside the chunks' span."""
    events, chunks = response.events, response.chunks
    if events is None:
        return None
    if not chunks or not 200 <= response.status < 300:
        return f"{where}.events: decoded events without a 2xx stream's chunks"
    arrived = chunks.offsets_ms  # made once (a version-3 list is read to make it)
    last, end = arrived[0], arrived[-1]
    offsets = [last, *map(_OFFSET, events), end]  # in C: a stream has 200 events
    if in_order(offsets):
        return None
    for j, (offset, _) in enumerate(events):
        if not last <= offset <= end:
            return (f"{where}.events.{j}: events out of order (an offset before the "
                    "previous event's or outside the chunks')")  # fmt: skip
        last = offset
    return None


def load_if_present(path: Path) -> Recording | None:
    """Read a trial's cassette (:func:`load`); None when there is no such file, found by
    opening it (a replayed trial asked the file system three times before reading it,
    each ask a system call, costly on a slow disk)."""
    raw = read_cassette(path)  # a regular file only, bounded in size
    return None if raw is None else parsed(raw, path)


def load(path: Path) -> Recording:
    """Read a trial's cassette (:func:`parse`); an unreadable file is a typed error."""
    raw = read_cassette(path)
    if raw is None:
        raise CassetteUnreadableError(str(path), "No such file or directory")
    return parsed(raw, path)


def parsed(raw: bytes, path: Path) -> Recording:
    """The recording of a cassette file's bytes (:func:`parse`; an empty file is a
    typed error too)."""
    if not raw.strip():
        raise CassetteUnreadableError(str(path), "empty file")
    return parse(raw, str(path))


def dump(rec: Recording) -> str:
    """The file's text: one exchange field per line, values as decoded (readable) text,
    and a stream's decoded events one per line (indented, they were most of the file)."""
    if all(ex.response.events is None for ex in rec.exchanges):  # a plain trial: as it was
        return rec.model_dump_json(indent=1, exclude_none=True)
    data = rec.model_dump(mode="json", exclude_none=True)
    marker = f"toolbench-events-{uuid.uuid4().hex}-"
    compact: list[list[Any]] = []
    for ex in data["exchanges"]:
        response = ex["response"]
        if response.get("events") is not None:
            compact.append(response["events"])
            response["events"] = f"{marker}{len(compact) - 1}"
    text = json.dumps(data, indent=1, ensure_ascii=False)
    for i, events in enumerate(compact):
        lines = ",\n    ".join(
            json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events
        )
        text = text.replace(f'"{marker}{i}"', f"[\n    {lines}\n   ]" if events else "[]", 1)
    return text
