"""Model rates: each averages one :class:`~toolbench.results.TrialScores` flag over the
``ok`` trials where it applies (``None`` leaves the denominator)."""

from __future__ import annotations

from toolbench.metrics.metric_registry import Metric, flag_rate

METRICS: tuple[Metric, ...] = (
    flag_rate(
        "parse_success",
        "parse_strict_ok",
        "share of trials whose call attempts all decoded strictly (no JSON repair)",
        headline=20, summary=10, markdown=20, paired=20,
    ),
    flag_rate(
        "parse_success_repaired",
        "parse_ok",
        "the same, allowing the lenient repair layer",
    ),
    flag_rate(
        "call_accuracy",
        "call_accuracy",
        "share of call scenarios where the expected calls were made with matching arguments",
        headline=10, summary=20, markdown=10, paired=10, ranking=10,
    ),
    flag_rate(
        "schema_validity",
        "args_schema_valid",
        "share of trials whose call arguments validate against the tools' JSON Schemas",
    ),
    flag_rate(
        "stop_compliance",
        "stop_compliant",
        "share of trials that stopped cleanly (no text after the call, no invented "
        "Observation, no extra actions, not cut by the length limit)",
        headline=40, summary=40, markdown=40, ranking=30,
    ),
    flag_rate(
        "leak_rate",
        "leak_sanitized",
        "share of trials whose user-visible text still shows raw format markers after "
        "sanitizing",
        direction="lower", headline=50, summary=50, markdown=50, ranking=20,
    ),
    flag_rate(
        "leak_rate_raw",
        "leak_raw",
        "the same before sanitizing: how often the model writes markers outside calls "
        "(a format's own visible markup, such as ReAct's `Final Answer:`, is no leak)",
        direction="lower",
    ),
    flag_rate(
        "no_call_accuracy",
        "no_call_correct",
        "share of no-call scenarios answered in text without calling (a reply that tried "
        "to call and failed to parse is not an abstention)",
        headline=30, summary=30, markdown=30,
    ),
    flag_rate(
        "final_answer_accuracy",
        "final_answer_ok",
        "share of multi-turn scenarios whose final answer passes the scenario's check",
    ),
    flag_rate(
        "retry_recovery",
        "retry_recovered",
        "share of retried trials (`--retry-on-parse-error`) that the retry fixed",
    ),
)  # fmt: skip
