"""The driver's side of a Ray run's cassettes: what it sends with a batch, and what it
writes of what comes back.

The driver is the one process that reads and writes the run's cassette directory. With
each batch it sends the bytes of every cassette a trial may replay (:func:`to_send`);
a trial that records afresh (``--record all``, or no file yet) gets none. The worker
hands back each cassette a trial wrote, as the file's bytes, and the driver writes it
at the trial's path (:func:`keep`) through the cassette layer's own atomic save, with
the same mode and after the driver's redaction of known secrets (a worker's
environment may not know every secret the driver does): a save that fails is the same
``harness.cassette_write`` as in a local run, and stops the run the same way.

A cassette the driver cannot send as bytes (a FIFO or a device where the file should
be, one over the size limit, or only a file of the old layout) is rare: its trial is
run by the driver itself (:data:`HERE`), through the local executor's path, so it
fails or is recorded anew exactly as in a local run.
"""

from __future__ import annotations

import contextlib
import os
from typing import Final

from toolbench.cassettes.persist import CASSETTE_MODE, read_cassette, write_atomically
from toolbench.cassettes.recording import legacy_error
from toolbench.errors import CassetteUnreadableError
from toolbench.redaction import redact
from toolbench.runner.plan import PlannedTrial


class _Here:
    """The mark of a trial the driver runs itself."""


HERE: Final = _Here()


def to_send(trial: PlannedTrial) -> bytes | _Here | None:
    """The bytes of ``trial``'s cassette to send with its batch (None: nothing to replay
    from), or :data:`HERE`."""
    spec = trial.spec
    if spec.record == "all":
        return None  # recorded again whole: the old file is not read (use_cassette)
    try:
        raw = read_cassette(spec.cassette)
    except CassetteUnreadableError:
        return HERE
    if raw is None and legacy_error(spec.cassette) is not None:
        return HERE
    return raw


def keep(trial: PlannedTrial, written: bytes | None, moved_aside: str | None) -> None:
    """Apply to the driver's cassette of ``trial`` what its run on a worker did: the
    unreadable file moved aside under the name the worker gave it, then the file it
    wrote saved. Raises :class:`~toolbench.errors.CassetteWriteError` when it cannot be."""
    path = trial.spec.cassette
    if moved_aside is not None:
        with contextlib.suppress(FileNotFoundError):  # already gone: nothing to keep aside
            os.replace(path, path.with_name(moved_aside))
    if written is not None:
        write_atomically(path, redact(written.decode("utf-8")), CASSETTE_MODE)
