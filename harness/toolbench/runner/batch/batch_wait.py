"""Waiting on a submitted batch and fetching what it answered: one loop for every
provider (:class:`~.batch_api.BatchWire` gives the wire: its state, its cancel, its result
files and how to read one of their lines).

The batch is asked after every :data:`POLL_S` seconds, with a progress line, until it
ends or the wait's :class:`Deadline` (``--timeout``, or what is left of ``--budget``)
passes: then it is cancelled (both providers offer it) and waited for
:data:`CANCEL_GRACE_S` more, so what it answered before is kept. Whatever way it ends,
the answer is a :class:`Settled`: the outcome of each request it has a line for, and the
:class:`~.batch_api.Failed` every other request gets.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from toolbench import codes
from toolbench.redaction import redact
from toolbench.runner.batch.batch_api import BatchWire, Failed, Outcome, State

POLL_S = 10.0
"""Seconds between two asks of a batch's state."""
CANCEL_GRACE_S = 60.0
"""How long a batch cancelled at its deadline is waited for, for what it answered."""

Say = Callable[[str], None]


@dataclass(frozen=True)
class Deadline:
    """When the wait for a batch ends (``time.monotonic()``), and the option that set it."""

    at: float
    option: str
    """``--timeout`` or ``--budget``: named in the progress line and the trials' message."""


@dataclass(frozen=True)
class Settled:
    """What became of a batch's requests: by custom id, and for those it has no line for."""

    outcomes: dict[str, Outcome]
    left: Failed


async def settle(
    client: httpx.AsyncClient, wire: BatchWire, batch_id: str, deadline: Deadline,
    say: Say, label: str,
) -> Settled:  # fmt: skip
    """Wait for the batch to end (cancelling it at ``deadline``), then fetch its results."""
    left, has_results = await _wait(wire, batch_id, deadline, say, label)
    if not has_results:
        return Settled({}, left)
    try:
        outcomes = await fetch(client, wire, batch_id)
    except (httpx.HTTPError, ValueError) as exc:
        why = redact(str(exc) or type(exc).__name__)
        say(f"{label}: {batch_id}: results not fetched: {why}")
        return Settled({}, Failed(codes.INFRA_BATCH_MISSING,
                                  f"the batch's results could not be fetched: {why}"))  # fmt: skip
    return Settled(outcomes, left)


async def fetch(client: httpx.AsyncClient, wire: BatchWire, batch_id: str) -> dict[str, Outcome]:
    """Every line of the ended batch's result files, read by its wire (a later line for a
    request wins)."""
    out: dict[str, Outcome] = {}
    for url in await wire.result_files(batch_id):
        got = await client.get(url, headers=wire.headers)
        got.raise_for_status()
        for line in got.text.splitlines():
            found = wire.outcome(line)
            if found is not None:
                out[found[0]] = found[1]
    return out


def _cancelled(option: str) -> Failed:
    return Failed(codes.INFRA_BATCH_EXPIRED,
                  f"the batch was cancelled at {option} before answering it")  # fmt: skip


def _left(state: State, cancelled: str | None) -> Failed:
    """What a request the ended batch has no line for gets."""
    if cancelled is not None:
        return _cancelled(cancelled)
    if state.status in ("expired", "cancelled", "canceled"):
        return Failed(codes.INFRA_BATCH_EXPIRED, f"the batch {state.status} before answering it")
    return Failed(codes.INFRA_BATCH_MISSING, "the batch ended without a result for it")


async def _wait(
    wire: BatchWire, batch_id: str, deadline: Deadline, say: Say, label: str
) -> tuple[Failed, bool]:
    """Poll until the batch ends: what a request without a line gets, and whether the
    batch has results to fetch (False: the provider failed the whole batch, or it was
    not seen to end after its cancel)."""
    t0 = time.monotonic()
    until, cancelled = deadline.at, None
    while True:
        try:
            state = await wire.state(batch_id)
        except (httpx.HTTPError, ValueError) as exc:  # asked again at the next poll
            say(f"{label}: {batch_id}: state not read: {redact(str(exc))}")
            state = None
        if state is not None:
            say(f"{label}: {batch_id} {state.status}, {state.done}/{state.total}"
                f" answered, {time.monotonic() - t0:.0f}s")  # fmt: skip
            if state.refused is not None:
                why = f"the provider failed the batch: {state.refused}"
                return Failed(codes.INFRA_BATCH_REJECTED, why), False
            if state.ended:
                return _left(state, cancelled), True
        now = time.monotonic()
        if cancelled is None and now >= until:
            say(f"{label}: {batch_id} not ended within {deadline.option}; cancelled")
            cancelled = deadline.option
            with contextlib.suppress(httpx.HTTPError):
                await wire.cancel(batch_id)
            until = now + CANCEL_GRACE_S
        elif cancelled is not None and now >= until:
            return _cancelled(cancelled), True
        await asyncio.sleep(min(POLL_S, max(0.0, until - now)))
