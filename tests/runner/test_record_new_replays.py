"""``--record new`` replays every trial whose cassette answers it: nothing is asked of a
model again and no committed cassette changes by a byte. (A session once saw `new`
re-record trials that had a readable, matching cassette; this holds it.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.providers.local_server import LocalServerPool

ROOT = Path(__file__).resolve().parents[2]
MODELS = "local/smollm2-135m,local/gemma3-270m"
FORMATS = "xml,native,prompt-json:shots=2,xml:stream,native:stream"
SCENARIOS = "calculate-product,weather-paris,mt-order-status,irrelevant-joke"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.json"))}


def test_record_new_replays_what_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cas = tmp_path / "cassettes"
    for model in ("local_smollm2-135m", "local_gemma3-270m"):
        for fmt in ("xml", "native", "prompt-json_shots_2", "xml_stream", "native_stream"):
            src = ROOT / "cassettes" / model / fmt
            for scenario in SCENARIOS.split(","):
                if (src / f"{scenario}.json").is_file():
                    dest = cas / model / fmt / f"{scenario}.json"
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(src / f"{scenario}.json", dest)
    before = _files(cas)
    assert len(before) >= 30  # the copy found the committed cassettes

    async def no_server(self: LocalServerPool, model: str) -> str:
        raise AssertionError(f"--record new asked {model} again")

    monkeypatch.setattr(LocalServerPool, "base_url", no_server)
    monkeypatch.chdir(ROOT)
    out = tmp_path / "run"
    args = ["run", "--record", "new", "--quiet", "--no-report", "--models", MODELS,
            "--formats", FORMATS, "--scenarios", SCENARIOS, "--cassettes", str(cas),
            "--out", str(out)]  # fmt: skip
    assert run_cli(args) == 0
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == len(before)
    assert {d["status"] for d in lines} == {"ok"}
    assert _files(cas) == before
