"""``toolbench cassettes migrate DIR``: cassettes of the old layout converted to the one
recording format (:mod:`.recording`).

The old layout kept a plain trial in vcrpy's YAML (``<scenario>.yaml``, request keys and
latencies in its metadata) and a streamed one in an SSE cassette (``<scenario>.sse.json``,
chunks with offsets); version 2 of the JSON cassette kept a stream's chunks without their
decoded events; version 3 wrote each chunk as its own object (it is read as it is; here
it is rewritten as version 4 writes a stream, one body and its cuts, which reads faster).
Each is converted exchange by exchange, with nothing re-derived but the events, which are
read from the recorded chunks as the wire reader reads them: the bodies, chunks, offsets,
keys and latencies are the recorded ones, so a replay gives what it gave before. The new
file is written atomically, then the old one removed (a JSON file of an earlier version
is replaced in place); a file that cannot be converted is left as it was
and reported, and the others go on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

import toolbench.cassettes.recording as rec
from toolbench.cassettes.legacy_yaml import read_yaml, recording_of
from toolbench.cassettes.persist import write_atomically
from toolbench.cassettes.stream_framing import events_of

SSE_SUFFIX = ".sse.json"
YAML_SUFFIX = ".yaml"


@dataclass
class Migration:
    """What one ``migrate`` did: files converted, and those left as they were (why)."""

    converted: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def target_of(old: Path) -> Path:
    """The new cassette of an old-layout file (``x.yaml``, ``x.sse.json`` -> ``x.json``)."""
    name = old.name
    stem = name.removesuffix(SSE_SUFFIX) if name.endswith(SSE_SUFFIX) else old.stem
    return old.with_name(stem + rec.SUFFIX)


def convert(old: Path) -> rec.Recording:
    """The recording an old-layout file holds; ``ValueError`` says why it cannot be read."""
    text = old.read_bytes().decode("utf-8")
    if old.name.endswith(SSE_SUFFIX):
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("kind") != "toolbench-sse":
            raise ValueError("not an SSE cassette")
        if data.get("version") != 1:
            raise ValueError(f"SSE cassette version {data.get('version')!r} (this reads 1)")
        out = rec.Recording.model_validate({"exchanges": data.get("exchanges", [])})
        for ex in out.exchanges:
            if ex.response.chunks is None:
                ex.response.chunks = rec.Chunks()  # a stream recorded with no chunk: kept as one
        return out
    data = read_yaml(text)
    if not isinstance(data.get("interactions"), list):
        raise ValueError("not a vcrpy cassette (no interactions)")
    return recording_of(data)


def with_events(recording: rec.Recording) -> rec.Recording:
    """``recording`` at this version: each 2xx stream's decoded events beside its chunks."""
    recording.version = rec.VERSION
    for ex in recording.exchanges:
        if ex.response.chunks is not None:
            ex.response.events = events_of(ex.response)
    return recording


def earlier_version(path: Path) -> rec.Recording | None:
    """The recording of a JSON cassette of an earlier version (None: not one)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != rec.KIND:
        return None
    version = data.get("version")
    if not isinstance(version, int) or not PLAIN_EVENTS_VERSION <= version < rec.VERSION:
        return None
    data["version"] = rec.VERSION
    return rec.Recording.model_validate(data)


PLAIN_EVENTS_VERSION = 2
"""The first JSON cassette version (its streams' chunks without decoded events)."""


def old_files(directory: Path) -> list[Path]:
    """The old-layout cassettes under ``directory`` (or ``directory`` itself, a file)."""
    if directory.is_file():
        return [directory]
    found = [*directory.rglob(f"*{YAML_SUFFIX}"), *directory.rglob(f"*{SSE_SUFFIX}")]
    return sorted(p for p in found if p.is_file())


def json_files(directory: Path) -> list[Path]:
    """The JSON cassettes under ``directory`` (or ``directory`` itself) that may be of an
    earlier version."""
    if directory.is_file():
        name = directory.name
        return [directory] if name.endswith(rec.SUFFIX) and not name.endswith(SSE_SUFFIX) else []
    found = directory.rglob(f"*{rec.SUFFIX}")
    return sorted(p for p in found if p.is_file() and not p.name.endswith(SSE_SUFFIX))


def _failure(exc: Exception, typed: tuple[type[Exception], ...]) -> str:
    """Why a file was not converted: a reading error of the ``typed`` kinds by its type
    and first line; any other (a :class:`CassetteUnreadableError` of the checks) as it
    says."""
    if isinstance(exc, typed):
        first = (str(exc).splitlines() or [""])[0][:200]
        return f"{type(exc).__name__}: {first}"
    return str(exc)[:300]


def migrate(directory: Path) -> Migration:
    """Convert every old-layout cassette under ``directory`` (see the module doc)."""
    done = Migration()
    for path in json_files(directory):
        try:
            earlier = earlier_version(path)
            if earlier is None:
                continue
            recording = rec.parse(rec.dump(with_events(earlier)), str(path))
        except Exception as exc:
            done.failed.append((path, _failure(exc, (ValueError, ValidationError))))
            continue
        write_atomically(path, rec.dump(recording), 0o644)
        done.converted.append(path)
    for old in old_files(directory):
        new = target_of(old)
        if new.exists():
            done.failed.append((old, f"{new.name} already exists (not overwritten)"))
            continue
        try:
            recording = with_events(convert(old))
            # What the reader would refuse (events out of order, bad base64) is refused
            # now, with the old file kept.
            recording = rec.parse(rec.dump(recording), str(new))
        except Exception as exc:
            done.failed.append((old, _failure(exc, (OSError, ValueError, ValidationError))))
            continue
        write_atomically(new, rec.dump(recording), 0o644)
        old.unlink()
        done.converted.append(new)
    return done
