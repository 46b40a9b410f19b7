"""A trial's cassette opened for replay only (``--record none``), read without vcrpy.

A replay answered at the provider boundary (:mod:`.boundary`) needs the recorded
replies and their request keys, nothing of vcrpy's request objects, matchers or HTTP
stubs; importing vcrpy alone was a large share of replaying the 1,000 ``bfcl-smoke``
trials, and building its request objects and re-encoding each JSON body for it added to
every trial's CPU. This cassette holds the parsed :class:`.recording.Recording`
and answers by key; when a request does reach HTTP (``--replay full``, a reply the
boundary could not read, a cassette recorded before request keys), :meth:`upgrade`
opens the same file as vcrpy's cassette, with what was played so far.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toolbench.cassettes.recording as rec
from toolbench.cassettes.faults import answered
from toolbench.cassettes.persist import cassette_text
from toolbench.cassettes.serializer import metadata_of
from toolbench.errors import CassetteMissingError


class ReplayOnlyCassette:
    """The recorded exchanges of one trial, played by index; never written."""

    record_mode = "none"
    """vcrpy's ``RecordMode.NONE`` (a ``str`` enum: the two compare equal)."""
    dirty = False

    def __init__(
        self,
        recording: rec.Recording,
        upgrade: Callable[[], Any],
        reload: Callable[[], rec.Recording] | None = None,
    ) -> None:
        self.exchanges = recording.exchanges
        self._reload = reload
        self.play_counts: Counter[int] = Counter()
        self._upgrade = upgrade
        # The replies as read stay the models they were parsed into (vcrpy's are dicts).
        self._metadata = metadata_of(recording, lambda read: read)

    @classmethod
    def open(cls, path: Path, upgrade: Callable[[], Any]) -> ReplayOnlyCassette:
        """Read ``path``; a missing file is :class:`CassetteMissingError`, an unreadable
        one a ``CassetteUnreadableError`` (read as the vcrpy persister reads it:
        :func:`~toolbench.cassettes.persist.cassette_text`)."""
        text = cassette_text(path)
        if text is None:
            raise CassetteMissingError(f"no cassette {path}")
        # A recorded provider error is never played (:func:`.faults.answered`).
        return cls(
            answered(rec.parse(text, str(path))),
            upgrade,
            lambda: answered(rec.parse(text, str(path))),
        )

    @property
    def data(self) -> list[rec.RecordedExchange]:
        """The exchanges (only their number is asked of a cassette that records nothing)."""
        return self.exchanges

    @property
    def play_count(self) -> int:
        return sum(self.play_counts.values())

    def status(self, index: int) -> int:
        """The HTTP status of the ``index``-th recorded reply."""
        return self.exchanges[index].response.status

    def reply_body(self, index: int) -> dict[str, Any] | None:
        """The JSON object a recorded 2xx reply carried (None: a refusal, a stream, a body
        that is not an object), counted as a play. Each play is a copy, as each was
        decoded anew from vcrpy's cassette: what a reader keeps or changes of one play
        never reaches the next (a copy is cheap beside the trial)."""
        response = self.exchanges[index].response
        body = response.body
        if response.status // 100 != 2 or response.chunks is not None or type(body) is not dict:
            return None
        again = self.play_counts[index] > 0
        self.play_counts[index] += 1
        if not again:
            return body
        if self._reload is None:
            return copy.deepcopy(body)
        fresh = self._reload().exchanges[index].response.body
        return fresh if type(fresh) is dict else None

    def upgrade(self) -> Any:
        """vcrpy's cassette of the same file, with what this one played."""
        cassette = self._upgrade()
        cassette.play_counts.update(self.play_counts)
        return cassette
