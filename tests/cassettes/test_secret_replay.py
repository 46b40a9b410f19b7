"""A trial whose request carried a secret replays with ``--record none``, streamed as
plain (issue 34, section 7).

The cassette records the request redacted; the replay matches the live request as it
would be recorded (:func:`toolbench.cassettes.scrub_body_data`, and the request key of
:func:`toolbench.cassettes.boundary.request_key`), so the secret it still carries does
not make it another request.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, MT_SCENARIO, SCENARIO, run_fake, trials_by_id
from tests.support.secrets import forget_registered_secrets
from toolbench.cassettes.boundary import request_key
from toolbench.providers.fake import FakeServer, by_turn
from toolbench.redaction import register_secret

ENV_KEY = "sk-live-envkey-0123456789abcdef"
PARAM_SECRET = "sk-param-secret-9876543210fedcba"
MT_CALL = '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}'


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    forget_registered_secrets()
    yield
    forget_registered_secrets()


def _param() -> str:
    return f'openai/fake:extra_body={{"user_token": "{PARAM_SECRET}"}}'


@pytest.mark.parametrize("stream", ["off", "on"])
@pytest.mark.parametrize("echo", [False, True], ids=["param", "param+echoed-env-key"])
@pytest.mark.parametrize("multi_turn", [False, True], ids=["one-turn", "two-turns"])
def test_a_request_with_a_secret_replays(
    tmp_path: Path, stream: str, echo: bool, multi_turn: bool
) -> None:
    text = MT_SCENARIO if multi_turn else SCENARIO
    scen = tmp_path / "s.yaml"
    scen.write_text(text, encoding="utf-8")
    said = f" (key {ENV_KEY})" if echo else ""
    with FakeServer() as fake:
        if multi_turn:
            fake.respond = by_turn([MT_CALL + said, "It is 23 degrees." + said])
        else:
            fake.respond = lambda body: (GOOD_CALL if "Paris" in str(body) else "A joke.") + said
        opts = ("--stream", stream, "--model-param", _param())
        assert run_fake(fake, tmp_path, scen, *opts, out="live") == 0
        live = trials_by_id(tmp_path / "live")
        assert all(t.status == "ok" for t in live.values()), live
        asked = len(fake.received)
        assert PARAM_SECRET in str(fake.received[0].body)  # the secret was sent
        assert run_fake(fake, tmp_path, scen, *opts, "--record", "none", out="replay") == 0
        assert len(fake.received) == asked
    replay = trials_by_id(tmp_path / "replay")
    for sid, trial in live.items():
        again = replay[sid]
        assert again.status == "ok", (sid, again.error_code, again.infra_error)
        assert again.scores == trial.scores
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert PARAM_SECRET.encode() not in data and ENV_KEY.encode() not in data, path


def test_the_request_key_is_the_key_of_the_redacted_request() -> None:
    """Record and replay compute one key for a request whatever secret value it holds
    (a registered secret redacted); a request without one is hashed as it is."""
    plain = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    register_secret(PARAM_SECRET)
    with_secret = {**plain, "extra_body": {"user_token": PARAM_SECRET}}
    as_recorded = {**plain, "extra_body": {"user_token": "<redacted>"}}
    assert request_key(with_secret) == request_key(as_recorded)
    assert request_key(with_secret) != request_key(plain)
    forget_registered_secrets()
    register_secret("sk-another-value-000011112222")
    other = {**plain, "extra_body": {"user_token": "sk-another-value-000011112222"}}
    assert request_key(other) == request_key(as_recorded)
