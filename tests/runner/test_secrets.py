"""Secrets never reach disk: every planted credential shape, through a real recorded run,
its reports and exports; and ``cassettes audit`` finds each shape by pattern alone.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pandas as pd
import pytest
import yaml
from vcr.request import Request as VcrRequest

from tests.runner.conftest import GOOD_CALL
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.secrets import forget_registered_secrets
from toolbench.cassettes import scrub_request, scrub_response
from toolbench.cli.app import run_cli
from toolbench.redaction import (
    is_secret_env_name,
    redact,
    redact_error,
    register_secret,
    secret_values,
)
from toolbench.runner.audit import audit
from toolbench.store import load_results


def _b64url(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


JWT = ".".join(
    [_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "planted-jwt"}), "c2lnbmF0dXJl"]
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEplantedPEMbody0123456789abcdef\n"
    "-----END RSA PRIVATE KEY-----"
)

ENV_SECRETS = {
    "OPENAI_API_KEY": "sk-proj-PlantedOpenAI0123456789abcdefXYZ",
    "AZURE_API_KEY": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "AZURE_OPENAI_API_KEY": "9a8b7c6d5e4f30211203f4e5d6c7b8a9",
    "ANTHROPIC_API_KEY": "sk-ant-api03-PlantedAnthropic0123456789abcdef",
    "GEMINI_API_KEY": "AIzaSyPlantedGoogleKey0123456789abcdefg",
    "HF_TOKEN": "hf_PlantedHuggingFace0123456789abcdefgh",
    "GITHUB_TOKEN": "ghp_PlantedGithubToken0123456789abcdefgh",
    "AWS_ACCESS_KEY_ID": "AKIAPLANTEDKEY012345",
    "AWS_SECRET_ACCESS_KEY": "wJalrPlantedSecretAccessKey0123456789abcd",
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEPlantedSessionToken0123456789",
    "SLACK_BOT_TOKEN": "xoxb-123456789012-123456789012-plantedslacktok",
    "MY_SERVICE_SECRET": "planted-service-secret-value-0001",
    "DB_PASSWORD": "planted-db-password-0002",
    "CUSTOM_JWT_TOKEN": JWT,
    "DEPLOY_PRIVATE_KEY": PEM,
    "WEIRD_API_KEY": 'pl@nted"quote\\slash/&<amp>é-key-0003',
}
CLI_USER, CLI_PASSWORD, CLI_TOKEN = "tbuser-planted", "pw-planted-123456", "tok-planted-abcdef12"
UNKNOWN_KEY = "UnknownPlantedKey0123456789"
"""Echoed by the server in an error text; in no environment variable: found by shape."""


def _all_planted() -> dict[str, str]:
    basic = base64.b64encode(f"{CLI_USER}:{CLI_PASSWORD}".encode()).decode()
    return {
        **ENV_SECRETS,
        "cli user": CLI_USER,
        "cli password": CLI_PASSWORD,
        "cli token": CLI_TOKEN,
        "basic auth of cli userinfo": basic,
        "error-text key": UNKNOWN_KEY,
    }


def _forms(value: str) -> set[str]:
    """How a value may be written: raw, JSON-escaped, percent-encoded, HTML-escaped."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    forms |= {quote(value, safe=""), html.escape(value), html.escape(value, quote=False)}
    return forms


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    forget_registered_secrets()
    yield
    forget_registered_secrets()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No secret-bearing variable of the machine running the tests is in play."""
    for name in list(os.environ):
        if is_secret_env_name(name):
            monkeypatch.delenv(name)


def _header_safe(v: str) -> bool:
    return v.isascii() and "\n" not in v


def test_no_planted_secret_reaches_any_byte_written(
    fake: FakeOpenAI,
    tmp_path: Path,
    scenario_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    clean_env: None,
) -> None:
    for k, v in ENV_SECRETS.items():
        monkeypatch.setenv(k, v)
    everything = " | ".join(ENV_SECRETS.values())
    # A server that echoes: the keys in response headers (the request's Authorization
    # too), in the reply body, and in the text of an error.
    fake.reply_headers = lambda req: {
        "x-request-id": ENV_SECRETS["OPENAI_API_KEY"],
        "openai-organization": ENV_SECRETS["AZURE_API_KEY"],
        "set-cookie": f"session={ENV_SECRETS['MY_SERVICE_SECRET']}; HttpOnly",
        "x-echo-authorization": req.get("Authorization", ""),
        "x-acme-api-key": ENV_SECRETS["AZURE_OPENAI_API_KEY"],
        "x-debug": " ".join(v for v in ENV_SECRETS.values() if _header_safe(v)),
        "x-upstream": f"https://{CLI_USER}:{CLI_PASSWORD}@up.example/v1?token={CLI_TOKEN}",
    }
    error_text = f"Invalid key={UNKNOWN_KEY} (also got {everything}, {CLI_PASSWORD})"
    fault = Fault(400, body=json.dumps({"error": {"message": error_text}}).encode())
    fake.enqueue(f"{GOOD_CALL}\n{everything}", fault, f"echo: {everything}", "ok")
    # The request body carries one too: the user put it in a scenario.
    scenario_file.write_text(
        scenario_file.read_text().replace(
            "Tell me a joke.", f"Joke about {ENV_SECRETS['GITHUB_TOKEN']}"
        )
    )
    api_base = fake.base_url.replace("http://", f"http://{CLI_USER}:{CLI_PASSWORD}@")
    # (A ?token= in --api-base is refused: LiteLLM would append the route after it.)
    run, cas, rep = tmp_path / "run", tmp_path / "cas", tmp_path / "reports"
    common = ["--models", "openai/fake", "--formats", "prompt-json,native",
              "--scenarios", str(scenario_file), "--api-base", api_base,
              "--cassettes", str(cas), "--quiet", "--no-report", "--concurrency", "1"]  # fmt: skip
    assert run_cli(["run", *common, "--out", str(run)]) == 0
    # The credentials really were sent (userinfo becomes Basic auth).
    assert any("Basic " in r.headers.get("Authorization", "") for r in fake.received)
    results = load_results(run)
    assert len(results) == 4
    assert any(r.status == "infra_error" for r in results)  # the 400 with the echoed key
    assert all(r.status in ("ok", "infra_error") for r in results)
    # A replay matches the recorded (redacted) request bodies and gives the same replies.
    assert run_cli(["run", *common, "--out", str(tmp_path / "replay"), "--record", "none"]) == 0
    replayed = {r.key: r for r in load_results(tmp_path / "replay")}
    for r in results:
        if r.status == "ok":
            assert replayed[r.key].status == "ok"
            assert replayed[r.key].turns[0].reply.text == r.turns[0].reply.text
    for fmt, name in (("html", "r.html"), ("md", "r.md"), ("junit", "r.xml")):
        assert run_cli(["report", str(run), "--to", fmt, "-o", str(rep / name)]) == 0
    for to in ("csv", "jsonl", "parquet"):
        assert run_cli(["export", str(run), "--to", to, "-o", str(rep / f"t.{to}")]) == 0
    assert run_cli(["rescore", str(run), "-o", str(tmp_path / "rescored")]) == 0

    written = [p for p in sorted(tmp_path.rglob("*")) if p.is_file() and "scen" not in p.parts]
    assert {p.name for p in written} >= {"results.jsonl", "r.html", "r.md", "r.xml", "t.csv"}
    for name, value in _all_planted().items():
        for path in written:
            data = path.read_bytes()
            for form in _forms(value):
                assert form.encode() not in data, f"{name} ({form!r}) in {path}"
    frame = pd.read_parquet(rep / "t.parquet")
    cells = " ".join(str(x) for x in frame.to_numpy().ravel())
    for name, value in _all_planted().items():
        assert value not in cells, name
    # What was redacted was marked, not silently dropped.
    assert "<redacted>" in (run / "results.jsonl").read_text()
    assert run_cli(["cassettes", "audit", str(cas)]) == 0  # the values are still set
    for k in ENV_SECRETS:
        monkeypatch.delenv(k)
    forget_registered_secrets()
    assert audit(cas) == []  # and no shape is left either
    assert audit(run) == []


# ------------------------------------------------------------ the audit table


@dataclass(frozen=True)
class Row:
    """One planted shape: where it sits in a cassette, and how its redaction is tested."""

    name: str
    fragment: str
    """YAML lines under ``response:`` (indented by the test)."""
    line: int
    """0-based line of the fragment where audit must report it."""
    kinds: frozenset[str]
    secret: str
    via: str
    """``text``: redact_error of ``plain``; ``header``: scrub_response drops it by name;
    ``uri``: scrub_request of ``plain`` as the request URI; ``env``: by value."""
    plain: str = ""


def _row(name: str, fragment: str, line: int, kinds: str, secret: str, via: str = "text",
         plain: str = "") -> Row:  # fmt: skip
    """``plain`` defaults to the fragment's parsed strings: the text as a server sends it."""
    return Row(name, fragment, line, frozenset(kinds.split("|")), secret, via,
               plain or " ".join(_strings(yaml.safe_load(fragment))))  # fmt: skip


def _strings(data: object) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v)


def _body(text: str) -> str:
    return f"body:\n  string: {json.dumps(text)}"


SK = "sk-PlantedOpenAIlike0123456789abcd"
AZ = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
Q = "secret query parameter"
ROWS = [
    _row("openai key", _body(f"reply {SK}"), 1, "openai-style key", SK),
    _row("openai project key", _body("k sk-proj-Planted0123456789abcdefgh"), 1,
         "openai-style key", "sk-proj-Planted0123456789abcdefgh"),
    _row("anthropic key", _body("sk-ant-api03-Planted0123456789abcdefgh"), 1, "anthropic key",
         "sk-ant-api03-Planted0123456789abcdefgh"),
    _row("google key", _body("AIzaSyPlanted0123456789abcdefghijkl"), 1, "google api key",
         "AIzaSyPlanted0123456789abcdefghijkl"),
    _row("huggingface token", _body("hf_Planted0123456789abcdefghijklmn"), 1,
         "huggingface token", "hf_Planted0123456789abcdefghijklmn"),
    _row("github token", _body("ghp_Planted0123456789abcdefghijklmnopqr"), 1,
         "github token", "ghp_Planted0123456789abcdefghijklmnopqr"),
    _row("github fine-grained token", _body("github_pat_11Planted0123456789abcdefghijkl_mn"), 1,
         "github token", "github_pat_11Planted0123456789abcdefghijkl_mn"),
    _row("bearer in authorization header",
         "headers:\n  Authorization:\n  - Bearer PlantedBearer0123456789", 1,
         "secret header", "PlantedBearer0123456789", "header", "Authorization"),
    _row("bearer in another header",
         "headers:\n  x-echo:\n  - Bearer PlantedBearer0123456789", 2,
         "bearer token", "PlantedBearer0123456789", "text",
         "echo: Bearer PlantedBearer0123456789"),
    _row("set-cookie", "headers:\n  Set-Cookie:\n  - session=PlantedCookie0123; HttpOnly", 1,
         "secret header", "PlantedCookie0123", "header", "Set-Cookie"),
    _row("non-sk- key in api-key header", f"headers:\n  api-key:\n  - {AZ}", 1,
         "secret header", AZ, "header", "api-key"),
    _row("non-sk- key in a custom key header", f"headers:\n  x-acme-api-key:\n  - {AZ}", 1,
         "secret header", AZ, "header", "x-acme-api-key"),
    _row("x-auth-token header", f"headers:\n  X-Auth-Token:\n  - {AZ}", 1,
         "secret header", AZ, "header", "X-Auth-Token"),
    _row("basic credentials in a header", "headers:\n  x-fwd:\n  - Basic dXNlcjpwbGFudGVkcHc=",
         2, "basic credentials", "dXNlcjpwbGFudGVkcHc=", "text",
         "Basic dXNlcjpwbGFudGVkcHc="),
    _row("key= query parameter", "url: https://api.example/v1?key=PlantedQueryKey01", 0, Q,
         "PlantedQueryKey01", "uri", "https://api.example/v1?key=PlantedQueryKey01"),
    _row("api_key= query parameter", "url: https://api.example/v1?a=1&api_key=PlantedApiKey02",
         0, Q, "PlantedApiKey02", "uri", "https://api.example/v1?a=1&api_key=PlantedApiKey02"),
    _row("token= query parameter", "url: https://api.example/v1?token=PlantedToken03", 0, Q,
         "PlantedToken03", "uri", "https://api.example/v1?token=PlantedToken03"),
    _row("access_token= query parameter", "url: https://x.example/?access_token=PlantedAT04",
         0, Q, "PlantedAT04", "uri", "https://x.example/?access_token=PlantedAT04"),
    _row("azure sas sig=", "url: https://b.example/c?sv=2024&sig=PlantedSig05%3D", 0, Q,
         "PlantedSig05", "uri", "https://b.example/c?sv=2024&sig=PlantedSig05%3D"),
    _row("x-amz-signature=", "url: https://s3.example/o?X-Amz-Signature=PlantedAmz06", 0, Q,
         "PlantedAmz06", "uri", "https://s3.example/o?X-Amz-Signature=PlantedAmz06"),
    _row("userinfo password", "url: https://bob:PlantedPw07@api.example/v1", 0,
         "url credentials|basic auth credentials", "PlantedPw07", "uri",
         "https://bob:PlantedPw07@api.example/v1"),
    _row("key= in a server's error text",
         _body('{"error": {"message": "Invalid key=PlantedErrKey08 given"}}'), 1,
         "secret assignment", "PlantedErrKey08"),
    _row("aws access key id", _body("id AKIAPLANTEDKEY012345"), 1, "aws access key",
         "AKIAPLANTEDKEY012345"),
    _row("aws secret access key",
         _body("aws_secret_access_key=wJalrPlantedSecretAccessKey0123456789abcd"), 1,
         "aws access key|secret assignment", "wJalrPlantedSecretAccessKey0123456789abcd"),
    _row("slack token", _body("xoxb-123456789012-123456789012-plantedslacktok"), 1,
         "slack token", "xoxb-123456789012-123456789012-plantedslacktok"),
    _row("slack webhook",
         _body("https://hooks.slack.com/services/T0PLANTED/B0PLANTED/PlantedHook0123456789ab"),
         1, "slack token", "PlantedHook0123456789ab"),
    _row("jwt", _body(f"token {JWT}"), 1, "json web token", JWT),
    _row("pem private key (block)", "body:\n  string: |\n    " + PEM.replace("\n", "\n    "),
         2, "private key", "MIIEplantedPEMbody0123456789abcdef", "text", PEM),
    _row("pem private key (json-escaped)", _body(json.dumps({"k": PEM})), 1, "private key",
         "MIIEplantedPEMbody0123456789abcdef", "text", json.dumps({"k": PEM})),
    _row("stripe key", _body("sk_live_" + "Planted0123456789abcdefgh"), 1,
         "stripe access key", "sk_live_Planted0123456789abcdefgh"),
    _row("password: keyword", 'extra:\n  password: "PlantedPassw0rd9"', 1, "secret keyword",
         "PlantedPassw0rd9", "text", 'password="PlantedPassw0rd9"'),
    # YAML folds or continues long strings, and escapes: only the parsed scalar is a key.
    _row("key split across yaml lines",
         'body:\n  string: "reply \\x07 sk-PlantedOpenAIsp\\\n    lit0123456789abcd"', 1,
         "openai-style key", "sk-PlantedOpenAIsplit0123456789abcd"),
    _row("yaml \\u-escaped key", 'body:\n  string: "\\u0073k-PlantedEscaped0123456789ab"', 1,
         "openai-style key", "sk-PlantedEscaped0123456789ab"),
    _row("yaml \\x-escaped key", 'body:\n  string: "\\x73\\x6b-PlantedHexEsc0123456789abc"', 1,
         "openai-style key", "sk-PlantedHexEsc0123456789abc"),
]  # fmt: skip

CASSETTE = """\
interactions:
- request:
    body: null
    headers: {{}}
    method: POST
    uri: http://api.example/v1/chat/completions
  response:
    status: {{code: 200, message: OK}}
{fragment}
version: 1
"""
FRAGMENT_AT = 9
"""1-based line of a cassette on which the fragment starts."""


def _cassette(tmp_path: Path, row: Row) -> Path:
    frag = "\n".join("    " + line for line in row.fragment.split("\n"))
    path = tmp_path / "planted.yaml"
    path.write_text(CASSETTE.format(fragment=frag), encoding="utf-8")
    return path


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_audit_finds_each_planted_shape_without_the_env(
    row: Row, tmp_path: Path, clean_env: None
) -> None:
    path = _cassette(tmp_path, row)
    assert row.secret not in "".join(secret_values())
    findings = audit(path)
    at = FRAGMENT_AT + row.line
    assert any(f.line == at and f.kind in row.kinds for f in findings), (at, findings)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_each_planted_shape_is_redacted(row: Row, clean_env: None) -> None:
    if row.via == "header":
        resp = {"status": {"code": 200}, "headers": {row.plain: [row.secret], "x-ok": ["1"]},
                "body": {"string": b"{}"}}  # fmt: skip
        out = scrub_response(resp)
        assert out is not None and out["headers"] == {"x-ok": ["1"]}
    elif row.via == "uri":
        req = scrub_request(VcrRequest("POST", row.plain, b"{}", {}))
        assert row.secret not in req.uri
        assert req.uri.startswith(f"https://{urlsplit(row.plain).hostname}/")
    else:
        assert row.secret not in redact_error(f"error: {row.plain} (status 400)")


NOT_SECRETS = [
    ("authorization as a tool schema property",
     "body:\n  json:\n    tools:\n    - properties:\n        Authorization:\n"
     "          type: string\n          description: 'Bearer {token}'"),
    ("placeholder key in backtick-quoted code",
     _body("fetch(`https://api.example/v2?api_key=your_api_key_here`);\n"
           "const api_key = `your_api_key_here`;")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fragment"), NOT_SECRETS, ids=[n for n, _ in NOT_SECRETS])
def test_what_models_and_tool_schemas_write_is_not_a_finding(
    name: str, fragment: str, tmp_path: Path, clean_env: None
) -> None:
    """Found in BFCL recordings: a REST tool's ``Authorization`` parameter and a model's
    ``your_api_key_here`` inside JavaScript backticks are neither header nor key."""
    path = _cassette(tmp_path, Row(name, fragment, 0, frozenset(), "", "text"))
    assert audit(path) == []


def test_a_header_key_in_a_file_that_is_not_yaml_is_still_a_finding(
    tmp_path: Path, clean_env: None
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("headers:\n  Authorization:\n  - x\n   : [unclosed\n", encoding="utf-8")
    assert [(f.line, f.kind) for f in audit(path)] == [(2, "secret header")]


def test_a_committed_cassette_dir_audits_clean(clean_env: None) -> None:
    """The shapes are strict enough for real model output (no false positives)."""
    root = Path(__file__).parents[2] / "cassettes"
    assert root.is_dir()
    assert audit(root) == []


def test_environment_value_of_any_shape_is_found_and_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    value = "zq-planted-custom-credential"  # no known shape: only its variable says so
    path = _cassette(tmp_path, _row("env", _body(f"echo {value}"), 1, "x", value))
    assert audit(path) == []
    monkeypatch.setenv("ACME_CLIENT_SECRET", value)
    assert [f.kind for f in audit(path)] == ["environment secret value"]
    assert value not in redact(f"a {value} b")


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True), ("AZURE_API_KEY", True), ("AZURE_OPENAI_API_KEY", True),
        ("AWS_SECRET_ACCESS_KEY", True), ("AWS_SESSION_TOKEN", True),
        ("AWS_ACCESS_KEY_ID", True), ("HF_TOKEN", True), ("DB_PASSWORD", True),
        ("AZURE_CLIENT_SECRET", True), ("VERTEXAI_CREDENTIALS", True), ("WATSONX_APIKEY", True),
        ("LITELLM_MASTER_KEY", True), ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("PWD", False), ("OLDPWD", False), ("TOKENIZERS_PARALLELISM", False), ("HOME", False),
        ("SSH_AUTH_SOCK", False), ("OPENAI_API_BASE", False), ("KEYBOARD_LAYOUT", False),
        ("LOCAL_MAX_TOKENS", False),
    ],
)  # fmt: skip
def test_secret_env_names(name: str, secret: bool) -> None:
    assert is_secret_env_name(name) is secret


def test_url_valued_env_credentials_and_registered_values_are_redacted(
    monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    monkeypatch.setenv("AZURE_API_BASE", "https://me:PlantedEnvPw1@az.example/?sig=PlantedSig2")
    register_secret("from-the-command-line-3")
    register_secret("short")  # too short to redact safely: ignored
    register_secret("1000000")  # a number: would rewrite token counts and JSON numbers
    monkeypatch.setenv("LOCAL_MAX_TOKENS", "256000")
    text = redact('PlantedEnvPw1 PlantedSig2 from-the-command-line-3 short {"n":1000000}')
    assert text == '<redacted> <redacted> <redacted> short {"n":1000000}'
    # What an HTTP client makes of the userinfo (Authorization: Basic ...) is known too.
    assert base64.b64encode(b"me:PlantedEnvPw1").decode() in secret_values()


def test_reports_and_exports_redact_a_results_file_written_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    """A results file from an older toolbench (or another machine) may hold a key: every
    report and export written from it still has none."""
    from toolbench.results import TrialResult

    key = 'sk-OlderRunKey0123456789abcdef&"<x>'
    monkeypatch.setenv("OPENAI_API_KEY", key)
    trial = TrialResult(
        run_id="old", toolbench_version="0", model=f"openai/{key}", format="xml",
        scenario_id="s", status="infra_error", infra_error=f"AuthenticationError: {key}",
    )  # fmt: skip
    run = tmp_path / "old"
    run.mkdir()
    (run / "results.jsonl").write_text(trial.model_dump_json() + "\n", encoding="utf-8")
    out = tmp_path / "out"
    for fmt, name in (("html", "r.html"), ("md", "r.md"), ("junit", "r.xml")):
        assert run_cli(["report", str(run), "--to", fmt, "-o", str(out / name)]) == 0
    for to in ("csv", "jsonl", "parquet"):
        assert run_cli(["export", str(run), "--to", to, "-o", str(out / f"t.{to}")]) == 0
    for path in sorted(out.iterdir()):
        data = path.read_bytes()
        assert data
        for form in _forms(key) | {key[:24]}:
            assert form.encode() not in data, (form, path)
    assert key not in " ".join(map(str, pd.read_parquet(out / "t.parquet").to_numpy().ravel()))


@pytest.mark.parametrize("unit", ["eyJ", "sk-", "key=", "a_", "x://"])
def test_shape_search_stays_linear_on_hostile_text(unit: str) -> None:
    """A reply is hostile input: detect-secrets' JWT regex alone took 234 s on 600 KB of
    ``eyJ`` before texts were cut into windows (quadratic); now about a second."""
    import time

    from toolbench.secret_shapes import find_shapes

    text = unit * (300_000 // len(unit))
    t0 = time.perf_counter()
    find_shapes(text)
    assert time.perf_counter() - t0 < 20


def test_secret_values_follow_the_environment_and_registrations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The value list is cached per environment: a changed or new secret is seen at once."""
    monkeypatch.setenv("ACME_API_KEY", "acme-first-secret-value-0001")
    assert "acme-first-secret-value-0001" in secret_values()
    monkeypatch.setenv("ACME_API_KEY", "acme-second-secret-value-0002")
    values = secret_values()
    assert "acme-second-secret-value-0002" in values
    assert "acme-first-secret-value-0001" not in values
    register_secret("registered-secret-value-0003")
    try:
        assert "registered-secret-value-0003" in secret_values()
    finally:
        forget_registered_secrets()
    assert "registered-secret-value-0003" not in secret_values()
