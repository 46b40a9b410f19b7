"""One writer per run directory: an advisory ``flock`` on ``<run>/.lock``.

Two processes appending to one ``results.jsonl`` (two ``--resume`` at once) each run the
trials the other has not written yet, and duplicate them. The lock is taken before the
finished trials are read and held until the run ends; the kernel drops it when the
process dies, so a killed run never leaves a stale lock. The file names the holder
(pid, host, start time) for the refusal message. POSIX only (``fcntl``).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from toolbench.errors import RunLockedError, UserError

LOCK_NAME = ".lock"


class RunLock:
    """An exclusive, non-blocking lock on a run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_NAME
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`RunLockedError` naming the process holding it.

        The holder's line is written with one unbuffered write: a full disk or a
        read-only folder is a :class:`~toolbench.errors.UserError` naming the file and
        the cause (exit 2, before any trial), never a buffered flush that fails again
        when the file is closed."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        fh = os.fdopen(fd, "r+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = describe_holder(fh.read())
            fh.close()
            raise RunLockedError(
                f"--out: {self.run_dir} is being written by another toolbench run "
                f"({holder}); wait for it to finish or stop it"
            ) from None
        line = json.dumps({
            "pid": os.getpid(), "host": socket.gethostname(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }).encode("utf-8")  # fmt: skip
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, line, 0)
        except OSError as exc:
            fh.close()  # nothing buffered: closing cannot fail again
            raise _unwritable(self.path, exc) from None
        self._fh = fh

    def release(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()  # closing the descriptor drops the flock


def _unwritable(path: Path, exc: OSError) -> UserError:
    return UserError(f"--out: cannot write {path}: {exc.strerror or exc}")


def describe_holder(text: str) -> str:
    """``pid 123 on host h since 2026-...`` from the lock file (or why it is unknown)."""
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on {info['host']} since {info['started_at']}"
    except (ValueError, KeyError, TypeError):
        return "holder unknown"
