"""``run --batch``: a phase before the run that answers its single-turn trials through
the providers' batch APIs and leaves their cassettes as if they had been recorded live.

For each planned trial that would go live and is one model request
(:func:`~.first_request.single_turn`), the request is captured as the live call would
send it (:mod:`.first_request`); the requests are grouped by provider, address and key,
and each group is one batch (:mod:`.batch_apis`): submitted, waited for with a progress
line and fetched once it ended (:mod:`.batch_wait`). Each answer becomes the trial's
cassette (:mod:`.answer_cassette`) and the trial is then replayed by the run like any
recorded one. What the batch did not answer is a typed code on its trial, written at
once (the run goes on): a batch refused at creation or validation
(``infra.batch_rejected``), a request it answered with an error
(``infra.batch_failed``), one it left unanswered when it expired or when ``--timeout``
or ``--budget`` ran out (``infra.batch_expired``: the batch is cancelled, what it
answered before is kept), one it ended without a result for (``infra.batch_missing``).
``--resume --batch`` submits again those a live call would have asked again
(:mod:`.batch_retry`).

``--budget`` counts from the phase's start: once it is used up no request is captured
and no batch submitted (those trials are left unstarted, for ``--resume``), a batch
still running is cancelled, and the run that follows gets what is left of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from toolbench import codes
from toolbench.cassettes import register_api_base, router
from toolbench.errors import CassetteWriteError, StorageError
from toolbench.providers.kind_registry import Providers
from toolbench.providers.model_api import Endpoint, ModelAPI, ProviderSettings
from toolbench.redaction import redact
from toolbench.results import TrialResult
from toolbench.runner.batch import batch_apis
from toolbench.runner.batch.answer_cassette import write_answer
from toolbench.runner.batch.batch_api import (
    Answered,
    BatchRefused,
    BatchWire,
    Failed,
    Item,
    key_headers,
    transport_code,
)
from toolbench.runner.batch.batch_options import batch_provider
from toolbench.runner.batch.batch_retry import failed_attempt
from toolbench.runner.batch.batch_wait import Deadline, Settled, settle
from toolbench.runner.batch.batch_wait import Say as Say  # run.py names it from here
from toolbench.runner.batch.first_request import Captured, capture, live_endpoint, single_turn
from toolbench.runner.compact import compact
from toolbench.runner.drive import TrialSpec, harness_result
from toolbench.runner.plan import Plan, PlannedTrial
from toolbench.store import ResultsAppender, results_path

WINDOW_S = 24 * 3600.0
"""The longest wait without ``--timeout``: the batches' completion window (24 h)."""
HTTP_TIMEOUT_S = 120.0
CAPTURE_WIDTH = 1
"""Requests captured at once. A capture never waits on the network (the route answers it
in the process), so captures side by side only take turns at LiteLLM's executor thread
and the interpreter: one at a time captures as much for the same CPU in less wall time
(``benchmarks/bench_batch_phase.py --width``, docs/benchmarks.md)."""

OnResult = Callable[[TrialResult], None]


@dataclass
class _Group:
    """The requests of one batch: one provider, one address, one key."""

    provider: str
    url: str
    headers: dict[str, str]
    trials: list[tuple[str, Captured, ModelAPI, Endpoint]] = field(default_factory=list)


def run_batch(plan: Plan, on_result: OnResult, say: Say | None = None) -> Plan:
    """Answer the plan's single-turn live trials through provider batches; the plan the
    run then carries out (answered trials replayed from their new cassettes, trials the
    batch failed already written with their code)."""
    if not any(t.policy == "live" and single_turn(t.spec) for t in plan.trials):
        return plan
    return asyncio.run(_Phase(plan, on_result, say or (lambda _line: None)).run())


class _Phase:
    def __init__(self, plan: Plan, on_result: OnResult, say: Say) -> None:
        opts = plan.options
        self.plan, self.on_result, self.say = plan, on_result, say
        self.providers = Providers(ProviderSettings(
            api_base=opts.api_base, api_bases=plan.matrix.api_bases, timeout_s=opts.timeout_s,
            max_tokens=opts.max_tokens, log_dir=str(plan.run_dir / "logs"),
        ))  # fmt: skip
        self.wait_s = opts.timeout_s if opts.timeout_s is not None else WINDOW_S
        self.budget = (None if opts.budget_s is None
                       else Deadline(time.monotonic() + opts.budget_s, "--budget"))  # fmt: skip
        self.failed: dict[int, Failed] = {}
        self.answered: set[int] = set()

    async def run(self) -> Plan:
        register_api_base(self.plan.options.api_base)
        for url in self.plan.matrix.api_bases.values():
            register_api_base(url)
        try:
            with router():
                groups = await self._groups()
                async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_S) as client:
                    await asyncio.gather(*(self._one(client, g) for g in groups))
        finally:
            self.providers.close()
        return self._rest()

    async def _captured(
        self, i: int, spec: TrialSpec, width: asyncio.Semaphore
    ) -> tuple[int, str, Captured, ModelAPI, Endpoint] | None:
        """Trial ``i``'s first request as live, with its batch provider (None: it stays
        live: its model has no batch API, or its kind sent nothing)."""
        async with width:
            if self.budget is not None and time.monotonic() >= self.budget.at:
                return None  # left unstarted, for --resume
            api, endpoint = await live_endpoint(self.providers, self.plan.matrix, spec)
            provider = batch_provider(spec.model, endpoint.api_base)
            got = None if provider is None else await capture(spec, api, endpoint)
        return None if provider is None or got is None else (i, provider, got, api, endpoint)

    async def _groups(self) -> list[_Group]:
        """The batches to send: the captured requests by provider, address and key, in
        the plan's order, each at most the provider's limit."""
        width = asyncio.Semaphore(CAPTURE_WIDTH)
        found = await asyncio.gather(*(
            self._captured(i, t.spec, width) for i, t in enumerate(self.plan.trials)
            if t.policy == "live" and single_turn(t.spec)
        ))  # fmt: skip
        groups: dict[tuple[str, str, tuple[tuple[str, str], ...]], _Group] = {}
        batches: list[_Group] = []  # every batch, in order (a key's last one in ``groups``)
        for i, provider, got, api, endpoint in filter(None, found):
            url = str(got.http.url).split("?")[0]
            headers = key_headers(dict(got.http.headers.items()))
            key = (provider, url, tuple(sorted(headers.items())))
            group = groups.get(key)
            if group is None or len(group.trials) >= batch_apis.MAX_REQUESTS[provider]:
                group = groups[key] = _Group(provider, url, headers)
                batches.append(group)
            group.trials.append((f"t{i}", got, api, endpoint))
        return batches

    def _fail_all(self, group: _Group, failed: Failed) -> None:
        for cid, _got, _api, _endpoint in group.trials:
            self.failed[int(cid[1:])] = failed

    async def _one(self, client: httpx.AsyncClient, group: _Group) -> None:
        """One batch; whatever goes wrong in it fails its trials (typed), never the run,
        except a cassette that cannot be written: the run stops on it, as it would live."""
        try:
            await self._batch(client, group)
        except CassetteWriteError as exc:
            raise StorageError(str(exc)) from None
        except Exception as exc:  # a toolbench bug: this batch's trials only
            why = Failed(codes.HARNESS_ERROR, f"{type(exc).__name__}: {redact(str(exc))}"[:2000])
            for cid, _got, _api, _endpoint in group.trials:
                self.failed.setdefault(int(cid[1:]), why)

    async def _batch(self, client: httpx.AsyncClient, group: _Group) -> None:
        """Submit one batch, wait for it (:mod:`.batch_wait`), and take what it answered.
        Once ``--budget`` is used up nothing is submitted: the group's trials are left
        unstarted, for ``--resume``."""
        label = f"batch {group.provider} ({len(group.trials)} requests)"
        if self.budget is not None and time.monotonic() >= self.budget.at:
            self.say(f"{label}: not submitted, --budget used up")
            return
        try:
            wire: BatchWire = batch_apis.WIRES[group.provider](client, group.url, group.headers)
            items = [Item(cid, got.http.url.path, got.body) for cid, got, _a, _e in group.trials]
            batch_id = await wire.submit(items)
        except (BatchRefused, httpx.HTTPError, ValueError) as exc:
            why = redact(str(exc) or type(exc).__name__)
            self.say(f"{label}: refused: {why}")
            refused = f"the provider refused the batch: {why}"
            self._fail_all(group, Failed(codes.INFRA_BATCH_REJECTED, refused, transport_code(exc)))
            return
        settled = await settle(client, wire, batch_id, self._deadline(), self.say, label)
        await self._take(group, settled)

    def _deadline(self) -> Deadline:
        """The wait's end: ``--timeout`` from now, or the ``--budget``'s end if sooner."""
        own = Deadline(time.monotonic() + self.wait_s, "--timeout")
        return own if self.budget is None or own.at <= self.budget.at else self.budget

    async def _take(self, group: _Group, settled: Settled) -> None:
        for cid, got, api, endpoint in group.trials:
            index = int(cid[1:])
            outcome = settled.outcomes.get(cid, settled.left)
            if isinstance(outcome, Answered):
                bad = await write_answer(got, outcome.body, api, endpoint)
                if bad is None:
                    self.answered.add(index)
                    continue
                outcome = bad
            self.failed[index] = outcome

    def _rest(self) -> Plan:
        """The plan left to run: answered trials replayed, failed ones written now."""
        rest: list[PlannedTrial] = []
        with ResultsAppender(results_path(self.plan.run_dir)) as results:
            for i, trial in enumerate(self.plan.trials):
                if i in self.failed:
                    result = failed_result(trial.spec, self.failed[i])
                    results.append(compact(result))
                    self.on_result(result)
                elif i in self.answered:
                    rest.append(dataclasses.replace(trial, policy="replay_then_live"))
                else:
                    rest.append(trial)
        opts = self.plan.options
        if self.budget is not None:  # the run gets what is left of it
            left = max(0.0, self.budget.at - time.monotonic())
            opts = dataclasses.replace(opts, budget_s=left)
        return dataclasses.replace(self.plan, trials=rest, options=opts)


def failed_result(spec: TrialSpec, failed: Failed) -> TrialResult:
    """The line of a trial its batch did not answer: an infrastructure fault, typed (a
    ``harness.*`` code: toolbench's own fault, ``harness_error``)."""
    result = harness_result(spec, RuntimeError(failed.message))
    result.attempts = [failed_attempt(failed)]
    if failed.code.startswith("harness."):  # toolbench's own fault, as a trial's would be
        result.error_code = failed.code
        return result
    result.status = "infra_error"
    result.error_code, result.infra_error, result.error_type = (
        failed.code, failed.message, None,
    )  # fmt: skip
    return result
