"""``auto``: each model gets the dialect of its family, and the file that fixes a choice.

``--formats auto`` is not a format: before a run is planned, :func:`resolve_formats`
replaces it, per model, by the concrete spec :func:`~toolbench.formats.detect.detect_format`
picks from the model's name (``auto`` may sit beside other specs: ``auto,native``). Trials
carry the concrete spec, so reports, resume, replay and rescore never see ``auto``; the
choice is recorded in ``run.json`` (``auto_formats``). A model no pattern knows gets
:data:`~toolbench.formats.detect.DEFAULT_FORMAT`; that is said once per run, in one
warning line naming the models, not once per trial.

The chat template a server reports (llama-server's ``GET /props``, ``chat_template``) is
the stronger evidence: ``run`` asks the ``--api-base`` server for it when it records
(``--record new|all``) and passes it here as ``templates``; a replay (``--record none``)
starts no server and asks none, so it resolves ``auto`` from names alone. The choice a
recording made is kept in ``run.json``: ``--resume`` reuses it.

:class:`FormatsFile` is what ``recommend --to yaml`` writes and ``run --formats-from FILE``
reads: per model, the format to use, with a schema version checked on read (a leaf,
:mod:`toolbench.formats_file`, so the report writes it without importing formats).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolbench.declared_formats import AUTO as AUTO
from toolbench.formats.detect import DEFAULT_FORMAT, Detection, detect_format
from toolbench.formats_file import (
    FORMATS_FILE_VERSION,
    FormatsFile,
    ModelChoice,
    read_formats_file,
)

__all__ = [
    "AUTO", "FORMATS_FILE_VERSION", "FormatsFile", "ModelChoice", "Resolution",
    "choose_format", "read_formats_file", "resolve_formats",
]  # fmt: skip


def choose_format(model: str, chat_template: str | None = None) -> Detection:
    """The format for ``model`` and why (the library's ``GetFormatterForModel``)."""
    return detect_format(model, chat_template)


@dataclass
class Resolution:
    """The concrete specs of each model after ``auto`` was replaced."""

    specs: dict[str, list[str]]
    """Per model, its format specs in order (duplicates removed)."""
    auto: dict[str, Detection] = field(default_factory=dict)
    """Per model, what ``auto`` resolved to (empty when ``auto`` was not asked for)."""

    @property
    def defaulted(self) -> list[str]:
        """Models no pattern knows (they got the default format)."""
        return [m for m, d in self.auto.items() if d.default]

    def warning(self) -> str | None:
        """The one line that names every model ``auto`` did not recognise, or None."""
        names = self.defaulted
        if not names:
            return None
        return (
            f"warning: --formats auto: no known model family for {', '.join(names)}; "
            f"using the default {DEFAULT_FORMAT}"
        )


def resolve_formats(
    models: Sequence[str],
    specs: Sequence[str],
    per_model: dict[str, str] | None = None,
    templates: Mapping[str, str] | None = None,
) -> Resolution:
    """Replace ``auto`` in ``specs`` by each model's detected format.

    ``per_model`` (from a :class:`FormatsFile`) gives a model its format outright; a model
    it does not name gets ``specs``. ``templates`` holds the chat template a server
    reported per model (checked before the name). Pure: no network, no registry look-up.
    """
    out: dict[str, list[str]] = {}
    auto: dict[str, Detection] = {}
    for model in models:
        chosen: list[str] = []
        given = [per_model[model]] if per_model and model in per_model else list(specs)
        for spec in given:
            if spec.strip() == AUTO:
                d = detect_format(model, (templates or {}).get(model))
                auto[model] = d
                spec = d.format
            chosen.append(spec.strip())
        out[model] = list(dict.fromkeys(chosen))
    return Resolution(out, auto)
