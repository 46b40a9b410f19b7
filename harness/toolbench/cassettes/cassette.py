"""One trial's cassette: what it recorded and replayed, its latencies and request keys.

What it wraps is vcrpy's cassette when the trial may record, and a
:class:`~toolbench.cassettes.replay_only.ReplayOnlyCassette` (no vcrpy) for ``--record
none`` until a request reaches HTTP (:meth:`TrialCassette.vcr`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolbench.cassettes.faults import reply_fault
from toolbench.cassettes.recording import ReadReply
from toolbench.cassettes.replay_only import ReplayOnlyCassette
from toolbench.cassettes.serializer import CAPABILITIES_KEY, LATENCY_KEY, READ_KEY, REQUEST_KEYS
from toolbench.errors import CassetteMissingError
from toolbench.redaction import redact_data

if TYPE_CHECKING:
    import httpx


@dataclass
class TrialCassette:
    """The cassette a trial records into or replays from, plus what happened to it."""

    path: Path
    cassette: Any
    unmatched: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What happened to the cassette that the trial should report (moved aside, ...)."""
    current_path: str = ""
    """URL path of the exchange in flight (the recording decision depends on it)."""
    current_post: bool = False
    """The exchange in flight is a POST: a model's call (a GET a library makes on the
    way, a file it downloads, is no attempt anything claims)."""
    last_fault: str | None = None
    """Why the last response was not a complete reply (None: it was one)."""
    last_replayed: bool = False
    last_provider_s: float | None = None
    """The provider's time of the last live exchange: request written to last byte."""
    values: list[str] | None = None
    """The known secret values, found once for the trial (None: found when needed)."""
    _recorded_at: int | None = None
    _unconfirmed: int | None = None
    """The index of a 2xx exchange recorded this trial that no successful attempt has
    claimed yet (:meth:`remember_key`): dropped when another model request begins (the
    attempt is retried) or the trial ends with an error (:meth:`drop_unconfirmed`)."""

    LATENCY_KEY = LATENCY_KEY
    REQUEST_KEYS = REQUEST_KEYS
    """Metadata: toolbench's own key of each recorded interaction's request (by index;
    None for interactions recorded before keys), for replay at the provider boundary."""

    def vcr(self) -> Any:
        """vcrpy's cassette, for a request that reaches HTTP: a replay-only cassette is
        opened as vcrpy's now, keeping what it played."""
        if isinstance(self.cassette, ReplayOnlyCassette):
            self.cassette = self.cassette.upgrade()
        return self.cassette

    def begin(self, request: httpx.Request) -> tuple[int, int]:
        self.current_post = request.method == "POST"
        if self.current_post:  # the attempt that recorded it failed: this one asks again
            self.drop_unconfirmed()
        self.current_path = request.url.path
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        return self.played(), len(self.cassette.data)

    def finish(self, status: int, content: bytes, before: tuple[int, int]) -> None:
        """Note what the exchange just routed was: replayed or live, recorded, well-formed."""
        self.last_replayed = self.played() > before[0]
        self._recorded_at = before[1] if len(self.cassette.data) > before[1] else None
        self.last_fault = reply_fault(status, content, self.current_path)
        if self._recorded_at is not None and self.current_post and 200 <= status < 300:
            self._unconfirmed = self._recorded_at

    def drop_unconfirmed(self) -> None:
        """Drop the 2xx exchange recorded this trial that no attempt claimed as its
        answer (:meth:`remember_key` claims it).

        A cassette holds only the exchange that answered. A reply the recording rule
        (:func:`~toolbench.cassettes.faults.recordable`) let through can still fail its
        attempt (the sender raised on it, the reply carried no message): vcrpy has
        recorded it, and the attempt's retry would be answered from it, as would every
        later ``--record new`` or ``none``. Whatever failed, a model's exchange (a POST)
        not claimed before the next one (a retry), or before the trial ended with an
        error (:func:`~toolbench.cassettes.use.use_cassette`), is not kept."""
        at, self._unconfirmed = self._unconfirmed, None
        if at is None or self.cassette is None or at >= len(self.cassette.data):
            return
        self._recorded_at = at
        self.forget_last()

    def forget_last(self) -> None:
        """Drop the interaction the last exchange recorded (a fault the trial did not act on)."""
        if self._recorded_at is not None:
            del self.cassette.data[self._recorded_at :]
            self.cassette.dirty = True
            if self._unconfirmed is not None and self._unconfirmed >= self._recorded_at:
                self._unconfirmed = None
            for name in (self.REQUEST_KEYS, READ_KEY):
                values = self.cassette._metadata.get(name)
                if isinstance(values, list):
                    del values[self._recorded_at :]
            self._recorded_at = None

    def remember_key(self, key: str) -> None:
        """Record toolbench's request ``key`` with the interaction the last exchange
        recorded: the attempt succeeded, and the exchange is the one that answered."""
        if self._unconfirmed == self._recorded_at:
            self._unconfirmed = None
        self._set_at(self.REQUEST_KEYS, key)

    def _set_at(self, name: str, value: Any) -> None:
        """Set the metadata list ``name`` at the interaction the last exchange recorded."""
        at = self._recorded_at
        if at is None:
            return
        meta: dict[str, Any] = self.cassette._metadata
        old = meta.get(name)
        values: list[Any] = list(old) if isinstance(old, list) else []
        values = (values + [None] * (at + 1))[: max(len(values), at + 1)]
        values[at] = value
        meta[name] = values
        self.cassette.dirty = True

    def may_replay(self) -> bool:
        """Whether anything recorded may answer the next request (see
        :meth:`replay_reply`, which finds nothing when this is False)."""
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        cas = self.cassette
        return cas is not None and cas.record_mode != "all" and bool(cas.data)

    def keep_read(self, read: dict[str, Any], capabilities: dict[str, Any]) -> None:
        """Keep with the interaction the last exchange recorded the reply as read and
        what the sender decided (:class:`~toolbench.cassettes.recording.ReadReply`), and
        on the cassette what the sender's tables said the model takes."""
        if self._recorded_at is None:
            return
        # Redacted as the recorded body was: the reply read live may hold a key the
        # server echoed, which the body written beside it no longer holds.
        self._set_at(READ_KEY, redact_data(read, self.values))
        self.cassette._metadata[CAPABILITIES_KEY] = capabilities

    def kept_capabilities(self) -> dict[str, Any] | None:
        """What the sender's tables said the model takes when recorded (None: not kept,
        or ``--record all``, which asks again)."""
        cas = self.cassette
        if cas is None or cas.record_mode == "all":
            return None
        found = cas._metadata.get(CAPABILITIES_KEY)
        return found if isinstance(found, dict) else None

    def replay_read(
        self, asked_key: str, streamed: bool = False
    ) -> tuple[ReadReply, str | None, int] | None:
        """The reply kept as read for the request whose key before the sender's
        parameter filter is ``asked_key``, the key of the request that was sent, and the
        interaction's index (:meth:`play` counts it); None when no 2xx interaction kept
        one (this cassette holds plain exchanges only: never for ``streamed``)."""
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        if streamed or self.kept_capabilities() is None:
            return None
        meta: dict[str, Any] = self.cassette._metadata
        reads, keys = meta.get(READ_KEY), meta.get(self.REQUEST_KEYS)
        if not isinstance(reads, list):
            return None
        cas = self.cassette
        for i, read in enumerate(reads[: len(cas.data)]):
            if isinstance(read, ReadReply):  # a replay-only cassette's, parsed with it
                if read.asked_key != asked_key or cas.status(i) // 100 != 2:
                    continue
                kept = read.model_copy(deep=True)  # what a reader changes stays its own
            else:
                if not isinstance(read, dict) or read.get("asked_key") != asked_key:
                    continue
                if int(cas.data[i][1]["status"]["code"]) // 100 != 2:
                    continue
                try:
                    kept = ReadReply.model_validate(read)
                except ValidationError:
                    return None  # a damaged record: the exchange's body is read instead
            key = keys[i] if isinstance(keys, list) and i < len(keys) else None
            return kept, key if isinstance(key, str) else None, i
        return None

    def play(self, index: int) -> None:
        """Count the interaction ``index`` as replayed (answered at the boundary)."""
        self.cassette.play_counts[index] += 1
        self.last_replayed = True

    def replay_reply(self, key: str, wire: Any) -> dict[str, Any] | None:
        """The recorded 2xx JSON body answering a request, found without HTTP: by
        toolbench's request ``key`` when the cassette holds keys, else by ``wire`` (the
        predicted HTTP request), matched as vcrpy matches
        (:func:`~toolbench.cassettes.match.match_on`). Counts as a
        play; None when nothing recorded answers it here (the full path then decides)."""
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        cas = self.cassette
        if cas is None or cas.record_mode == "all":  # vcrpy's RecordMode is a str enum
            return None
        keys = cas._metadata.get(self.REQUEST_KEYS)
        index: int | None = None
        if isinstance(keys, list) and key in keys:
            index = keys.index(key)
        elif wire is not None:
            from vcr.request import Request as VcrRequest  # a cassette recorded before keys

            cas = self.vcr()
            req = VcrRequest(wire.method, wire.uri, json.dumps(wire.body).encode(), {})
            index = next((i for i, _ in cas._responses(req)), None)
        if index is None or index >= len(cas.data):
            return None
        body = cas.reply_body(index) if isinstance(cas, ReplayOnlyCassette) else _played(cas, index)
        if body is not None:
            self.last_replayed = True
        return body

    def gap(self, request: httpx.Request) -> CassetteMissingError:
        """Note a request replay cannot answer, and the error that says so."""
        self.unmatched.append(f"{request.method} {request.url.path}")
        return CassetteMissingError(
            f"cassette {self.path} has no recorded response for this request"
        )

    def played(self) -> int:
        """Responses replayed so far (a call that raised this replayed, not live)."""
        return int(self.cassette.play_count)

    def latency(self, index: int, measured: float, replayed: bool) -> float | None:
        """The model's latency for the ``index``-th exchange of this trial.

        Live: the measured time, kept in the cassette's metadata. Replayed: the time
        recorded with it (None where an older cassette has none), never the replay's
        own few milliseconds, which would pass for a very fast model.
        """
        meta: dict[str, Any] = self.cassette._metadata
        recorded = meta.get(self.LATENCY_KEY)
        if replayed:
            if isinstance(recorded, list) and index < len(recorded):
                value = recorded[index]
                return None if value is None else float(value)
            return None
        values = list(recorded) if isinstance(recorded, list) else []
        values = [*(values + [None] * index)[:index], round(measured, 4)]
        meta[self.LATENCY_KEY] = values
        self.cassette.dirty = True
        return measured


def _played(cas: Any, index: int) -> dict[str, Any] | None:
    """The JSON object a vcrpy cassette's ``index``-th 2xx reply carried, counted as a
    play (None: a refusal or a body that is not an object; the full path acts on it)."""
    response = cas.data[index][1]
    if int(response["status"]["code"]) // 100 != 2:
        return None
    try:
        body = json.loads(response["body"]["string"] or b"null")
    except (KeyError, TypeError, ValueError):
        return None
    if not isinstance(body, dict):
        return None
    cas.play_counts[index] += 1
    return body
