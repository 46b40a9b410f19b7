"""``toolbench run --formats native:api=responses`` end to end: a fake of OpenAI's
Responses API (:mod:`tests.providers.servers.responses`, sources named there) answers by
the conversation, the run records one cassette per trial, plain and streamed, and a
replay with the server gone gives the same results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.providers.servers.base import FakeServer, Request, Response
from tests.providers.servers.responses import events, refused, response, sse
from tests.runner.conftest import MT_SCENARIO, run_fake, trials_by_id

pytestmark = pytest.mark.usefixtures("openai_key")

MODEL = "openai/gpt-5-mini"
"""A model LiteLLM's table knows: it streams the Responses API for it natively."""
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-x"}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}  # fmt: skip


def answer(req: Request) -> Response:
    """The weather question gets a call (after a reasoning item), its result an answer
    quoting it, anything else a joke."""
    bad = refused(req.body)
    if bad is not None:
        return bad
    items = req.body["input"]
    results = [i for i in items if i.get("type") == "function_call_output"]
    user = next(i["content"] for i in items if i.get("role") == "user")
    if results:
        out = [_message(f"The weather: {results[-1]['output']}")]
    elif "Lisbon" in user or "Paris" in user:
        city = "Lisbon" if "Lisbon" in user else "Paris"
        out = [REASONING, {"type": "function_call", "id": "fc_1", "call_id": "call_w1",
                           "name": "get_weather", "arguments": json.dumps({"city": city}),
                           "status": "completed"}]  # fmt: skip
    else:
        out = [_message("Why did the chicken cross the road?")]
    body = response(out)
    if req.body.get("stream"):
        return Response(200, sse(events(body)), {"content-type": "text/event-stream"})
    return Response(200, body)


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for sid, trial in trials_by_id(run).items():
        row = trial.model_dump(mode="json")
        # What differs between any two runs; and the provider's time, which a replayed
        # stream does not have (the recorded latency is kept: latency_s).
        for key in ("run_id", "started_at", "finished_at", "harness_s", "provider_s"):
            row.pop(key, None)
        for attempt in row["attempts"]:
            attempt.pop("provider_s", None)
        out[sid] = row
    return out


@pytest.mark.parametrize("stream", ["off", "on"])
def test_a_responses_run_records_scores_and_replays(
    stream: str, tmp_path: Path, scenario_file: Path
) -> None:
    fmt = "native:api=responses"
    mt = tmp_path / "mt.yaml"
    mt.write_text(MT_SCENARIO)
    runs = {"run": scenario_file, "mt": mt}
    with FakeServer(answer) as fake:
        for out, scen in runs.items():
            code = run_fake(fake, tmp_path, scen, "--stream", stream, formats=fmt, out=out,
                            models=MODEL)  # fmt: skip
            assert code == 0
    assert len(fake.received) == 4  # weather, chat: one turn each; mt: two
    assert all(r.path == "/responses" for r in fake.received)
    first = {**trials_by_id(tmp_path / "run"), **trials_by_id(tmp_path / "mt")}
    for sid in ("weather", "mt"):
        scores = first[sid].scores
        assert first[sid].status == "ok" and scores is not None, sid
        assert scores.get("call_accuracy") is True, sid
    assert first["chat"].scores is not None and first["chat"].scores.get("no_call_correct") is True
    assert first["mt"].scores is not None and first["mt"].scores.get("final_answer_ok") is True
    (turn2,) = [r.body for r in fake.received if "function_call_output" in json.dumps(r.body)]
    assert turn2["input"][1] == REASONING  # the model's own items, verbatim
    assert turn2["input"][3] == {"type": "function_call_output", "call_id": "call_w1",
                                 "output": json.dumps({"temperature": 23})}  # fmt: skip
    # Replay: the server gone, the same results.
    for out, scen in runs.items():
        assert run_fake(fake, tmp_path, scen, "--stream", stream, "--record", "none",
                        formats=fmt, out=f"{out}-replay", models=MODEL) == 0  # fmt: skip
        assert _rows(tmp_path / f"{out}-replay") == _rows(tmp_path / out)


def test_a_model_litellm_would_fake_a_stream_for_is_unsupported_streamed(
    tmp_path: Path, scenario_file: Path
) -> None:
    """LiteLLM makes a Responses API stream up (a plain request, events invented) for a
    model its table does not know: such a trial is ``unsupported``, not a stream's
    timings that were never measured; nothing is asked of the server."""
    with FakeServer(answer) as fake:
        code = run_fake(fake, tmp_path, scenario_file, "--stream", "on",
                        formats="native:api=responses")  # fmt: skip
    assert code == 3 and fake.received == []
    rows = trials_by_id(tmp_path / "run")
    assert {r.status for r in rows.values()} == {"unsupported"}
    assert "LiteLLM does not stream the Responses API for this model" in str(
        rows["weather"].infra_error
    )
