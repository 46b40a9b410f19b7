"""Issue 9, "Bad input": a provider that answers with something that is not a reply.

Each fails its own trials with a typed code (asserted), is never recorded as if it were
the model's answer (a later ``--record new`` asks the server again), leaves the run's
other trials measured and written, and prints no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.providers.cases import CASES, SCENARIOS, Case
from tests.providers.servers.base import Request, Response
from toolbench.cli.app import run_cli
from toolbench.store import load_results

CASE = {c.id: c for c in CASES}
HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>"


def _anthropic_unknown_block(req: Request) -> Response:
    # A reply in the Messages shape whose only block has a type LiteLLM does not read
    # (it would drop the block and hand on an empty message).
    return Response(200, {
        "id": "msg_01bad", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "hologram", "data": "zz"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1},
    })  # fmt: skip


def _gemini_blocked(req: Request) -> Response:
    # What Gemini sends when it blocks a prompt: no candidates, only the feedback.
    # (https://ai.google.dev/api/generate-content#PromptFeedback)
    return Response(200, {
        "promptFeedback": {"blockReason": "OTHER"},
        "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3},
        "modelVersion": "gemini-2.0-flash",
    })  # fmt: skip


def _gemini_empty(req: Request) -> Response:
    return Response(200, {"usageMetadata": {"promptTokenCount": 3}, "modelVersion": "x"})


BAD = {
    # name: (provider, the broken reply, the trial's status, its code, a line of its message)
    "html-502": (
        "anthropic", lambda r: Response(502, HTML, {"content-type": "text/html"}),
        "infra_error", "infra.server_error", "502 Bad Gateway",
    ),
    "html-200": (
        "gemini", lambda r: Response(200, HTML, {"content-type": "text/html"}),
        "infra_error", "infra.bad_reply", "body is not JSON",
    ),
    "anthropic-unknown-block": (
        "anthropic", _anthropic_unknown_block,
        "infra_error", "infra.bad_reply", "unknown content block type 'hologram'",
    ),
    "gemini-blocked": (
        # A blocked prompt is the provider's filter (issue 34), not a broken reply.
        "gemini", _gemini_blocked,
        "infra_error", "provider.filtered", "without candidates (blockReason OTHER)",
    ),
    "ollama-model-not-pulled": (
        # Ollama's answer for a model that is not pulled (docs/api.md, errors).
        "ollama", lambda r: Response(404, {"error": "model 'llama3' not found"}),
        "infra_error", "infra.client_error", "model 'llama3' not found",
    ),
    "anthropic-overloaded": (
        # Anthropic's 529 (https://docs.anthropic.com/en/api/errors): retried, then infra.
        "anthropic", lambda r: Response(529, {"type": "error", "error": {
            "type": "overloaded_error", "message": "Overloaded"}}),
        "infra_error", "infra.server_error", "Overloaded",
    ),
    "gemini-no-candidates": (
        "gemini", _gemini_empty, "infra_error", "infra.bad_reply", "without candidates",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BAD))
def test_bad_reply_fails_its_trials_with_a_typed_code(
    name: str, tmp_path: Path, keys: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The provider breaks for the Oslo conversation only: those trials fail with the
    code, the Lisbon trials of the same run are measured and kept."""
    provider, broken, status, code, text = BAD[name]
    case: Case = CASE[provider]
    with case.server() as srv:
        srv.override = lambda req: broken(req) if "Oslo" in json.dumps(req.body) else None
        rc = run_cli([
            "run", "--models", case.model, "--formats", "native,xml",
            "--scenarios", str(SCENARIOS), "--api-base", srv.base_url,
            "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
            "--quiet", "--no-report",
        ])  # fmt: skip
    assert "Traceback" not in capsys.readouterr().err
    assert rc == 0  # every (model, format) cell measured something: the run is measured
    results = {(r.format, r.scenario_id): r for r in load_results(tmp_path / "run")}
    assert len(results) == 4
    for fmt in ("native", "xml"):
        bad, good = results[fmt, "rt-weather-oslo"], results[fmt, "rt-weather-lisbon"]
        assert (bad.status, bad.error_code) == (status, code), (fmt, bad.infra_error)
        assert text in (bad.infra_error or ""), bad.infra_error
        assert bad.scores is None and bad.turns == []
        assert good.status == "ok" and good.scores is not None and good.scores.get("call_accuracy")
        # Never recorded as the model's answer (--record new asks the server again);
        # the good trial's cassette is there.
        slug = case.model.replace("/", "_")
        assert not (tmp_path / "cas" / slug / fmt / "rt-weather-oslo.json").exists()
        assert (tmp_path / "cas" / slug / fmt / "rt-weather-lisbon.json").is_file()
    for path in tmp_path.rglob("*"):  # the key reached the server, never a written byte
        assert not path.is_file() or keys.encode() not in path.read_bytes(), path
