"""Shards of a trial matrix: which part of a run ``run --shard K/N`` executes.

A trial belongs to shard ``K`` of ``N`` when a stable hash of its key (model, format,
scenario id, sample) is ``K - 1`` modulo ``N``: the first 8 bytes of the SHA-256 of the
key's fields joined by NUL bytes, read big-endian. The split depends only on the key,
never on the order of ``--models``, ``--formats`` or the scenario files, on the Python
version or on ``PYTHONHASHSEED``, so N machines given the same matrix run disjoint parts
that together are the whole, and a re-run of one shard runs the same trials again.

This lives in the store (not the runner) because ``merge`` checks shards too: a shard
run must hold every trial of its part before it is merged.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from toolbench.errors import UserError
from toolbench.results import Shard

__all__ = ["Shard", "file_sha256", "parse_shard", "shard_of"]

_SPEC = re.compile(r"([0-9]+)/([0-9]+)")


def parse_shard(text: str, option: str = "--shard") -> Shard:
    """``K/N`` with ``1 <= K <= N``, written exactly so (ASCII digits, no spaces);
    anything else is one line naming the option. ``' 1 / 2 '`` is refused: the shard is
    the part of a matrix that N machines split between them, and a spec padded by a
    quoting slip (or in other digits) is a typo to point at, not a form to guess."""
    m = _SPEC.fullmatch(text)
    if m is None:
        raise UserError(f"{option}: '{text}' is not K/N (two whole numbers, e.g. 1/4)")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1:
        raise UserError(f"{option}: '{text}': N must be at least 1")
    if k < 1:
        raise UserError(f"{option}: '{text}': K counts from 1 (1 <= K <= N)")
    if k > n:
        raise UserError(f"{option}: '{text}': K must be at most N (1 <= K <= N)")
    return Shard(index=k, count=n)


def shard_of(model: str, fmt: str, scenario_id: str, sample: int, count: int) -> int:
    """The shard (1-based, of ``count``) the trial with this key belongs to."""
    key = "\0".join((model, fmt, scenario_id, str(sample))).encode("utf-8")
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % count + 1


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
