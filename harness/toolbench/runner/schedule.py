"""Carrying out a plan: which trial runs when, how it reaches its model, where it is
scored, and what is written of it.

The scheduler owns what the trials share while they run:

- concurrency: ``--concurrency`` trials at once per model (a variant shares its model's
  limit); a kind with a width of its own (the embedded models share this machine's
  cores) shares that width across its models' live trials (a replay calls no server; a
  replayed trial that goes live takes its place in that width then);
- the budget: once ``--budget`` is used up no trial starts (those in flight finish; the
  rest are left for ``--resume``);
- the replay policy the plan decided for each trial (:data:`~.plan.ReplayPolicy`): a
  trial is driven once; under ``replay_then_live`` it is replayed, and goes live (its
  endpoint made live, which may start a server) at the first request its cassette
  cannot answer, recording what is missing;
- where a trial is scored: on the event loop while no trial waits on a server (nothing
  to stall), else in a worker thread unless its scoring is known to be quick;
- the first storage fault, which stops the run (:mod:`.halt`).

One bad trial never ends a run: :func:`~toolbench.runner.drive.run_trial` turns every
fault into a status, and whatever escapes it still writes the trial's line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager

from toolbench.cassettes import register_api_base, router
from toolbench.environments.mcp_pool import close_pools
from toolbench.errors import StorageError
from toolbench.formats.base import Format
from toolbench.providers.kind_registry import Providers
from toolbench.providers.model_api import Endpoint, ModelAPI, ProviderSettings
from toolbench.results import TrialResult, TurnRecord
from toolbench.runner.collector import run_collector
from toolbench.runner.compact import compact
from toolbench.runner.drive import EndpointFor, OnLoop, TrialSpec, harness_result, run_trial
from toolbench.runner.halt import Halt
from toolbench.runner.model_params import API_BASE
from toolbench.runner.plan import Plan, PlannedTrial
from toolbench.runner.variants import bare_model
from toolbench.scoring.quick import replies_are_short, scenario_scores_quickly
from toolbench.store import ResultsAppender, results_path

ProgressHook = Callable[[TrialResult], None]


def run_schedule(plan: Plan, on_result: ProgressHook) -> int:
    """Drive every planned trial, writing each line as it finishes; returns how many
    trials the budget left unstarted. Raises the run's first storage fault."""
    # A run allocates many short-lived objects per trial: see runner/collector.py.
    with run_collector():
        try:
            return asyncio.run(_Scheduler(plan, on_result).run())
        finally:  # a pooled MCP server lasts the trials run here (a Ray worker's batch)
            close_pools()


class _Scheduler:
    def __init__(self, plan: Plan, on_result: ProgressHook) -> None:
        opts = plan.options
        self.plan, self.on_result = plan, on_result
        self.own = plan.matrix.api_bases
        self.providers = Providers(ProviderSettings(
            api_base=opts.api_base, api_bases=self.own, timeout_s=opts.timeout_s,
            max_tokens=opts.max_tokens, log_dir=str(plan.run_dir / "logs"),
        ))  # fmt: skip
        self.limits: dict[str, asyncio.Semaphore] = {}
        self.deadline = None if opts.budget_s is None else time.monotonic() + opts.budget_s
        self.results: ResultsAppender | None = None
        self.halt = Halt()  # the first storage fault stops the run (runner/halt.py)
        self.not_run = 0
        self.live = 0
        """Trials talking to a server now (decides where a trial is scored)."""
        self.quick: dict[int, bool] = {}
        """Whether a scenario scores quickly, by scenario (the plan holds each for the run)."""

    async def run(self) -> int:
        # Recorded and matched as a placeholder host: a replay finds its cassettes whatever
        # the port (and needs no server: a matched request never leaves the process).
        register_api_base(self.plan.options.api_base)
        for url in self.own.values():
            register_api_base(url)
        try:
            with router(), ResultsAppender(results_path(self.plan.run_dir)) as results:
                self.results = results
                self.halt.tasks = [asyncio.ensure_future(self.one(t)) for t in self.plan.trials]
                outcomes = await asyncio.gather(*self.halt.tasks, return_exceptions=True)
        finally:
            self.providers.close()
        if self.halt.fault is not None:
            raise self.halt.fault
        # Every other trial has finished and been written; now report what could not be.
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return self.not_run

    def _limit(self, trial: PlannedTrial) -> asyncio.Semaphore:
        shared = self._width(trial.spec) if trial.policy == "live" else None
        if shared is not None:
            return shared
        width = self.plan.options.concurrency  # variants share a model's limit
        return self.limits.setdefault(bare_model(trial.spec.model), asyncio.Semaphore(width))

    def _width(self, spec: TrialSpec) -> asyncio.Semaphore | None:
        """The live trials of a kind with a width of its own (None: it has none)."""
        api = self.providers.for_model(bare_model(spec.model))
        if api.width is None:
            return None
        return self.limits.setdefault(api.name, asyncio.Semaphore(api.width))

    async def one(self, trial: PlannedTrial) -> None:
        spec = trial.spec
        async with self._limit(trial):
            if self.halt.stopped or (
                self.deadline is not None and time.monotonic() >= self.deadline
            ):
                self.not_run += 1
                return
            try:
                result = await self.drive(trial)
            except Exception as exc:  # run_trial never raises; this is the last net
                result = harness_result(spec, exc)
        assert self.results is not None  # open while trials run
        try:
            self.results.append(compact(result))
        except StorageError as exc:
            self.halt.stop(exc)
            return
        self.on_result(result)
        self.halt.check(result)

    async def drive(self, trial: PlannedTrial) -> TrialResult:
        """The trial under its replay policy, driven once. ``replay_then_live`` replays
        without a server until its cassette cannot answer a request (a turn it never
        recorded; a file it could not read, moved aside): from then on the trial is live
        (counted so, within its kind's width) and records what is missing."""
        spec, on_loop = trial.spec, self._on_loop(trial.spec)
        if trial.policy == "live":
            with self._counted_live():
                return await run_trial(spec, self._endpoint_for(True), on_loop)
        if trial.policy == "replay":
            return await run_trial(spec, self._endpoint_for(False), on_loop)
        async with AsyncExitStack() as held:

            async def go_live(model: str, fmt: Format) -> tuple[ModelAPI, Endpoint]:
                width = self._width(spec)
                if width is not None:
                    await held.enter_async_context(width)
                held.enter_context(self._counted_live())
                return await self._endpoint_for(True)(model, fmt)

            return await run_trial(spec, self._endpoint_for(False), on_loop, go_live)

    @contextmanager
    def _counted_live(self) -> Iterator[None]:
        """A trial talking to a server (decides where trials are scored)."""
        self.live += 1
        try:
            yield
        finally:
            self.live -= 1

    def _endpoint_for(self, live: bool) -> EndpointFor:
        async def endpoint_for(model: str, fmt: Format) -> tuple[ModelAPI, Endpoint]:
            # A variant (MODEL@NAME) is its bare model called with the variant's parameters.
            api = self.providers.for_model(bare_model(model))
            endpoint = await api.endpoint(bare_model(model), fmt, live)
            mine = dict(self.plan.matrix.params.get(model, {}))
            mine.pop(API_BASE, None)  # where the requests go (the endpoint's), not a parameter
            if "max_tokens" in mine:
                # A --model-param max_tokens replaces the harness's cap (it is asked instead).
                endpoint.params.pop("max_tokens", None)
            endpoint.model_params = mine
            return api, endpoint

        return endpoint_for

    def _on_loop(self, spec: TrialSpec) -> OnLoop:
        """Whether ``spec``'s trial is scored on the event loop: while no trial talks to a
        server (no request in flight for its scoring to stall; see ``drive._score``), or
        while one does, if its scoring is known to be quick."""

        def ask(turns: Sequence[TurnRecord]) -> bool:
            if self.live == 0:
                return True
            known = self.quick.get(id(spec.scenario))
            if known is None:
                known = self.quick[id(spec.scenario)] = scenario_scores_quickly(spec.scenario)
            return known and replies_are_short(turns)

        return ask
