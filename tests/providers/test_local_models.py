"""What a report's header says about the embedded models of a run."""

from __future__ import annotations

import pytest

from toolbench.providers.local_models import LOCAL_MODELS, REPORT_NOTE, report_notes

SMOL, GEMMA = "local/smollm2-135m", "local/gemma3-270m"


@pytest.mark.parametrize(
    ("models", "named"),
    [
        ([], []),
        (["openai/gpt-5-mini", "openai/gpt-5-mini@low"], []),
        ([SMOL], [SMOL]),
        ([SMOL, GEMMA], [SMOL, GEMMA]),
        # A variant of an embedded model is that model under other parameters: its note,
        # once, however many variants the run has.
        ([f"{SMOL}@forced"], [SMOL]),
        ([SMOL, f"{SMOL}@forced", f"{GEMMA}@a", f"{GEMMA}@b"], [SMOL, GEMMA]),
    ],
)
def test_each_embedded_model_of_the_run_gets_its_note_once(
    models: list[str], named: list[str]
) -> None:
    expected = [f"{LOCAL_MODELS[m].name}: {LOCAL_MODELS[m].description}." for m in named]
    assert report_notes(models) == ([*expected, REPORT_NOTE] if named else [])
