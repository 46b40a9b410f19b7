"""A trial contacts the model's endpoint and nothing else.

One provider's trial spent 23 s of its deadline trying to download a tokenizer: LiteLLM
counts the tokens of a reply sent without usage with a HuggingFace tokenizer for Llama
and Command R models, fetched from huggingface.co; it also fetches its cost map and the
Anthropic beta-header table from GitHub unless told not to. Each case runs in a fresh
process (nothing cached by an earlier test), every name lookup and connection recorded
and refused unless it is the fake server's, through the shared call plain and streamed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

SCRIPT = r"""
import asyncio, json, os, socket, sys, tempfile
from pathlib import Path

asked = []
_lookup, _connect = socket.getaddrinfo, socket.socket.connect

def lookup(host, *a, **k):
    asked.append(str(host))
    if host not in ("127.0.0.1", "localhost"):
        raise socket.gaierror(f"refused by the test: {host}")
    return _lookup(host, *a, **k)

def connect(self, address):
    host = address[0] if isinstance(address, tuple) else str(address)
    asked.append(str(host))
    if host not in ("127.0.0.1", "::1"):
        raise OSError(f"refused by the test: {host}")
    return _connect(self, address)

socket.getaddrinfo, socket.socket.connect = lookup, connect

from tests.providers import test_call_round_trips as rt
from tests.providers.servers.base import FakeServer, Response
from toolbench.cassettes.route import router
from toolbench.cassettes.use import use_cassette
from toolbench.formats.base import RenderedRequest
from toolbench.formats.format_registry import get_format
from toolbench.providers.model_api import CompletionRequest, ProviderSettings
from toolbench.providers.call import call
from toolbench.providers.litellm_api import LiteLLMAPI

model, streamed = sys.argv[1], sys.argv[2] == "1"
wire = {w.id: w for w in rt.WIRES}[sys.argv[3]]
for name, value in wire.env:
    os.environ[name] = value

def without_usage(body):
    # A reply without usage where the wire allows it: LiteLLM counts its tokens itself.
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in ("eval_count", "prompt_eval_count")}
    if "ndjson" not in wire.content_type:
        return body
    lines = [json.loads(l) for l in body.decode().splitlines() if l.strip()]
    for line in lines:
        for key in ("eval_count", "prompt_eval_count"):
            line.pop(key, None)
        if isinstance(line.get("delta"), dict):
            line["delta"].pop("usage", None)
    return "".join(json.dumps(l) + "\n" for l in lines).encode()

def answer(req):
    if streamed:
        return Response(200, without_usage(wire.streamed[1]), {"content-type": wire.content_type})
    return Response(200, without_usage(wire.plain[1]))

async def main():
    with FakeServer(answer) as server:
        api = LiteLLMAPI(ProviderSettings(api_base=server.base_url))
        endpoint = await api.endpoint(model, get_format("native"), live=True)
        with tempfile.TemporaryDirectory() as tmp, router(), \
                use_cassette(Path(tmp) / "c.json", "all", streamed=True) as tc:
            req = CompletionRequest(endpoint, RenderedRequest(messages=[rt.USER], tools=rt.TOOLS),
                                    7, tc if streamed else None, [], 0)
            got = await call(api, req, stream=streamed)
    print(json.dumps({"asked": sorted(set(asked)), "text": got.reply.text,
                      "tokens": got.completion_tokens}))

asyncio.run(main())
"""

CASES = [
    # model, wire: a Llama 3 model and a Command R model (HuggingFace tokenizers), and
    # Anthropic (the beta-header table).
    ("ollama_chat/llama-3-8b-instruct", "ollama"),
    ("cohere_chat/command-r-plus", "cohere"),
    ("anthropic/claude-3-7-sonnet-20250219", "anthropic"),
]


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize(("model", "wire"), CASES, ids=[c[1] for c in CASES])
def test_a_trial_contacts_only_the_models_endpoint(model: str, wire: str, streamed: bool) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("LITELLM_")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, model, "1" if streamed else "0", wire],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["text"] == "It is 18 C in Lisbon."
    assert set(got["asked"]) <= {"127.0.0.1", "localhost"}, got["asked"]
    assert "huggingface.co" not in done.stderr
