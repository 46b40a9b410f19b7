"""Live: the embedded server's greedy replies do not depend on the order of requests.

Each trial's reply must be the same whichever trial ran before it on the server; with
llama-server's prompt cache on, most are not (see :meth:`LlamaServer.command`). Needs
``toolbench[local]``; skips only where no llama-server is installed (CI installs it).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.live import require_llama_server
from toolbench.providers.llama_server import LlamaServer
from toolbench.providers.local_models import LOCAL_MODELS

pytestmark = pytest.mark.live

require_llama_server("live request-order test")

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "cassettes" / "local_smollm2-135m" / "prompt-json"


def _bodies(n: int) -> list[dict[str, Any]]:
    """Real requests toolbench sent (from committed cassettes): prompts that share a prefix."""
    bodies = []
    for path in sorted(RECORDED.glob("*.json"))[:n]:
        data = json.loads(path.read_text(encoding="utf-8"))
        body = data["exchanges"][0]["request"]["body"]
        bodies.append({**body, "max_tokens": 64})
    return bodies


def _ask(base_url: str, body: dict[str, Any]) -> str:
    req = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=300) as resp:
        return str(json.load(resp)["choices"][0]["message"]["content"])


def test_replies_are_the_same_in_any_order_of_requests(tmp_path: Path) -> None:
    bodies = _bodies(4)
    assert len(bodies) == 4
    spec = LOCAL_MODELS["local/smollm2-135m"]
    server = LlamaServer(spec.gguf_path(), spec.alias, tmp_path / "server.log",
                         chat_template_file=spec.chat_template_file())  # fmt: skip
    asyncio.run(server.start())
    try:
        forward = [_ask(server.base_url, b) for b in bodies]
        backward = [_ask(server.base_url, b) for b in reversed(bodies)][::-1]
    finally:
        server.stop()
    assert forward == backward
