"""Cassette files on disk: atomic saves, loud typed load failures, unreadable files moved
aside."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolbench.errors import CassetteUnreadableError, CassetteWriteError


def _check_loaded(requests: Any, responses: Any) -> None:
    for resp in responses:
        if not isinstance(resp, dict):
            raise ValueError("an interaction's response is not a mapping")
        int(resp["status"]["code"])
        if not isinstance(resp.get("headers", {}), dict):
            raise ValueError("response headers are not a mapping")
        if not isinstance(resp["body"], dict) or "string" not in resp["body"]:
            raise ValueError("response body has no string")
    if len(requests) != len(responses):
        raise ValueError("requests and responses differ in number")


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def cassette_text(path: Path) -> str | None:
    """The text of the cassette file at ``path`` (None: there is none); a file that is
    not UTF-8, is empty or cannot be read is a :class:`CassetteUnreadableError`."""
    try:  # opened, not asked about first: each ask of the file system costs
        text = path.read_bytes().decode("utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return None
    except UnicodeDecodeError:
        raise CassetteUnreadableError(str(path), "not UTF-8 text") from None
    except OSError as exc:
        raise CassetteUnreadableError(str(path), exc.strerror or str(exc)) from None
    if not text.strip():
        raise CassetteUnreadableError(str(path), "empty file")
    return text


class SafePersister:
    """vcrpy's file persister, made safe: atomic saves and loud, typed load failures.

    vcrpy writes a cassette in place (a kill mid-write leaves it torn) and treats an
    undecodable one as empty. Here a save goes to a temporary file in the same directory
    and is renamed over the cassette (:func:`os.replace` is atomic), and a cassette that
    cannot be read raises :class:`~toolbench.errors.CassetteUnreadableError`.
    """

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        from vcr.persisters.filesystem import CassetteNotFoundError
        from vcr.serialize import deserialize

        path = Path(cassette_path)
        text = cassette_text(path)
        if text is None:
            raise CassetteNotFoundError()
        try:
            loaded = deserialize(text, serializer)
            _check_loaded(loaded[0], loaded[1])
        except CassetteUnreadableError as exc:  # the serializer's own typed verdict
            raise type(exc)(str(path), exc.reason) from None
        except Exception as exc:  # any parse or shape error: the file is unreadable
            first = (str(exc).splitlines() or [""])[0][:200]
            raise CassetteUnreadableError(str(path), f"{type(exc).__name__}: {first}") from None
        return loaded

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        from vcr.serialize import serialize

        data = serialize(cassette_dict, serializer)
        write_atomically(Path(cassette_path), data, 0o666 & ~_UMASK)  # a cassette is data


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_temp_serial = itertools.count()


def _open_temp(target: str, mode: int) -> tuple[int, str]:
    """A new temporary file beside the file ``target`` (never one that exists:
    ``O_EXCL``), named by this process and a counter rather than
    :func:`tempfile.mkstemp`'s random letters, and opened without Python's file object: a
    live trial saves one cassette, and that machinery cost more than the write. A name
    left by a killed process with the same id is stepped over."""
    folder, sep, name = target.rpartition(os.sep)
    for _ in range(100):
        tmp = f"{folder}{sep}.{name}.{os.getpid()}-{next(_temp_serial)}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue
    return tempfile.mkstemp(dir=folder or sep or ".", prefix=f".{name}.", suffix=".tmp")


def write_atomically(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``
    (:func:`os.replace` is atomic: a kill mid-write never leaves a torn cassette).

    The temporary name does not end in ``.yaml`` or ``.json``: one left by a kill is never
    taken for a cassette. ``mode``: the file's permissions (set exactly, whatever the
    umask). Any failure is a :class:`~toolbench.errors.CassetteWriteError`. The path is
    handled as text: :mod:`pathlib`'s parts were 7% of the CPU of a live trial's save.
    """
    data = text.encode("utf-8")
    target = os.fspath(path)
    try:
        try:  # the folder made only when missing: a live trial saves one cassette
            fd, tmp = _open_temp(target, mode)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            fd, tmp = _open_temp(target, mode)
        try:
            try:
                os.fchmod(fd, mode)  # exactly, whatever the umask is now
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise CassetteWriteError(f"cannot write cassette {path}: {exc.strerror or exc}") from None


def move_aside(path: Path) -> Path:
    """Rename an unreadable cassette out of the way (kept for inspection, never replayed)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unreadable-{stamp}")
    os.replace(path, aside)
    return aside
