"""Rate limits shared by a Ray cluster's workers: one named actor holds the windows.

``[rate_limits]`` bound a provider account, so every worker of a run, on any node, must
count against the same window and obey the same pause after a 429. The SQLite file
(:mod:`toolbench.providers.rate_store`) serves the processes of one machine; across nodes
the state lives in one Ray actor, :class:`RateWindows`, and every worker's limiter asks
it through :class:`ActorRateStore` (the same :class:`~toolbench.providers.rate_store.RateStore`
questions: admit one request now, or how long to wait; pause a provider). Its clock is
the actor's own, so nodes whose clocks differ still share one window.

The actor is named (:data:`ACTOR_NAME` in :data:`NAMESPACE`) and detached: every run
driven on one cluster shares it (an account's limits hold for all of them, as the
SQLite file's do for the runs of one machine), and a run that ends does not take it
from another still running. It holds the last window only and uses no CPU; a Ray
instance toolbench started itself stops it with the instance. It is restarted if its
process dies (what it held was a minute of history).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from toolbench.providers.rate_limits import Limiter, RateLimits, install
from toolbench.providers.rate_store import wait_for

ACTOR_NAME = "toolbench-rate-limits-v1"
"""The actor's name (its version: a driver of another toolbench asks another actor)."""
NAMESPACE = "toolbench"


class RateWindows:
    """The windows and pauses of every provider, in one process (the actor's)."""

    def __init__(self) -> None:
        self.sent: dict[str, deque[tuple[float, int]]] = {}
        self.paused: dict[str, float] = {}

    def admit(
        self, provider: str, rpm: int | None, tpm: int | None, tokens: int, window_s: float
    ) -> float:
        now = time.time()
        until = self.paused.get(provider, 0.0)
        if until > now:
            return until - now
        sent = self.sent.setdefault(provider, deque())
        while sent and sent[0][0] <= now - window_s:
            sent.popleft()
        wait = wait_for(list(sent), rpm, tpm, tokens, now, window_s)
        if wait == 0.0:
            sent.append((now, tokens))
        return wait

    def pause(self, provider: str, seconds: float) -> None:
        self.paused[provider] = max(self.paused.get(provider, 0.0), time.time() + seconds)


class ActorRateStore:
    """:class:`~toolbench.providers.rate_store.RateStore` over the cluster's actor (the
    limiter asks it from a worker thread: a blocking ``ray.get`` is its answer)."""

    def __init__(self, ray: ModuleType, actor: Any) -> None:
        self.ray, self.actor = ray, actor

    def admit(
        self, provider: str, rpm: int | None, tpm: int | None, tokens: int, window_s: float
    ) -> float:
        wait: float = self.ray.get(self.actor.admit.remote(provider, rpm, tpm, tokens, window_s))
        return wait

    def pause(self, provider: str, seconds: float) -> None:
        self.ray.get(self.actor.pause.remote(provider, seconds))


@dataclass(frozen=True)
class SharedRates:
    """What a worker needs to count against the driver's limits: the limits, their window
    and the actor (a handle Ray passes to the worker)."""

    limits: RateLimits
    window_s: float
    actor: Any

    def install(self, ray: ModuleType) -> None:
        """Make these limits the process's, counted in the actor."""
        install(self.limits, store=ActorRateStore(ray, self.actor), window_s=self.window_s)


def shared_rates(ray: ModuleType, limiter: Limiter) -> SharedRates | None:
    """The driver's installed limits moved onto the cluster's actor (created when no run
    has yet), for the driver and its workers alike; None when none are installed (a
    replay, or no ``[rate_limits]``)."""
    if not limiter.limits:
        return None
    where = {"name": ACTOR_NAME, "namespace": NAMESPACE, "lifetime": "detached"}
    again = {"max_restarts": -1, "max_task_retries": -1}
    actor = (
        ray.remote(RateWindows).options(**where, get_if_exists=True, num_cpus=0, **again).remote()
    )
    shared = SharedRates(limiter.config, limiter.window_s, actor)
    shared.install(ray)
    return shared
