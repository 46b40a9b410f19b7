"""vcrpy's side of a replay-only cassette: the cassette a ``--record none`` trial hands to
the HTTP router when a request reaches HTTP (``--replay full``, a reply the provider
boundary could not answer). Imported only then: importing vcrpy costs 0.3-0.5 s of CPU."""

from __future__ import annotations

from vcr.cassette import Cassette
from vcr.persisters.filesystem import CassetteNotFoundError


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
