"""The registry: built-ins come through the entry-point group, in the order and views
the reports used before it existed; a broken plugin is one warning line."""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pandas as pd
import pytest

from toolbench import registry as toolbench_registry
from toolbench.errors import UserError
from toolbench.metrics import Metric, flag_rate, get_metric, metric_names, view
from toolbench.metrics import metric_registry as registry

ROOT = Path(__file__).resolve().parents[2]

BUILT_IN = (
    "parse_success", "parse_success_repaired", "call_accuracy", "schema_validity",
    "stop_compliance", "leak_rate", "leak_rate_raw", "no_call_accuracy",
    "final_answer_accuracy", "retry_recovery", "infra_error_rate", "harness_error_rate",
    "latency_p50", "latency_p95", "prompt_tokens_mean", "completion_tokens_mean",
    "cost_total", "n_trials", "fallback_rescue_rate",
    "ttft_p50", "first_call_byte_p50", "call_complete_p50", "tokens_per_s_p50",
    "stream_leak_rate", "leaked_chars_mean", "holdback_p50", "stream_error_rate",
    "stream_consistency",
    "loop_success", "state_match", "exec_match", "asked_when_missing",
)  # fmt: skip


def test_built_ins_are_listed_once_and_installed() -> None:
    """pyproject.toml holds one built-in entry (toolbench.metrics.builtin_metrics's table-order
    list), and the installed metadata is that declaration (else: ``pip install -e .``)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = data["project"]["entry-points"][registry.ENTRY_POINT_GROUP]
    assert declared == {"builtin": "toolbench.metrics.builtin_metrics:METRICS"}
    ours = {
        ep.name: ep.value
        for ep in entry_points(group=registry.ENTRY_POINT_GROUP)
        if toolbench_registry.ours(ep)
    }
    assert ours == declared, "stale installed metadata: run `pip install -e .`"


def test_built_in_metrics_in_table_order() -> None:
    assert metric_names() == BUILT_IN


@pytest.mark.parametrize(
    ("which", "names"),
    [
        ("headline", ("call_accuracy", "parse_success", "no_call_accuracy",
                      "stop_compliance", "leak_rate")),
        ("summary", ("parse_success", "call_accuracy", "no_call_accuracy", "stop_compliance",
                     "leak_rate", "infra_error_rate", "harness_error_rate")),
        ("markdown", ("call_accuracy", "parse_success", "no_call_accuracy", "stop_compliance",
                      "leak_rate", "infra_error_rate", "harness_error_rate", "latency_p50",
                      "n_trials")),
        ("paired", ("call_accuracy", "parse_success")),
        ("ranking", ("call_accuracy", "leak_rate", "stop_compliance", "prompt_tokens_mean")),
    ],
)  # fmt: skip
def test_views_keep_the_lists_the_reports_had(which: registry.View, names: tuple[str]) -> None:
    assert view(which) == names


def test_lower_is_better_set_is_unchanged() -> None:
    lower = {n for n in BUILT_IN if get_metric(n).direction == "lower"}
    assert lower == {
        "leak_rate", "leak_rate_raw", "infra_error_rate", "harness_error_rate",
        "latency_p50", "latency_p95", "prompt_tokens_mean", "completion_tokens_mean",
        "cost_total", "ttft_p50", "first_call_byte_p50", "call_complete_p50",
        "stream_leak_rate", "leaked_chars_mean", "holdback_p50", "stream_error_rate",
    }  # fmt: skip
    assert get_metric("n_trials").direction == "none"


def test_unknown_metric_did_you_mean() -> None:
    with pytest.raises(UserError, match="Did you mean 'leak_rate'"):
        get_metric("leak_rat")


def test_broken_plugin_is_one_warning_line_and_the_rest_still_work(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = EntryPoint("broken", "no_such_plugin_module:METRICS", registry.ENTRY_POINT_GROUP)
    toy = EntryPoint("toy", "tests.metrics.toy_metric:METRICS", registry.ENTRY_POINT_GROUP)
    installed = [broken, toy, *entry_points(group=registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(registry.METRICS, "find", lambda group: installed)
    registry._REGISTRY.clear()
    monkeypatch.setattr(registry.METRICS, "_loaded", False)
    registry.changed()
    assert metric_names() == (*BUILT_IN, "first_try_rate")
    err = capsys.readouterr().err
    assert err == (
        "warning: metric plugin 'broken' (no_such_plugin_module:METRICS) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_plugin_module'; "
        "its metrics are left out\n"
    )


def test_entry_point_naming_something_else_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ep = EntryPoint(
        "odd", "toolbench.metrics.metric_registry:ENTRY_POINT_GROUP", "toolbench.metrics"
    )
    registry.load_entry_points([ep])
    assert capsys.readouterr().err == (
        "warning: metric plugin 'odd' (toolbench.metrics.metric_registry:ENTRY_POINT_GROUP) "
        "does not name a Metric or a sequence of Metric objects; its metrics are left out\n"
    )


def _ones(df: pd.DataFrame) -> pd.Series[float]:
    return pd.Series(1.0, index=df.index)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"name": "Bad-Name"}, "expected [a-z][a-z0-9_]*"),
        ({"name": "model"}, "not model/format"),
        ({"kind": "value"}, "a value metric needs a reduce function"),
        ({"unit": "seconds"}, "a rate is shown as a percent"),
        ({"kind": "value", "reduce": len, "unit": "count", "paired": 1}, "only rates"),
        ({"direction": "none", "ranking": 1}, "a ranking metric needs a direction"),
    ],
)
def test_a_malformed_metric_is_refused(kw: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"name": "toy", "description": "d", "per_trial": _ones}
    args["source"] = "s"
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("*", r"\*")):
        Metric(**{**args, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value", "text", "delta", "dtext"),
    [
        ("call_accuracy", 0.5, "50.0%", 0.012, "+1.2 pp"),
        ("n_trials", 6.0, "6", -2.0, "-2"),
        ("latency_p95", 1.234, "1.23s", 0.5, "+0.5"),
        ("cost_total", 0.5, "$0.5000", 0.25, "+0.25"),
        ("prompt_tokens_mean", 90.0, "90.0", -10.0, "-10"),
    ],
)
def test_formatting_by_unit(name: str, value: float, text: str, delta: float, dtext: str) -> None:
    m = get_metric(name)
    assert (m.fmt(value), m.fmt_delta(delta), m.fmt(None)) == (text, dtext, "n/a")


def test_flag_rate_leaves_out_trials_that_did_not_reach_the_model() -> None:
    m = flag_rate("toy", "f", "d")
    df = pd.DataFrame(
        {"status": ["ok", "ok", "ok", "infra_error"], "f": [True, False, None, True]}
    ).astype({"f": "boolean"})
    assert m.value(m.per_trial(df)) == (0.5, (1, 2))


def test_a_plugin_cannot_silently_redefine_a_metric(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = flag_rate("call_accuracy", "first_try_ok", "not what call_accuracy means")
    monkeypatch.setattr(registry, "_fake", fake, raising=False)
    ep = EntryPoint("evil", "toolbench.metrics.metric_registry:_fake", registry.ENTRY_POINT_GROUP)
    registry.load_entry_points([ep])
    assert capsys.readouterr().err == (
        "warning: metric plugin 'evil' (toolbench.metrics.metric_registry:_fake) metric "
        "'call_accuracy' is already registered; 'call_accuracy' is left out\n"
    )
    assert get_metric("call_accuracy").flag == "call_accuracy"
    with pytest.raises(registry.DuplicateMetricError):
        registry.register_metric(fake)
    registry.register_metric(fake, replace=True)
    assert get_metric("call_accuracy") is fake
