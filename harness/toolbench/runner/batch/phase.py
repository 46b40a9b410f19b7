"""``run --batch``: a phase before the run that answers its single-turn trials through
the providers' batch APIs and leaves their cassettes as if they had been recorded live.

For each planned trial that would go live and is one model request
(:func:`~.first_request.single_turn`), the request is captured as the live call would
send it (:mod:`.first_request`); the requests are grouped by provider, address and key,
and each group is one batch (:mod:`.batch_apis`): submitted, asked after every
:data:`POLL_S` seconds with a progress line, and fetched once it ended. Each answer
becomes the trial's cassette (:mod:`.answer_cassette`) and the trial is then replayed by
the run like any recorded one. What the batch did not answer is a typed code on its
trial, written at once (the run goes on): a batch refused at creation or validation
(``infra.batch_rejected``), a request it answered with an error
(``infra.batch_failed``), one it left unanswered when it expired or when ``--timeout``
ran out (``infra.batch_expired``: the batch is cancelled, what it answered before is
kept), one it ended without a result for (``infra.batch_missing``).
"""

from __future__ import annotations

import asyncio
import contextlib
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
    Outcome,
    key_headers,
)
from toolbench.runner.batch.batch_options import batch_provider
from toolbench.runner.batch.first_request import Captured, capture, live_endpoint, single_turn
from toolbench.runner.compact import compact
from toolbench.runner.drive import TrialSpec, harness_result
from toolbench.runner.plan import Plan, PlannedTrial
from toolbench.store import ResultsAppender, results_path

POLL_S = 10.0
"""Seconds between two asks of a batch's state."""
CANCEL_GRACE_S = 60.0
"""How long a batch cancelled at ``--timeout`` is waited for, for what it answered."""
WINDOW_S = 24 * 3600.0
"""The longest wait without ``--timeout``: the batches' completion window (24 h)."""
HTTP_TIMEOUT_S = 120.0
CAPTURE_WIDTH = 16
"""Requests captured at once (each waits on LiteLLM's handling of the refusal)."""

Say = Callable[[str], None]
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

    def _fail_all(self, group: _Group, code: str, message: str) -> None:
        for cid, _got, _api, _endpoint in group.trials:
            self.failed[int(cid[1:])] = Failed(code, message)

    async def _one(self, client: httpx.AsyncClient, group: _Group) -> None:
        """One batch; whatever goes wrong in it fails its trials (typed), never the run,
        except a cassette that cannot be written: the run stops on it, as it would live."""
        try:
            await self._batch(client, group)
        except CassetteWriteError as exc:
            raise StorageError(str(exc)) from None
        except Exception as exc:  # a toolbench bug: this batch's trials only
            why = f"{type(exc).__name__}: {redact(str(exc))}"[:2000]
            for cid, _got, _api, _endpoint in group.trials:
                self.failed.setdefault(int(cid[1:]), Failed(codes.HARNESS_ERROR, why))

    async def _batch(self, client: httpx.AsyncClient, group: _Group) -> None:
        """Submit one batch, wait for it, and take what it answered."""
        label = f"batch {group.provider} ({len(group.trials)} requests)"
        try:
            wire: BatchWire = batch_apis.WIRES[group.provider](client, group.url, group.headers)
            items = [Item(cid, got.http.url.path, got.body) for cid, got, _a, _e in group.trials]
            batch_id = await wire.submit(items)
        except (BatchRefused, httpx.HTTPError, ValueError) as exc:
            why = redact(str(exc) or type(exc).__name__)
            self.say(f"{label}: refused: {why}")
            refused = f"the provider refused the batch: {why}"
            self._fail_all(group, codes.INFRA_BATCH_REJECTED, refused)
            return
        left_code = await self._wait(wire, batch_id, label, group)
        if left_code is None:
            return
        try:
            outcomes = await wire.results(batch_id)
        except (httpx.HTTPError, ValueError) as exc:
            why = redact(str(exc) or type(exc).__name__)
            self.say(f"{label}: {batch_id}: results not fetched: {why}")
            self._fail_all(group, codes.INFRA_BATCH_MISSING,
                           f"the batch's results could not be fetched: {why}")  # fmt: skip
            return
        await self._take(group, outcomes, left_code)

    async def _wait(self, wire: BatchWire, batch_id: str, label: str, group: _Group) -> str | None:
        """Poll until the batch ends; the code for a request it left without a result
        (None: the batch was refused, its trials failed)."""
        t0 = time.monotonic()
        deadline, cancelled = t0 + self.wait_s, False
        while True:
            try:
                state = await wire.state(batch_id)
            except (httpx.HTTPError, ValueError) as exc:  # asked again at the next poll
                self.say(f"{label}: {batch_id}: state not read: {redact(str(exc))}")
                state = None
            if state is not None:
                self.say(f"{label}: {batch_id} {state.status}, {state.done}/{state.total}"
                         f" answered, {time.monotonic() - t0:.0f}s")  # fmt: skip
                if state.refused is not None:
                    self._fail_all(group, codes.INFRA_BATCH_REJECTED,
                                   f"the provider failed the batch: {state.refused}")  # fmt: skip
                    return None
                if state.ended:
                    expired = cancelled or state.status in ("expired", "cancelled")
                    return codes.INFRA_BATCH_EXPIRED if expired else codes.INFRA_BATCH_MISSING
            now = time.monotonic()
            if not cancelled and now >= deadline:
                self.say(f"{label}: {batch_id} not ended within --timeout; cancelled")
                cancelled = True
                with contextlib.suppress(httpx.HTTPError):
                    await wire.cancel(batch_id)
                deadline = now + CANCEL_GRACE_S
            elif cancelled and now >= deadline:
                return codes.INFRA_BATCH_EXPIRED
            await asyncio.sleep(min(POLL_S, max(0.0, deadline - now)))

    async def _take(self, group: _Group, outcomes: dict[str, Outcome], left_code: str) -> None:
        for cid, got, api, endpoint in group.trials:
            index = int(cid[1:])
            outcome = outcomes.get(cid)
            if outcome is None:
                why = ("the batch expired or was cancelled at --timeout before answering it"
                       if left_code == codes.INFRA_BATCH_EXPIRED
                       else "the batch ended without a result for it")  # fmt: skip
                outcome = Failed(left_code, why)
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
        return dataclasses.replace(self.plan, trials=rest)


def failed_result(spec: TrialSpec, failed: Failed) -> TrialResult:
    """The line of a trial its batch did not answer: an infrastructure fault, typed (a
    ``harness.*`` code: toolbench's own fault, ``harness_error``)."""
    result = harness_result(spec, RuntimeError(failed.message))
    if failed.code.startswith("harness."):  # toolbench's own fault, as a trial's would be
        result.error_code = failed.code
        return result
    result.status = "infra_error"
    result.error_code, result.infra_error, result.error_type = (
        failed.code, failed.message, None,
    )  # fmt: skip
    return result
