"""One trial: the conversation loop for a (model, format, scenario, sample).

Render with the format, call the model, parse, and for multi-turn scenarios feed the
scripted tool results back in the format's own way, up to ``max_turns``. With
``retry_on_parse_error`` a parse failure is fed back once and the recovery is scored
apart from first-try success. Scoring is the pure function :func:`score_trial`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolbench import __version__
from toolbench.errors import CassetteMissingError, InfraError, UnsupportedError
from toolbench.formats.base import Format, Message, ModelReply, RenderedRequest
from toolbench.results import TrialResult, TurnRecord
from toolbench.runner.cassettes import (
    RecordOption,
    TrialCassette,
    record_command,
    use_cassette,
)
from toolbench.runner.provider import Completion, Endpoint, complete
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.script import should_continue, tool_results
from toolbench.scoring import score_trial

BASE_SEED = 1234


def slug(text: str) -> str:
    """A path-safe name: ``local/smollm2-135m`` -> ``local_smollm2-135m``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


def cassette_path(root: Path, model: str, fmt: str, scenario_id: str, sample: int) -> Path:
    suffix = f"__s{sample}" if sample else ""
    return root / slug(model) / slug(fmt) / f"{scenario_id}{suffix}.yaml"


@dataclass
class TrialSpec:
    run_id: str
    model: str
    fmt: Format
    scenario: Scenario
    sample: int
    max_turns: int | None
    retry_on_parse_error: bool
    record: RecordOption
    cassette: Path


EndpointFor = Callable[[str, Format], Awaitable[Endpoint]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _assistant_text(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.text}


async def _conversation(spec: TrialSpec, endpoint: Endpoint, tc: TrialCassette) -> list[TurnRecord]:
    fmt, sc = spec.fmt, spec.scenario
    rendered = fmt.render(sc.tools, [m.model_dump() for m in sc.messages])
    messages: list[Message] = list(rendered.messages)
    limit = spec.max_turns or sc.expect.max_turns
    if sc.expect.kind != "multi_turn":
        limit = 1
    turns: list[TurnRecord] = []
    round_index = 0
    retried = pending_retry = False
    seed = BASE_SEED + spec.sample
    while True:
        req = RenderedRequest(
            messages=messages, stop=rendered.stop, tools=rendered.tools,
            tool_choice=rendered.tool_choice,
        )  # fmt: skip
        before = tc.played()
        done: Completion = await complete(endpoint, req, seed, lambda: bool(tc.unmatched))
        latency = tc.latency(len(turns), done.latency_s, replayed=tc.played() > before)
        parsed = fmt.parse_reply(done.reply, sc.tools)
        turns.append(
            TurnRecord(
                request=done.request, reply=done.reply, parsed=parsed,
                latency_s=None if latency is None else round(latency, 4),
                prompt_tokens=done.prompt_tokens,
                completion_tokens=done.completion_tokens, cost=done.cost,
                retry=pending_retry,
            )
        )  # fmt: skip
        if parsed.status == "failed" and spec.retry_on_parse_error and not retried:
            retried = pending_retry = True
            messages = [*messages, _assistant_text(done.reply), fmt.retry_message(parsed)]
            continue
        pending_retry = False
        if round_index + 1 >= limit or not should_continue(sc, round_index, parsed):
            return turns
        results = tool_results(sc, round_index, parsed.calls)
        messages = fmt.continue_conversation(messages, done.reply, results)
        round_index += 1


async def run_trial(spec: TrialSpec, endpoint_for: EndpointFor) -> TrialResult:
    """Run and score one trial; infrastructure problems become a status, never a crash."""
    started = _now()
    base = TrialResult(
        run_id=spec.run_id, toolbench_version=__version__, model=spec.model,
        format=spec.fmt.spec, format_options=spec.fmt.options.model_dump(),
        scenario_id=spec.scenario.id, sample=spec.sample, started_at=started,
        cassette=str(spec.cassette),
    )  # fmt: skip
    try:
        with use_cassette(spec.cassette, spec.record) as tc:
            endpoint = await endpoint_for(spec.model, spec.fmt)
            turns = await _conversation(spec, endpoint, tc)
    except CassetteMissingError:
        base.status = "cassette_missing"
        what = (
            f"cassette {spec.cassette} has no recorded response for this request"
            if spec.cassette.is_file()
            else f"no cassette {spec.cassette}"
        )
        base.infra_error = (
            f"{what}; record it with: {record_command(spec.model, spec.fmt.spec, spec.scenario.id)}"
        )
        base.finished_at = _now()
        return base
    except UnsupportedError as exc:
        base.status, base.infra_error, base.finished_at = "unsupported", str(exc), _now()
        return base
    except InfraError as exc:
        base.status, base.infra_error, base.finished_at = "infra_error", str(exc), _now()
        return base
    base.turns = turns
    base.scores = score_trial(spec.scenario, spec.fmt, turns)
    lat = [t.latency_s for t in turns]
    base.latency_s = None if any(x is None for x in lat) else round(sum(x or 0.0 for x in lat), 4)
    base.prompt_tokens = _total([t.prompt_tokens for t in turns])
    base.completion_tokens = _total([t.completion_tokens for t in turns])
    costs = [t.cost for t in turns]
    base.cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    base.finished_at = _now()
    return base


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v or 0 for v in values)
