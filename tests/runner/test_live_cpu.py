"""Work the live path no longer repeats (benchmarks/bench_concurrency.py): each cut
keeps every recorded byte and result the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.fake_openai import FakeOpenAI
from toolbench import cassettes
from toolbench.cassettes import router, use_cassette
from toolbench.providers import litellm_api


@pytest.mark.parametrize("record", ["all", "new"])
def test_a_recorded_request_is_scrubbed_once_for_vcrpy_s_three_asks(
    record: cassettes.RecordOption, fake: FakeOpenAI, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    real = cassettes.scrub_request
    seen: list[Any] = []

    def counted(request: Any, values: list[str] | None = None) -> Any:
        seen.append(request)
        return real(request, values)

    monkeypatch.setattr(cassettes.use, "scrub_request", counted)
    cas = tmp_path / "c.json"
    with router(), use_cassette(cas, record), httpx.Client() as client:
        client.post(fake.base_url + "/chat/completions", json={"a": 1},
                    headers={"Authorization": "Bearer sk-live-0123456789abcdef"})  # fmt: skip
    # vcrpy asks three times (can it play? is it stored? record it), the last with the
    # scrubbed copy the first ask returned: one scrub, not three.
    assert len(seen) == 1
    recorded = json.loads(cas.read_text())["exchanges"][0]["request"]
    assert recorded["body"] == {"a": 1}
    assert "authorization" not in {k.lower() for k in recorded["headers"]}


class _Resp:
    def __init__(self, model: str = "no-price-model-x", cost: float | None = None) -> None:
        self.model = model
        self._hidden_params: dict[str, Any] = {} if cost is None else {"response_cost": cost}


def test_a_model_without_a_price_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    lm = litellm_api.litellm()
    calls: list[Any] = []

    def no_price(**kwargs: Any) -> float:
        calls.append(kwargs)
        raise ValueError("This model isn't mapped yet")

    monkeypatch.setattr(lm, "completion_cost", no_price)
    monkeypatch.setattr(litellm_api, "_UNPRICED", set())
    assert [litellm_api._priced_cost(_Resp(), lm) for _ in range(3)] == [None] * 3
    assert len(calls) == 1
    # A priced response is not remembered as unpriced: its cost comes back each time.
    priced = _Resp("priced", 0.25)
    assert [litellm_api._priced_cost(priced, lm) for _ in range(2)] == [0.25, 0.25]


def test_scrubbing_copies_a_request_without_deepcopy_and_leaves_the_original(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import copy

    from vcr.request import Request as VcrRequest

    headers = {"Host": "127.0.0.1:5000", "Authorization": "Bearer sk-live-0123456789abcdef",
               "Content-Type": "application/json", "X-Stainless-Lang": "python"}  # fmt: skip
    body = b'{"messages": [{"role": "user", "content": "key sk-live-0123456789abcdef"}]}'
    original = VcrRequest("POST", "http://u:p@127.0.0.1:5000/v1/chat/completions", body, headers)
    expected = cassettes.scrub_request(copy.deepcopy(original), ["sk-live-0123456789abcdef"])

    def no_deepcopy(*_: Any, **__: Any) -> Any:
        raise AssertionError("deepcopy of a request: the shallow copy serves")

    monkeypatch.setattr(copy, "deepcopy", no_deepcopy)
    out = cassettes.scrub_request(original, ["sk-live-0123456789abcdef"])
    assert (out.method, out.uri, out.body) == (expected.method, expected.uri, expected.body)
    assert list(out.headers.items()) == list(expected.headers.items())
    assert "authorization" not in {k.lower() for k in out.headers}
    assert b"sk-live" not in out.body
    # The original, which vcrpy goes on using, is untouched.
    assert original.headers["Authorization"] == "Bearer sk-live-0123456789abcdef"
    assert original.uri == "http://u:p@127.0.0.1:5000/v1/chat/completions"
    assert original.body == body


def test_warm_imports_what_the_first_call_would_and_skips_a_missing_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setattr(litellm_api, "FIRST_CALL_MODULES", ("jiter", "no_such_module_toolbench"))
    litellm_api.warm()
    assert "litellm" in sys.modules and "jiter" in sys.modules
    assert "no_such_module_toolbench" not in sys.modules
