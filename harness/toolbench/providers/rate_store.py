"""The state rate limits share: every request sent in the last window, and pauses.

One provider account's limits hold for every task of every process that uses it: the
tasks of one ``--concurrency``, and the shards of one matrix run as separate processes on
one machine. They share this state in one SQLite file (the standard library's; a write
transaction, ``BEGIN IMMEDIATE``, is the lock between processes, so no lock file and no
new dependency). :class:`RateStore` is the interface the limiter asks; another store (a
Ray actor serving a cluster's workers) answers the same two questions.

The window is a sliding log, not a bucket: a request is admitted when fewer than ``rpm``
requests (and fewer than ``tpm`` tokens, with its own) were admitted in the window before
it, so no window of that length ever holds more, however the processes interleave.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Protocol

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of the file; another version is refused (one line), not read."""
BUSY_MS = 30_000
"""How long a process waits for another's transaction (a few milliseconds each)."""


class StoreUnusable(Exception):
    """The state file cannot be opened or is of another schema (the user's to fix)."""


class RateStore(Protocol):
    """What the limiter asks of the shared state."""

    def admit(
        self, provider: str, rpm: int | None, tpm: int | None, tokens: int, window_s: float
    ) -> float:
        """Admit one request of ``tokens`` now (0.0), or the seconds to wait before
        asking again (a pause, or the window full)."""
        ...

    def pause(self, provider: str, seconds: float) -> None:
        """No request to ``provider`` is admitted for ``seconds`` from now (a later
        pause already set stands)."""
        ...


def wait_for(
    sent: list[tuple[float, int]], rpm: int | None, tpm: int | None, tokens: int,
    now: float, window_s: float,
) -> float:  # fmt: skip
    """Seconds until a request of ``tokens`` fits beside ``sent`` (time, tokens of each
    request admitted in the window, oldest first); 0.0: it fits now. A request larger
    than ``tpm`` on its own waits for an empty window, then goes alone."""
    wait = 0.0
    if rpm is not None and len(sent) >= rpm:
        wait = sent[len(sent) - rpm][0] + window_s - now
    if tpm is not None and sent:
        need = min(tokens, tpm)
        total = sum(t for _, t in sent)
        for at, used in sent:
            if total + need <= tpm:
                break
            total -= used
            wait = max(wait, at + window_s - now)
    return max(wait, 0.0)


class SqliteRateStore:
    """:class:`RateStore` in one SQLite file, shared by the processes of one machine."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # one connection, used from worker threads
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
            self._setup()
        except sqlite3.Error as exc:
            raise StoreUnusable(f"cannot use {path}: {exc}") from None
        except OSError as exc:
            raise StoreUnusable(f"cannot use {path}: {exc.strerror}") from None

    def _setup(self) -> None:
        db = self._db
        # The state is the last minute only: nothing to keep across a crash, so no
        # sync to disk per admission (WAL lets readers and the one writer overlap).
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise StoreUnusable(
                    f"{self.path} is of schema {version}, not {SCHEMA_VERSION}: delete it "
                    "while no run uses it"
                )
            db.execute("CREATE TABLE IF NOT EXISTS sent (provider TEXT, at REAL, tokens INT)")
            db.execute("CREATE INDEX IF NOT EXISTS sent_at ON sent (provider, at)")
            db.execute("CREATE TABLE IF NOT EXISTS paused (provider TEXT PRIMARY KEY, until REAL)")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def admit(
        self, provider: str, rpm: int | None, tpm: int | None, tokens: int, window_s: float
    ) -> float:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                db.execute("DELETE FROM sent WHERE provider = ? AND at <= ?",
                           (provider, now - window_s))  # fmt: skip
                row = db.execute("SELECT until FROM paused WHERE provider = ?", (provider,))
                paused = row.fetchone()
                if paused is not None and paused[0] > now:
                    wait = float(paused[0]) - now
                else:
                    wait = self._wait(provider, rpm, tpm, tokens, now, window_s)
                    if wait == 0.0:
                        db.execute("INSERT INTO sent VALUES (?, ?, ?)", (provider, now, tokens))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return wait

    def _wait(
        self, provider: str, rpm: int | None, tpm: int | None, tokens: int, now: float,
        window_s: float,
    ) -> float:  # fmt: skip
        """:func:`wait_for` over the window's rows, read only when the totals do not fit."""
        count, total = self._db.execute(
            "SELECT count(*), coalesce(sum(tokens), 0) FROM sent WHERE provider = ?",
            (provider,),
        ).fetchone()
        fits_rpm = rpm is None or count < rpm
        if fits_rpm and (tpm is None or count == 0 or total + min(tokens, tpm) <= tpm):
            return 0.0
        sent = self._db.execute(
            "SELECT at, tokens FROM sent WHERE provider = ? ORDER BY at", (provider,)
        ).fetchall()
        return wait_for(sent, rpm, tpm, tokens, now, window_s)

    def pause(self, provider: str, seconds: float) -> None:
        with self._lock:
            until = time.time() + seconds
            self._db.execute(
                "INSERT INTO paused VALUES (?, ?) ON CONFLICT (provider) "
                "DO UPDATE SET until = max(until, excluded.until)",
                (provider, until),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
