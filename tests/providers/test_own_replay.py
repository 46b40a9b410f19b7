"""A server toolbench runs itself (the embedded models) replays without LiteLLM: its kind
says what it takes, its recorded replies are read as JSON, and the reading equals
LiteLLM's on every committed body."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.providers.capabilities import filter_params
from toolbench.providers.reply import reply_of, whole

ROOT = Path(__file__).resolve().parents[2]
LOCAL = [p for p in sorted((ROOT / "cassettes").glob("local_*/*/*.json"))]


def test_a_replay_of_the_embedded_models_imports_no_litellm(tmp_path: Path) -> None:
    probe = (
        "import sys, json\n"
        "from toolbench.cli.app import run_cli\n"
        f"rc = run_cli(['run', '--record', 'none', '--quiet', '--no-report', '--out',"
        f" {str(tmp_path / 'run')!r}, '--scenarios', 'calculate-product,mt-order-status',"
        " '--formats', 'xml,native,prompt-json:shots=2,xml:stream,native:stream'])\n"
        "print(rc, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.splitlines()[-1] == "0 False", done.stderr[-2000:]
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 20
    assert {json.loads(x)["status"] for x in lines} == {"ok"}


def _bodies() -> list[dict[str, object]]:
    out = []
    for path in LOCAL:
        for ex in json.loads(path.read_text(encoding="utf-8")).get("exchanges", []):
            body = ex.get("response", {}).get("body")
            if isinstance(body, dict) and isinstance(body.get("choices"), list):
                out.append(body)
    return out


def test_the_json_reading_equals_litellms_on_every_committed_body() -> None:
    from toolbench.providers.litellm_api import _model_response, litellm

    lm = litellm()
    bodies = _bodies()
    assert len(bodies) > 1000  # the committed plain replies of both embedded models
    for body in bodies:
        own = reply_of(whole(body), own_server=True)
        via = reply_of(whole(_model_response(body, lm)), own_server=True)
        assert own == via, body


@pytest.mark.parametrize(
    ("asked", "knobs", "sent", "dropped"),
    [
        ({"temperature": 0, "seed": 1, "stop": ["x"]}, (), ["seed", "stop", "temperature"], []),
        ({"temperature": 0, "top_k": 5}, (), ["temperature", "top_k"], []),  # the user's own
        ({"tool_choice": "required"}, ("tool_choice",), ["tool_choice"], []),
        ({"seed": 1, "logit_bias": {}}, ("logit_bias",), ["seed"], ["logit_bias"]),
    ],
)
def test_the_kind_decides_what_its_server_takes(
    asked: dict[str, object], knobs: tuple[str, ...], sent: list[str], dropped: list[str]
) -> None:
    takes = frozenset({"temperature", "seed", "stop", "tool_choice"})
    got, record = filter_params("openai/smollm2", asked, None, knobs, takes)
    assert sorted(got) == sent == record.sent
    assert sorted(record.dropped) == dropped
    for param in dropped:
        assert record.dropped[param] == (
            f"openai/smollm2 does not take {param} (its server's parameters)"
        )
