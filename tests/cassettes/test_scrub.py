"""Cassette hygiene: planted secrets never reach a cassette or a run; the audit finds
secret shapes in cassettes on disk."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.runner.conftest import GOOD_CALL
from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes import router, use_cassette
from toolbench.cli.app import run_cli

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
    cas = tmp_path / "c.json"
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
