"""Requests and tokens per minute per provider, shared by every task and process.

A provider's limits belong to the account, not to one task: 32 tasks of one
``--concurrency``, or four shards started on one machine, each pacing itself, together
send four or 32 times what the account allows, and every 429 that follows costs a retry.
``toolbench.toml`` names the limits once::

    [rate_limits]
    state_file = "/tmp/toolbench-rates.sqlite"   # optional: where processes share them

    [rate_limits.openai]          # a LiteLLM provider prefix: openai/gpt-4o is "openai"
    rpm = 500                     # requests per minute (optional)
    tpm = 200000                  # tokens per minute (optional)

and every request to that provider waits, before it is sent, until it fits in the last
minute beside every request admitted before it, by any task of any process sharing the
state file (:mod:`.rate_store`), or, under ``--executor ray``, by any worker of the
cluster (the driver's :mod:`~toolbench.runner.executors.ray_rates` actor is their store,
whatever node they run on). Its tokens are estimated before sending as the
provider's own limiter counts them: the request's text at four characters a token, plus
its ``max_tokens``. A 429 with ``Retry-After`` from a provider with a table (an empty
one is enough) pauses that provider for every task and process, not only the task that
got it. The embedded local models (``local/...``) are this machine's own server and are
never limited.

The limits hold for the process (the account is shared by all its runs): the run
installs them (:func:`install`) when it is planned, and the call path asks
:func:`before_send` and tells :func:`seen_fault` through the installed table.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.providers.model_api import Endpoint, Fault
from toolbench.providers.provider_prefixes import PROVIDER_LIST
from toolbench.providers.rate_store import RateStore, SqliteRateStore, StoreUnusable
from toolbench.toml_file import read_toml

TABLE = "rate_limits"
KEYS = ("rpm", "tpm")
WINDOW_S = 60.0
"""The window of ``rpm`` and ``tpm``: a minute, as providers count them."""
PAUSE_CAP_S = 60.0
"""The longest pause a 429's ``Retry-After`` imposes on the whole provider (a server
asking for more fails its own trial: :data:`~toolbench.providers.attempts.RETRY_AFTER_CAP_S`)."""
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Limit:
    """One provider's limits (None: not limited on that count)."""

    rpm: int | None = None
    tpm: int | None = None


@dataclass(frozen=True)
class RateLimits:
    """The ``[rate_limits]`` of a ``toolbench.toml``."""

    limits: dict[str, Limit] = field(default_factory=dict)
    state_file: Path | None = None
    """Where processes share the state; None: :func:`default_state_file`."""
    source: str = "toolbench.toml"
    """The file the limits were read from (named in errors)."""


def default_state_file() -> Path:
    """One file per user on this machine: every run of this user shares it."""
    user = re.sub(r"[^A-Za-z0-9_.-]", "_", getpass.getuser())
    return Path(tempfile.gettempdir()) / f"toolbench-rate-limits-{user}.sqlite"


def _whole(source: str, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{source}: {where}: expected a whole number of at least 1, got {value!r}")
    return value


def parse_rate_limits(data: dict[str, Any], source: str) -> RateLimits:
    """The ``rate_limits`` table of a parsed TOML file (``source`` names it in errors)."""
    table = data.get(TABLE, {})
    if not isinstance(table, dict):
        raise UserError(f"{source}: {TABLE}: expected a table of providers")
    limits: dict[str, Limit] = {}
    state_file: Path | None = None
    for name, value in table.items():
        where = f"{TABLE}.{name}"
        if name == "state_file":
            if not isinstance(value, str) or not value.strip():
                raise UserError(f"{source}: {where}: expected a file path")
            state_file = Path(value).expanduser()
            continue
        if name not in PROVIDER_LIST:
            raise UserError(
                f"{source}: {where}: not a provider (a LiteLLM provider prefix, e.g. "
                "openai, anthropic; or state_file)"
            )
        if not isinstance(value, dict):
            raise UserError(f"{source}: {where}: expected a table (rpm, tpm)")
        for key in value:
            if key not in KEYS:
                raise UserError(f"{source}: {where}.{key}: unknown key (rpm, tpm)")
        rpm, tpm = value.get("rpm"), value.get("tpm")
        limits[name] = Limit(
            rpm=None if rpm is None else _whole(source, f"{where}.rpm", rpm),
            tpm=None if tpm is None else _whole(source, f"{where}.tpm", tpm),
        )
    return RateLimits(limits, state_file, source)


def read_rate_limits(path: Path) -> RateLimits:
    """The ``[rate_limits]`` of ``path`` (none when the file is absent)."""
    if not path.is_file():
        return RateLimits()
    return parse_rate_limits(read_toml(path), str(path))


class Limiter:
    """The installed limits over their shared store. ``window_s``: the window they count
    over (None: :data:`WINDOW_S`, read now; a Ray worker is given its driver's)."""

    def __init__(
        self, limits: RateLimits, store: RateStore | None = None, window_s: float | None = None
    ) -> None:
        self.config = limits
        self.limits = limits.limits
        self.window_s = WINDOW_S if window_s is None else window_s
        self.store: RateStore | None = store
        if self.limits and store is None:  # opened now: a bad state file stops the run here
            try:
                self.store = SqliteRateStore(limits.state_file or default_state_file())
            except StoreUnusable as exc:
                raise UserError(f"{limits.source}: {TABLE}.state_file: {exc}") from None

    def _store(self) -> RateStore:
        assert self.store is not None, "a limiter with limits has its store"
        return self.store

    def limit_of(self, endpoint: Endpoint) -> tuple[str, Limit] | None:
        """The provider and its limits an endpoint's requests count against (None: none)."""
        if not self.limits or endpoint.null_content_as_empty:  # the embedded llama-server
            return None
        provider, slash, _ = endpoint.model.partition("/")
        limit = self.limits.get(provider) if slash else None
        return None if limit is None else (provider, limit)

    async def before_send(self, endpoint: Endpoint, request: dict[str, Any]) -> None:
        found = self.limit_of(endpoint)
        if found is None:
            return
        provider, limit = found
        tokens = estimated_tokens(request) if limit.tpm is not None else 0
        store = self._store()
        while True:
            wait = await asyncio.to_thread(
                store.admit, provider, limit.rpm, limit.tpm, tokens, self.window_s
            )
            if wait <= 0.0:
                return
            await asyncio.sleep(wait + 0.001)

    def seen_fault(self, endpoint: Endpoint, fault: Fault) -> None:
        found = self.limit_of(endpoint)
        if found is None or fault.status != 429 or not fault.retry_after:
            return
        self._store().pause(found[0], min(fault.retry_after, PAUSE_CAP_S))


def estimated_tokens(request: dict[str, Any]) -> int:
    """What a provider's limiter counts for a request before it is answered: its text
    (messages and tools) at :data:`CHARS_PER_TOKEN` characters a token, plus the most
    it may answer."""
    text = json.dumps([request.get("messages"), request.get("tools")], default=str)
    most = request.get("max_tokens") or request.get("max_completion_tokens") or 0
    return len(text) // CHARS_PER_TOKEN + (most if isinstance(most, int) else 0)


_installed = Limiter(RateLimits())


def install(
    limits: RateLimits, live: bool = True, store: RateStore | None = None,
    window_s: float | None = None,
) -> None:  # fmt: skip
    """Make ``limits`` the process's (a run does when it is planned). A run that cannot
    go live (``--record none``) installs none: its cassettes answer, no provider does.
    ``store``: where they are shared (None: the SQLite file of ``[rate_limits]``; the
    Ray executor gives its cluster's actor, :mod:`toolbench.runner.executors.ray_rates`)."""
    global _installed
    _installed = Limiter(limits if live else RateLimits(), store, window_s)


def installed() -> Limiter:
    """The process's limiter (what an executor shares with its workers)."""
    return _installed


def reinstall(limiter: Limiter) -> None:
    """Make ``limiter`` the process's again (an executor, after a run it replaced it for)."""
    global _installed
    _installed = limiter


async def before_send(endpoint: Endpoint, request: dict[str, Any]) -> None:
    """Wait until ``request`` to ``endpoint`` fits its provider's limits (the hook before
    every attempt sent)."""
    await _installed.before_send(endpoint, request)


def seen_fault(endpoint: Endpoint, fault: Fault) -> None:
    """A 429 with ``Retry-After`` pauses its provider for every task and process."""
    _installed.seen_fault(endpoint, fault)
