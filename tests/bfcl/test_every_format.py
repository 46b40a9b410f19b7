"""BFCL's multi-turn entries played perfectly in several formats pass in each: the loop
(held-out tools re-rendered, results written the format's way, user turns appended)
does not depend on the format. BFCL itself runs a model in one format only."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from tests.bfcl import faithful as F

from toolbench.bfcl.multi_turn import CATEGORIES
from toolbench.engine import Conversation, TurnReply, effective_settings
from toolbench.formats import ModelReply, get_format
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

Calls = list[tuple[str, dict[str, Any]]]


def _xml(calls: Calls) -> ModelReply:
    return ModelReply(text="\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>"
        for n, a in calls))  # fmt: skip


def _prompt_json(calls: Calls) -> ModelReply:
    return ModelReply(text=json.dumps([{"tool": n, "arguments": a} for n, a in calls]))


def _native(calls: Calls) -> ModelReply:
    return ModelReply(tool_calls=[
        {"id": f"call_{i}", "type": "function",
         "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ])  # fmt: skip


ENCODERS = {"xml": _xml, "prompt-json": _prompt_json, "native": _native}


def play(sc: Scenario, spec: str) -> bool:
    fmt, encode = get_format(spec), ENCODERS[spec]
    replies = []
    for turn in F.ground_truth(sc):
        replies += [encode(step) for step in turn if step]
        replies.append(ModelReply(text="Done."))
    it = iter(replies)
    conv = Conversation(fmt, sc, effective_settings(sc))
    while not conv.done:
        request = conv.request()
        conv.feed(TurnReply(reply=next(it, ModelReply(text="Done.")), request=request.model_dump()))
    return score_trial(sc, fmt, conv.turns, conv.settings).get("loop_success") is True


@pytest.mark.parametrize("spec", sorted(ENCODERS))
def test_ground_truth_passes_in_every_format(bfcl_root: Path, spec: str) -> None:
    rng = random.Random(5)
    for cat in CATEGORIES:
        for q, a in rng.sample(F.entries(bfcl_root, cat), 3):
            sc = F.scenario(bfcl_root, cat, q, a)
            assert play(sc, spec), f"{q['id']} fails in {spec}"


def test_held_out_functions_reach_a_native_request(bfcl_root: Path) -> None:
    q, a = F.entries(bfcl_root, "multi_turn_miss_func")[0]
    sc = F.scenario(bfcl_root, "multi_turn_miss_func", q, a)
    fmt = get_format("native")
    conv = Conversation(fmt, sc, effective_settings(sc))

    def offered() -> set[str]:
        return {t["function"]["name"] for t in conv.request().tools or []}

    before = offered()
    for turn in F.ground_truth(sc)[:3]:
        for step in turn:
            conv.feed(TurnReply(reply=_native(step), request={}))
        conv.feed(TurnReply(reply=ModelReply(text="Done."), request={}))
    after = offered()
    assert "sort" not in before and "sort" in after
