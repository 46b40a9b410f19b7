"""Synthetic runs for the analysis tests: 2 models x 2 formats x 3 scenarios x 2 samples,
with failures, one infra error and one hostile reply. (A plain module, not a conftest, so
tests/cli can import it too; the fixtures live in conftest.py.)"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolbench import codes
from toolbench.formats.base import ModelReply, ParseIssue, ParseResult, ToolCall
from toolbench.results import RunInfo, TrialResult, TrialScores, TurnRecord

HOSTILE = (
    "<script>window.__pwned=1;document.documentElement.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','2')\">"
    "</textarea></pre><script>document.documentElement.setAttribute('data-pwned','3')</script>"
)

MODELS = ("m-alpha", "m-beta")
FORMATS = ("prompt-json", "xml")
SCENARIOS = {"weather_basic": "calls", "chitchat_nocall": "no_call", "trip_multi": "multi_turn"}


def scores(kind: str, ok: bool = True, **over: Any) -> TrialScores:
    """Scores for a trial of scenario ``kind`` that passed (``ok``) or failed."""
    errors: list[str] = []
    reasons: list[str] = []
    if not ok:
        errors, reasons = [codes.CALL_WRONG_TOOL], ["expected get_weather, got get_time"]
    base: dict[str, Any] = {
        "parse": "strict" if kind != "no_call" else "no_call",
        "parse_strict_ok": True if kind != "no_call" else None,
        "parse_ok": True if kind != "no_call" else None,
        "call_accuracy": ok if kind != "no_call" else None,
        "args_schema_valid": True if kind != "no_call" else None,
        "stop": "clean" if kind != "no_call" else "no_call",
        "stop_compliant": True,
        "leak_raw": False,
        "leak_sanitized": False,
        "no_call_correct": ok if kind == "no_call" else None,
        "final_answer_ok": ok if kind == "multi_turn" else None,
    }
    base.update(over)
    errors = base.pop("errors", errors)
    reasons = base.pop("reasons", reasons)
    return TrialScores.of(errors, reasons, **base)


def make_trial(
    model: str,
    fmt: str,
    scenario_id: str,
    sample: int = 0,
    *,
    ok: bool = True,
    status: str = "ok",
    reply: str = '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    run_id: str = "r1",
    prompt_tokens: int = 120,
    latency: float = 0.5,
    **score_over: Any,
) -> TrialResult:
    kind = SCENARIOS.get(scenario_id, "calls")
    turns = []
    sc = None
    if status == "ok":
        parsed = ParseResult(
            calls=[ToolCall(name="get_weather", arguments={"city": "Paris"})],
            content="Checking the weather." if ok else reply,
            raw_content=reply,
            status="strict",
            attempted=True,
            errors=[] if ok else [ParseIssue(code=codes.CALL_WRONG_TOOL, message="wrong tool")],
        )
        turns = [
            TurnRecord(
                request={
                    "model": model,
                    "messages": [{"role": "user", "content": "Weather in Paris?"}],
                    "stop": ["</tool_call>"],
                    "temperature": 0,
                },
                reply=ModelReply(text=reply, finish_reason="stop"),
                parsed=parsed,
                latency_s=latency,
                prompt_tokens=prompt_tokens,
                completion_tokens=30,
                cost=0.0001,
            )
        ]
        sc = scores(kind, ok, **score_over)
    return TrialResult(
        run_id=run_id,
        toolbench_version="0.1.0",
        model=model,
        format=fmt,
        scenario_id=scenario_id,
        sample=sample,
        status=status,  # type: ignore[arg-type]
        infra_error="HTTP 503 after 3 retries" if status == "infra_error" else None,
        turns=turns,
        scores=sc,
        latency_s=latency if status == "ok" else 0.0,
        prompt_tokens=prompt_tokens if status == "ok" else None,
        completion_tokens=30 if status == "ok" else None,
        cost=0.0001 if status == "ok" else None,
    )


def write_run(
    run_dir: Path, trials: Iterable[TrialResult], run_id: str | None = None, **info: Any
) -> Path:
    """``run_dir`` holding ``trials`` and a ``run.json`` of their matrix (``info``: more of
    its fields, e.g. ``scenario_tags``)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    trials = list(trials)
    rid = run_id or run_dir.name
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for t in trials:
            fh.write(t.model_dump_json() + "\n")
    info = RunInfo(
        run_id=rid,
        toolbench_version="0.1.0",
        created_at="2026-01-01T00:00:00Z",
        models=sorted({t.model for t in trials}),
        formats=sorted({t.format for t in trials}),
        scenarios=sorted({t.scenario_id for t in trials}),
        samples=max((t.sample for t in trials), default=0) + 1,
        **info,
    )
    (run_dir / "run.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
    return run_dir


def standard_trials(run_id: str = "r1", regress: bool = False) -> list[TrialResult]:
    """The standard matrix. m-beta/xml fails weather_basic (hostile reply in sample 0);
    m-alpha/xml trip_multi sample 1 is an infra error; ``regress`` also fails
    m-alpha/prompt-json weather_basic."""
    out = []
    for m in MODELS:
        for f in FORMATS:
            for sid in SCENARIOS:
                for s in (0, 1):
                    kw: dict[str, Any] = {"run_id": run_id}
                    if m == "m-beta" and f == "xml" and sid == "weather_basic":
                        kw["ok"] = False
                        if s == 0:
                            kw["reply"] = HOSTILE
                    if regress and m == "m-alpha" and f == "prompt-json" and sid == "weather_basic":
                        kw["ok"] = False
                    if m == "m-alpha" and f == "xml" and sid == "trip_multi" and s == 1:
                        kw["status"] = "infra_error"
                    if f == "xml":
                        kw["prompt_tokens"] = 90
                    out.append(make_trial(m, f, sid, s, **kw))
    return out
