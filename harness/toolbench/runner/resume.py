"""``run --resume --out DIR``: the run's own matrix and settings, from its ``run.json``.

A resume needs no other option: models, each model's formats, scenarios (read from the
recorded files, refused when one changed), samples, model parameters, record mode,
concurrency, timeout, api base, cassette directory and ``--batch`` are the run's. An
option given again must agree with the run's matrix: one that differs is refused in one
line naming it (exit 2), because completing a run with another matrix would mix two
experiments in one results file. Settings that do not change what a trial measures
(``--concurrency``, ``--timeout``, ``--api-base``, ``--record``, ``--cassettes``) may be
given anew. ``--batch`` does change it (a batched trial has the batch price and no
latency): a batch run resumes as a batch (what its batches failed submitted again,
:mod:`.batch.batch_retry`), and ``--batch`` given to resume a live run is refused, since
one results file would hold the run's trials priced and timed two ways.

What the run recorded of its matrix comes back as :class:`~toolbench.runner.matrix.Recorded`
(checked like a new run's matrix), its settings as the options the resume runs with.
Runs written before ``run.json`` recorded its cells are resumed from the command line,
as before.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.formats.auto import resolve_formats
from toolbench.formats.stream_spec import expand_stream
from toolbench.redaction import REDACTED, redact
from toolbench.results import RunInfo
from toolbench.runner.matrix import Recorded
from toolbench.runner.model_params import ModelParams, parse_model_param, read_config
from toolbench.runner.options import RunOptions
from toolbench.runner.param_values import register_param_secrets, shown, shown_text
from toolbench.runner.records import recorded_scenarios
from toolbench.scenarios.loader import select_scenarios
from toolbench.store import info_path, read_info

MATRIX_OPTIONS = (
    "models", "formats", "formats_from", "stream", "scenarios", "samples", "model_params",
    "max_turns", "retry_on_parse_error",
)  # fmt: skip
"""``RunOptions`` fields that define the matrix: given again, they must agree."""
SETTINGS = ("record", "concurrency", "timeout_s", "api_base", "cassette_dir", "max_tokens",
            "display")  # fmt: skip
"""``RunOptions`` fields taken from ``run.json`` unless given again."""
KEPT = ("batch",)
"""``RunOptions`` fields taken from ``run.json`` that, given again, must agree with it:
how the run's trials reach their models (priced and timed by it), not its matrix."""


def _show(values: Iterable[Any]) -> str:
    return ", ".join(map(str, values)) or "none"


def _differs(run_dir: Path, option: str, run: str, given: str) -> UserError:
    return UserError(
        f"--resume: {option} differs from the run in {info_path(run_dir)} "
        f"(run: {run}; given: {given})"
    )


def _stored(value: Any) -> Any:
    """``value`` as run.json stores it (secrets redacted), for comparison."""
    return json.loads(redact(json.dumps(value)))


def resume(opts: RunOptions) -> tuple[RunOptions, Recorded | None]:
    """The options a resume of ``opts.out`` runs with (the run's settings where none is
    given again) and the matrix its run.json recorded (None for a run from before it
    recorded its cells); refused when a given option differs from the run's matrix."""
    assert opts.out is not None
    recorded = info_path(opts.out)
    if not recorded.is_file():
        # Without it the defaults (the embedded local models) would be planned instead.
        what = "is a directory, not a file" if recorded.is_dir() else "does not exist"
        raise UserError(f"--resume: {recorded} {what} (nothing to resume)")
    info = read_info(opts.out)
    if info is None or not info.cells:
        return opts, None
    given = set(MATRIX_OPTIONS + SETTINGS + KEPT) if opts.given is None else set(opts.given)
    _check_matrix(opts, info, given)
    record = opts.record if "record" in given else info.record
    params = _params(opts, info, record)
    matrix = Recorded(
        models=list(info.models),
        cells={m: list(v) for m, v in info.cells.items()},
        auto=dict(info.auto_formats),
        scenarios=(
            recorded_scenarios(info, "--resume")
            if info.scenario_files
            else select_scenarios(info.scenarios)
        ),
        params=params,
    )
    changes: dict[str, Any] = {
        "samples": info.samples,
        "max_turns": info.max_turns,
        "retry_on_parse_error": info.retry_on_parse_error,
        "batch": _batch(opts, info, given, record),
    }
    settings = {
        "record": info.record,
        "concurrency": info.params.get("concurrency"),
        "timeout_s": info.params.get("timeout_s"),
        "api_base": info.api_base,
        "cassette_dir": Path(info.cassette_dir) if info.cassette_dir else None,
        "max_tokens": info.params.get("local_max_tokens"),
        "display": info.display,
    }
    for name, value in settings.items():
        if name not in given and value is not None:
            changes[name] = value
    return dataclasses.replace(opts, **changes), matrix


def _batch(cfg: RunOptions, info: RunInfo, given: set[str], record: str) -> bool:
    """Whether the resume sends through provider batches: as the run did. ``--batch``
    given again must agree. A run from before schema 8 did not record it: the command
    line says, as it did then. A batch run resumed replay-only (``--record none`` given)
    sends nothing, so it batches nothing."""
    if info.batch is None:
        return cfg.batch
    if "batch" in given:
        if cfg.batch != info.batch:
            run, asked = ("batch", "live") if info.batch else ("live", "batch")
            assert cfg.out is not None
            raise _differs(cfg.out, "--batch", run, asked)
        return cfg.batch
    return info.batch and record != "none"


def _params(cfg: RunOptions, info: RunInfo, record: str) -> ModelParams:
    """The run's model parameters, with the secrets run.json holds redacted given back:
    from the command line, else from ``toolbench.toml`` when its value redacts to the
    stored one. A redacted value nobody gives back is refused when the resume may call
    the model (it would send the placeholder as a credential)."""
    params = {m: dict(p) for m, p in info.model_params.items()}
    given = {(m, k) for m, k, _ in map(parse_model_param, cfg.model_params)}
    for text in cfg.model_params:
        model, key, value = parse_model_param(text)
        params.setdefault(model, {})[key] = value
    file = read_config(cfg.params_file) if cfg.params_file is not None else {}
    for model, mine in params.items():
        for key, value in mine.items():
            if (model, key) in given or REDACTED not in json.dumps(value):
                continue
            theirs = file.get(model, {}).get(key)
            register_param_secrets({key: theirs})
            if theirs is not None and _stored(theirs) == value:
                mine[key] = theirs
            elif record != "none":
                raise UserError(
                    f"--resume: {model}: {key} holds a secret run.json stores redacted; "
                    f"give it again with --model-param"
                )
    return params


def _check_matrix(cfg: RunOptions, info: RunInfo, given: set[str]) -> None:
    run_dir = cfg.out
    assert run_dir is not None
    if given & {"models", "formats_from"}:
        models = list(dict.fromkeys(cfg.models or list(cfg.formats_from or ())))
        if models and set(models) != set(info.models):
            raise _differs(run_dir, "--models", _show(info.models), _show(models))
    if given & {"formats", "formats_from", "stream"}:
        specs = resolve_formats(info.models, cfg.formats, cfg.formats_from).specs
        now = {m: sorted(set(expand_stream(v, cfg.stream))) for m, v in specs.items()}
        then = {m: sorted(set(v)) for m, v in info.cells.items()}
        if now != then:
            model = next(m for m in info.models if now.get(m) != then.get(m))
            raise _differs(
                run_dir, "--formats", f"{model}: {_show(then.get(model, []))}",
                f"{model}: {_show(now.get(model, []))}",
            )  # fmt: skip
    if "scenarios" in given and cfg.scenarios:
        ids = [s.id for s in select_scenarios(cfg.scenarios)]
        if set(ids) != set(info.scenarios):
            extra = sorted(set(ids) - set(info.scenarios))
            gone = sorted(set(info.scenarios) - set(ids))
            what = f"adds {_show(extra)}" if extra else f"leaves out {_show(gone)}"
            raise UserError(
                f"--resume: --scenarios differs from the run in {info_path(run_dir)} ({what})"
            )
    for name, option in (("samples", "--samples"), ("max_turns", "--max-turns"),
                         ("retry_on_parse_error", "--retry-on-parse-error")):  # fmt: skip
        if name in given and getattr(cfg, name) != getattr(info, name):
            raise _differs(run_dir, option, str(getattr(info, name)), str(getattr(cfg, name)))
    for text in cfg.model_params:
        model, key, value = parse_model_param(text)
        register_param_secrets({key: value})
        run = info.model_params.get(model, {})
        if key not in run or run[key] != _stored(value):
            had = f"{key}={shown(key, run[key])}" if key in run else f"no {key}"
            raise _differs(run_dir, "--model-param", f"{model}: {had}", shown_text(text))
