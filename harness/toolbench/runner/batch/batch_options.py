"""What ``run --batch`` refuses before any call: a run no provider batch could serve.

A batch is sent through the provider's own batch API, so every model of the run must be
served by LiteLLM's kind with a provider that has one toolbench speaks
(:data:`BATCH_PROVIDERS`); a batch sends requests, so a replay-only run
(``--record none``) has nothing to batch; and a batch answers a request whole, so a
streamed format (``xml:stream``, ``--stream on|both``) has no stream to measure. Each is
one line naming the option and the offending value (exit 2).
"""

from __future__ import annotations

from toolbench.errors import UserError
from toolbench.formats.stream_spec import is_streamed
from toolbench.providers.capabilities import provider_of
from toolbench.providers.kind_registry import DEFAULT_KIND, kind_of
from toolbench.runner.matrix import Matrix
from toolbench.runner.model_params import API_BASE
from toolbench.runner.options import RunOptions
from toolbench.runner.variants import bare_model

BATCH_PROVIDERS = ("openai", "anthropic")
"""LiteLLM's providers whose batch API toolbench speaks (:mod:`.batch_apis`)."""


def batch_provider(model: str, api_base: str | None) -> str | None:
    """The batch API serving ``model`` (a LiteLLM provider name), None when it has none."""
    bare = bare_model(model)
    if kind_of(bare) != DEFAULT_KIND:
        return None  # a local model, a plugin's kind: no provider batch
    try:
        provider = provider_of(bare, api_base)[1]
    except UserError:
        return None
    return provider if provider in BATCH_PROVIDERS else None


def check_batch(opts: RunOptions, matrix: Matrix) -> None:
    """Refuse a ``--batch`` run no provider batch could serve, naming why."""
    if opts.record == "none":
        raise UserError(
            "--batch: --record none only replays, a batch sends requests (use --record new or all)"
        )
    if opts.stream != "off":
        raise UserError(
            f"--batch: --stream {opts.stream} streams, a batch reply is whole (no stream to"
            " measure); leave out one of them"
        )
    for model in matrix.models:
        for fmt in matrix.by_model.get(model, matrix.formats):
            if is_streamed(fmt):
                raise UserError(
                    f"--batch: format '{fmt.spec}' is streamed, a batch reply is whole (no"
                    " stream to measure); leave out one of them"
                )
        own = matrix.params.get(model, {}).get(API_BASE)
        api_base = own if isinstance(own, str) else opts.api_base
        if batch_provider(model, api_base) is None:
            raise UserError(
                f"--batch: model '{model}' has no batch API toolbench speaks (it speaks"
                f" {' and '.join(BATCH_PROVIDERS)}'s: openai/..., anthropic/...)"
            )
