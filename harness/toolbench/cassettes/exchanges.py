"""The exchanges of one trial's cassette, and what happened to them: found (method, path
and the JSON body as data, as recorded: redacted, :func:`~.scrub.scrub_body_data`; one
not played yet first), played, recorded provisionally then claimed or forgotten, and
answered at the provider boundary without HTTP (a plain reply's body, the reply kept as
read, a stream's recorded events through the same framing guard as on the wire). The
HTTP side, which answers a request from them or records a live one, is
:class:`~.trial.TrialCassette`'s.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench.cassettes.boundary import ReplayMode, url_path
from toolbench.cassettes.match import same_body
from toolbench.cassettes.scrub import scrub_body_data
from toolbench.cassettes.stream_bytes import RecordingStream
from toolbench.cassettes.stream_framing import Clock, decode
from toolbench.errors import CassetteMissingError
from toolbench.framings import framing_of
from toolbench.redaction import redact_data
from toolbench.run_modes import RecordOption as RecordOption


def _responses_events(clock: Clock) -> bool:
    """The stream was the Responses API's typed events (read by toolbench's own reader,
    not translated by LiteLLM)."""
    first = clock.raw_events[0][0] if clock.raw_events else None
    kind = first.get("type") if isinstance(first, dict) else None
    return isinstance(kind, str) and kind.startswith("response.")


class TrialExchanges:
    """A trial's recorded exchanges and what happened to them (see the module doc)."""

    def __init__(
        self, path: Path, record: RecordOption, data: rec.Recording, values: list[str],
        streamed: bool = False, reload: Callable[[], rec.Recording] | None = None,
        replay: ReplayMode = "boundary", live: bool | None = None,
    ) -> None:  # fmt: skip
        self.path, self.record, self.data, self.streamed = path, record, data, streamed
        self.replay_mode: ReplayMode = replay
        """The run's ``--replay``: whether this cassette answers at the provider boundary."""
        self.live = record != "none" if live is None else live
        """Whether a request the recording cannot answer goes live now (and is recorded);
        False: it is a gap (:meth:`gap`) until :meth:`go_live`, which only a cassette
        opened to record may be turned."""
        self._reload = reload
        """The recording read again from the file's text (a replay-only cassette's): what
        a repeated play hands out, the first having been handed out uncopied."""
        self.unmatched: list[str] = []
        self.notes: list[str] = []
        """What happened to the cassette that the trial should report (moved aside, ...)."""
        self.last_fault: str | None = None
        """Why the last plain response was not a complete reply (None: it was one)."""
        self.last_replayed = False
        self.last_provider_s: float | None = None
        """The provider's time of the last live plain exchange: request written to last
        byte (a stream's is its own clock's: first byte to last chunk)."""
        self.clock = Clock()
        """What the framing guard saw of the stream in flight (or replayed)."""
        self.dirty = False
        self._values = values
        self._plays: Counter[int] = Counter()
        self._count = 0
        self._last: rec.RecordedExchange | None = None
        """The exchange that answered last (replayed): its recorded latency."""
        self._recorded: rec.RecordedExchange | None = None
        """The exchange the last live exchange recorded (None: it recorded nothing)."""
        self._unconfirmed: rec.RecordedExchange | None = None
        """A plain 2xx recorded this trial that no successful attempt has claimed yet
        (:meth:`remember_key`): dropped when another model request begins (the attempt
        is retried) or the trial ends with an error (:meth:`drop_unconfirmed`)."""
        self._rewritten: set[int] = set()
        """The streams recorded this run whose chunks redaction rewrote (by id)."""
        self._live: RecordingStream | None = None

    # ------------------------------------------------------------ what happened

    def played(self) -> int:
        """Exchanges replayed so far (a call that raised this replayed, not live)."""
        return self._count

    def _reset(self) -> None:
        self.last_fault, self.last_replayed, self._recorded, self._live = None, False, None, None

    def gap(self, request: httpx.Request) -> CassetteMissingError:
        """Note a request replay cannot answer, and the error that says so."""
        self.unmatched.append(f"{request.method} {request.url.path}")
        return CassetteMissingError(
            f"cassette {self.path} has no recorded response for this request"
        )

    def go_live(self) -> None:
        """From now on a request the recording cannot answer goes live and is recorded
        (a ``replay_then_live`` trial whose cassette fell short). What a replay-only
        play handed out uncopied is read again from the file: the recording may now be
        saved, and a reader may have changed what it was handed."""
        if self.record == "none":
            raise ValueError("a replay-only cassette never goes live")
        self.live = True
        self.unmatched.clear()
        if self._reload is not None:
            self.data, self._reload = self._reload(), None

    def latency(self, index: int, measured: float, replayed: bool) -> float | None:
        """The model's latency for the ``index``-th turn of this trial. Live: the measured
        time, kept with the exchange recorded. Replayed: the time recorded with the
        exchange that answered (None where an older cassette has none), never the
        replay's own few milliseconds, which would pass for a very fast model."""
        if replayed:
            return None if self._last is None else self._last.latency_s
        if self._recorded is not None:
            self._recorded.latency_s = round(measured, 4)
            self.dirty = True
        return measured

    def remember_key(self, key: str) -> None:
        """Record toolbench's request ``key`` with the exchange the last live exchange
        recorded: the attempt succeeded, and that exchange is the one that answered."""
        ex = self._recorded
        if ex is None:
            return
        if self._unconfirmed is ex:
            self._unconfirmed = None
        ex.key = key
        self.dirty = True

    def forget_last(self) -> None:
        """Drop the exchange the last live exchange recorded (a fault the trial did not
        act on, so ``--record new`` asks the server again); a stream is recorded only
        once it ended cleanly, and is never forgotten."""
        ex = self._recorded
        if ex is None or (ex.response.chunks is not None and ex.response.status < 400):
            return
        self.data.exchanges = [e for e in self.data.exchanges if e is not ex]
        if self._unconfirmed is ex:
            self._unconfirmed = None
        self._recorded = None
        self.dirty = True

    def drop_unconfirmed(self) -> None:
        """Drop the plain 2xx recorded this trial that no attempt claimed as its answer.

        A cassette holds only the exchange that answered. A reply the recording rule
        (:func:`~toolbench.cassettes.faults.recordable`) let through can still fail its
        attempt (the sender raised on it, the reply carried no message): its retry would
        be answered from it, as would every later ``--record new`` or ``none``. A model's
        exchange (a POST) not claimed before the next one (a retry), or before the trial
        ended with an error (:func:`~toolbench.cassettes.use.use_cassette`), is not kept."""
        ex, self._unconfirmed = self._unconfirmed, None
        if ex is not None:
            self._recorded = ex
            self.forget_last()

    # ------------------------------------------------------------ answered at the boundary

    def may_replay(self) -> bool:
        """Whether anything recorded may answer the next plain request (see
        :meth:`replay_reply`, which finds nothing when this is False)."""
        self._reset()
        return self.record != "all" and bool(self.data.exchanges)

    def replay_reply(self, key: str, wire: Any) -> dict[str, Any] | None:
        """The recorded 2xx JSON body answering a plain request, found without HTTP: by
        toolbench's request ``key``, else by ``wire`` (the predicted HTTP request, a
        :class:`~.boundary.WireRequest`) matched as HTTP is (:meth:`_find`). Counts as a
        play; None when nothing recorded answers it here (the full path then decides)."""
        self._reset()
        if self.record == "all":
            return None
        exchanges = self.data.exchanges
        index = next((i for i, ex in enumerate(exchanges) if ex.key == key), None)
        if index is None and wire is not None:
            index = self._find(wire.method, url_path(wire.uri), wire.body, streamed=False)
        if index is None:
            return None
        response = self._pristine(index).response
        body = response.body
        if response.status // 100 != 2 or response.chunks is not None or type(body) is not dict:
            return None
        if self._copied():
            body = copy.deepcopy(body)  # what a reader changes of one play stays its own
        self._played(index)
        return body

    def kept_capabilities(self) -> dict[str, Any] | None:
        """What the sender's tables said the model takes when recorded (None: not kept,
        or ``--record all``, which asks again)."""
        return None if self.record == "all" else self.data.capabilities

    def replay_read(
        self, asked_key: str, streamed: bool
    ) -> tuple[rec.ReadReply, str | None, int] | None:
        """The reply kept as read for the request (plain or ``streamed``) whose key before
        the sender's parameter filter is ``asked_key`` (one not played yet first), the
        key of the request that was sent, and the exchange's index (:meth:`play`)."""
        self._reset()
        if self.kept_capabilities() is None:
            return None
        fallback = None
        for i, ex in enumerate(self.data.exchanges):
            read = ex.read
            if read is None or read.asked_key != asked_key or not 200 <= ex.response.status < 300:
                continue
            if (ex.response.chunks is not None) != streamed or (
                streamed and not ex.response.chunks
            ):
                continue
            if self._plays[i] == 0:
                fallback = (read, ex.key, i)
                break
            fallback = fallback or (read, ex.key, i)
        if fallback is None:
            return None
        read, key, i = fallback
        if self._plays[i] > 0 and self._reload is not None:
            read = self._pristine(i).read or read
        elif self._copied():
            read = read.model_copy(deep=True)  # what a reader changes stays its own
        return read, key, i

    def _pristine(self, index: int) -> rec.RecordedExchange:
        """The exchange ``index`` as recorded: the one held, unless a replay-only
        cassette handed it out uncopied before (a reader may have changed it), then read
        again from the file's text."""
        if self._plays[index] == 0 or self._reload is None:
            return self.data.exchanges[index]
        return self._reload().exchanges[index]

    def _copied(self) -> bool:
        """Whether a play hands out a copy: in a cassette that may be saved (one that
        records now: what a reader changes must not reach the file) or has no file text
        to read again. A cassette that only replays (so far) hands each exchange out as it
        is, a repeat read anew (:meth:`_pristine`): a copy a turn is a real share of a
        replayed trial."""
        return self.live or self._reload is None

    def play(self, index: int) -> None:
        """Count the exchange ``index`` as replayed (answered from what it kept)."""
        self.clock = Clock(self.clock.path)
        self._played(index)

    def _played(self, index: int) -> None:
        self._plays[index] += 1
        self._count += 1
        self.last_replayed, self._last = True, self.data.exchanges[index]

    def replay_stream(self, method: str, path: str, body: Any) -> bool:
        """Answer a streamed request at the provider boundary: the recorded chunks of the
        exchange whose request is ``body`` (the HTTP body the SDK would send) go through
        the same event guard as on the wire, setting :attr:`clock` with its offsets and
        its assembly of OpenAI chat chunks, with no HTTP and no LiteLLM stream wrapper.

        False (nothing played) when the full path must answer: no such exchange, a
        recorded refusal, a stream that is neither OpenAI chat chunks nor the Responses
        API's events (LiteLLM translates the others), or one whose replay would fail (the
        full path types the fault)."""
        if self.record == "all":
            return False
        found = self._find(method, path, body, streamed=True)
        if found is None:
            return False
        ex = self.data.exchanges[found]
        chunks = ex.response.chunks
        if not 200 <= ex.response.status < 300 or not chunks:
            return False
        framing, events = framing_of(ex.response.headers), ex.response.events
        # No decoded events kept (a stream whose framing failed when recorded): the
        # chunks are read as on the wire, and a failed read left to the full path.
        clock = (
            Clock(path).replay(framing, events, chunks.offsets_ms[-1])
            if events is not None
            else decode(chunks, framing, path)
        )
        if clock is None:
            return False
        if clock.fault is not None or not (clock.chat_chunks or _responses_events(clock)):
            return False
        self._reset()
        self.clock = clock
        self._played(found)
        return True

    def _find(self, method: str, path: str, body: Any, streamed: bool | None = None) -> int | None:
        """The exchange recorded for this request (one not played yet first; ``streamed``:
        of that mode only), matched on the body as it is recorded: redacted
        (:func:`~.scrub.scrub_body_data`, the function that made the recorded body). The
        body as sent is tried first: it is the recorded one unless it holds a secret, and
        redacting it costs a scan."""
        found = self._find_as(method, path, body, streamed)
        if found is not None:
            return found
        recorded = scrub_body_data(body, self._values)
        if recorded == body:
            return None
        return self._find_as(method, path, recorded, streamed)

    def _find_as(self, method: str, path: str, body: Any, streamed: bool | None) -> int | None:
        fallback = None
        for i, ex in enumerate(self.data.exchanges):
            if streamed is not None and (ex.response.chunks is not None) != streamed:
                continue
            if ex.request.method != method or url_path(ex.request.uri) != path:
                continue
            if not same_body(ex.request.body, body):
                continue
            if self._plays[i] == 0:
                return i
            fallback = i if fallback is None else fallback
        return fallback

    # ------------------------------------------------------------ kept as read

    def keep_read(self, read: dict[str, Any], capabilities: dict[str, Any]) -> None:
        """Keep with the exchange the last live exchange recorded its reply as read (a
        stream's as assembled) and what the sender decided
        (:class:`~toolbench.cassettes.recording.ReadReply`), and on the cassette what the
        sender's tables said the model takes."""
        ex = self._recorded
        if ex is None or id(ex) in self._rewritten:
            # A stream whose chunks redaction rewrote: what a replay reads from them (its
            # deltas, their offsets) is not what was assembled live, so nothing is kept.
            return
        # Redacted as the recorded body was: the reply read live may hold a key the
        # server echoed, which the body written beside it no longer holds.
        ex.read = rec.ReadReply.model_validate(redact_data(read, self._values))
        self.data.capabilities = capabilities
        self.dirty = True
