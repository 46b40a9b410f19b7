"""The run's matrix: which models, each model's formats, which scenarios, and each
model's request parameters.

A new run resolves it from its options (``auto`` per model, ``--stream``, the scenario
selection, ``--model-param`` over ``toolbench.toml``); a resumed run takes it as its
``run.json`` recorded it (:class:`Recorded`, read by :mod:`.resume`), so that completing a
run never measures another experiment. Either way it is checked the same, in the same
order, before the run directory is touched: a format that cannot run a scenario, a
model its provider kind refuses, an API a provider does not have, a matrix no run
could hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toolbench.environments import scenario_problems
from toolbench.environments.mcp_tools import with_server_tools
from toolbench.errors import UserError
from toolbench.formats.auto import AUTO, resolve_formats
from toolbench.formats.base import Format
from toolbench.formats.format_registry import get_format
from toolbench.formats.stream_spec import expand_stream
from toolbench.providers.kind_registry import DEFAULT_KIND, api_class, kind_of
from toolbench.providers.llama_server import server_chat_template
from toolbench.providers.local_models import DEFAULT_MODELS
from toolbench.providers.model_api import ProviderSettings
from toolbench.providers.wire.responses.request import API, refusal
from toolbench.redaction import register_url_secrets
from toolbench.runner.format_grid import expand_formats
from toolbench.runner.model_params import ModelParams, api_bases, model_params
from toolbench.runner.options import RunOptions, check_size
from toolbench.runner.variants import bare_model
from toolbench.scenarios.loader import DEFAULT_SELECTION, select_scenarios
from toolbench.scenarios.model import Scenario


@dataclass(frozen=True)
class Recorded:
    """The matrix a run's ``run.json`` holds: what a resume runs again, not the options."""

    models: list[str]
    cells: dict[str, list[str]]
    """Per model, its format specs as resolved when the run began."""
    auto: dict[str, str]
    scenarios: list[Scenario]
    params: ModelParams


@dataclass(frozen=True)
class Matrix:
    """The axes of a run's trials, checked."""

    models: list[str]
    formats: list[Format]
    """Every format of the run, once each (in the order the cells first name them)."""
    by_model: dict[str, list[Format]]
    scenarios: list[Scenario]
    params: ModelParams
    """Per model, the request parameters of ``--model-param`` and ``toolbench.toml``."""
    auto: dict[str, str] = field(default_factory=dict)
    """What ``auto`` resolved to per model (recorded in run.json's ``auto_formats``)."""
    warnings: list[str] = field(default_factory=list)
    """Lines to print once before the run (an unknown model under ``auto``)."""

    @property
    def api_bases(self) -> dict[str, str]:
        """Per model, its own ``api_base`` parameter (over ``--api-base``)."""
        return api_bases(self.params)


def matrix_of(opts: RunOptions, recorded: Recorded | None) -> Matrix:
    """The run's matrix: ``recorded`` (a resume's) or resolved from ``opts``; checked."""
    if recorded is not None:
        return _checked(opts, recorded.models, recorded.cells, recorded.auto, None,
                        lambda: recorded.scenarios, lambda _models: recorded.params)  # fmt: skip
    # Repeats on the command line would run (and count) the same trials twice.
    models = list(dict.fromkeys(opts.models or list(opts.formats_from or ()) or DEFAULT_MODELS))
    templates = _reported_templates(models, opts)
    formats = expand_formats(opts.formats, len(models))
    resolved = resolve_formats(models, formats, opts.formats_from, templates)
    cells = {m: expand_stream(v, opts.stream) for m, v in resolved.specs.items()}
    auto = {m: d.format for m, d in resolved.auto.items()}
    return _checked(
        opts, models, cells, auto, resolved.warning(),
        lambda: select_scenarios(opts.scenarios or [DEFAULT_SELECTION]),
        lambda models: model_params(opts.model_params, models, opts.params_file),
    )  # fmt: skip


def _checked(
    opts: RunOptions, models: list[str], cells: dict[str, list[str]], auto: dict[str, str],
    warning: str | None, scenarios_of: Callable[[], list[Scenario]],
    params_of: Callable[[list[str]], ModelParams],
) -> Matrix:  # fmt: skip
    """The matrix built and checked in the order a user meets its faults: formats, then
    scenarios, then the matrix's size and cells, then parameters and providers."""
    built = {s: get_format(s) for specs in cells.values() for s in specs}
    formats = list({f.spec: f for f in built.values()}.values())
    if not formats:
        raise UserError("--formats: give at least one format")
    by_model = {m: [built[s] for s in specs] for m, specs in cells.items()}
    scenarios = scenarios_of()
    if not scenarios:
        raise UserError("--scenarios: no scenario selected")
    unknown = scenario_problems(scenarios)  # an environment nobody registered
    if unknown:
        raise UserError(unknown[0])
    scenarios = with_server_tools(scenarios, opts.cassette_dir, opts.record)  # MCP tools/list
    check_size(opts.samples, sum(len(v) for v in cells.values()), len(scenarios))
    _check_cells(formats, scenarios)
    params = params_of(models)
    own = api_bases(params)
    for url in own.values():
        register_url_secrets(url)  # a resumed run's, read back from its run.json
    _check_models(models, opts, own)
    _check_apis(by_model, opts.api_base, own)
    return Matrix(models, formats, by_model, scenarios, params, dict(auto),
                  [warning] if warning else [])  # fmt: skip


def _reported_templates(models: Sequence[str], opts: RunOptions) -> dict[str, str]:
    """Per non-local model, the chat template the ``--api-base`` server reports, when
    ``auto`` is asked for and the run records (a replay asks no server)."""
    wants_auto = any(s.strip() == AUTO for s in opts.formats) or any(
        s.strip() == AUTO for s in (opts.formats_from or {}).values()
    )
    if not wants_auto or not opts.api_base or opts.record == "none":
        return {}
    template = server_chat_template(opts.api_base)
    if template is None:
        return {}
    return {m: template for m in models if kind_of(bare_model(m)) == DEFAULT_KIND}


def _check_cells(formats: Sequence[Format], scenarios: Sequence[Scenario]) -> None:
    """Refuse a format whose options cannot run a selected scenario (``native:strict`` on
    a schema strict mode does not take, ``native:tool_choice=NAME`` on a scenario without
    that tool), naming both, before any call."""
    for fmt in formats:
        for sc in scenarios:
            why = fmt.refuses(sc.tools)
            if why is not None:
                raise UserError(f"--formats: {fmt.spec}: scenario '{sc.id}': {why}")


def _check_models(models: Sequence[str], opts: RunOptions, own: dict[str, str]) -> None:
    """Each model's provider kind refuses what it cannot call (exit 2 before any call);
    a variant's provider is asked for the bare model."""
    settings = ProviderSettings(api_base=opts.api_base, api_bases=dict(own))
    for m in models:
        if not m.strip():
            raise UserError("--models: empty model name")
        bare = bare_model(m)
        api_class(kind_of(bare))(settings).preflight(bare, opts.record)


def _check_apis(
    by_model: dict[str, list[Format]], api_base: str | None, own: dict[str, str]
) -> None:
    """Refuse a format asking for an API the model's provider does not have
    (``native:api=responses`` on ``anthropic/`` or ``local/``), naming the option and the
    model, before any call."""
    for model, fmts in by_model.items():
        asked = [f for f in fmts if getattr(f.options, "api", None) == API]
        if not asked:
            continue
        bare = bare_model(model)
        why = refusal(bare, own.get(model, own.get(bare, api_base)), kind_of(bare))
        if why is not None:
            raise UserError(
                f"--formats: {asked[0].spec}: model '{model}' does not take the Responses"
                f" API ({why})"
            )
