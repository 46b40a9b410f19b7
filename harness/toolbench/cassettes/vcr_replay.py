"""vcrpy's cassettes as toolbench opens them: to record (``--record new | all``), and for
replay only, the cassette a ``--record none`` trial hands to the HTTP router when a
request reaches HTTP (``--replay full``, a reply the provider boundary could not answer).
Imported only then: importing vcrpy is a large part of a replay's start-up."""

from __future__ import annotations

from typing import Any

from vcr.cassette import Cassette
from vcr.persisters.filesystem import CassetteNotFoundError


class RecordingCassette(Cassette):  # type: ignore[misc]
    """A cassette opened to record (``--record new | all``). vcrpy's ``append`` deep-copies
    each response before the recording hook, so that the hook's changes cannot reach what
    the client reads; toolbench's hook (:func:`~toolbench.cassettes.scrub.scrub_response`)
    copies what it changes and nothing reads the dict vcrpy built afterwards, so the walk
    of every header and the body is not made."""

    def append(self, request: Any, response: Any) -> None:
        request = self._before_record_request(request)
        if not request:
            return
        response = self._before_record_response(response)
        if response is None:
            return
        self.data.append((request, response))
        self.dirty = True


class VcrReplayCassette(Cassette):  # type: ignore[misc]
    """A cassette opened for replay only (``--record none``): its interactions are taken
    as they were recorded (scrubbed then), not put through the recording hooks again.
    vcrpy's load copies and re-redacts every request and response, which cost as much as
    reading the file itself; nothing is written back, so nothing needs it."""

    def _load(self) -> None:
        try:
            requests, responses, *metadata = self._persister.load_cassette(
                self._path, serializer=self._serializer
            )
        except CassetteNotFoundError:
            return
        self.data = list(zip(requests, responses, strict=True))
        self._old_interactions = list(self.data)
        self._loaded_count = len(self.data)
        self.dirty = False
        self.rewound = True
        self._metadata = metadata[0] if metadata else {}
