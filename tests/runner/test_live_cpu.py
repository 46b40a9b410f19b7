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
from toolbench.cassettes import plain_record, router, use_cassette
from toolbench.cassettes.scrub import RequestParts
from toolbench.providers import litellm_api


@pytest.mark.parametrize("record", ["all", "new"])
def test_a_recorded_request_is_scrubbed_once(
    record: cassettes.RecordOption, fake: FakeOpenAI, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    real = cassettes.scrub_request
    seen: list[Any] = []

    def counted(request: Any, values: list[str] | None = None) -> Any:
        seen.append(request)
        return real(request, values)

    monkeypatch.setattr(plain_record, "scrub_request", counted)
    cas = tmp_path / "c.json"
    with router(), use_cassette(cas, record), httpx.Client() as client:
        client.post(fake.base_url + "/chat/completions", json={"a": 1},
                    headers={"Authorization": "Bearer sk-live-0123456789abcdef"})  # fmt: skip
    # Matched as sent (nothing recorded answers it), then recorded: one scrub.
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

    headers = {"Host": "127.0.0.1:5000", "Authorization": "Bearer sk-live-0123456789abcdef",
               "Content-Type": "application/json", "X-Stainless-Lang": "python"}  # fmt: skip
    body = b'{"messages": [{"role": "user", "content": "key sk-live-0123456789abcdef"}]}'
    original = RequestParts("POST", "http://u:p@127.0.0.1:5000/v1/chat/completions", body, headers)
    expected = cassettes.scrub_request(copy.deepcopy(original), ["sk-live-0123456789abcdef"])

    def no_deepcopy(*_: Any, **__: Any) -> Any:
        raise AssertionError("deepcopy of a request: the shallow copy serves")

    monkeypatch.setattr(copy, "deepcopy", no_deepcopy)
    out = cassettes.scrub_request(original, ["sk-live-0123456789abcdef"])
    assert (out.uri, out.body) == (expected.uri, expected.body)
    assert list(out.headers.items()) == list(expected.headers.items())
    assert "authorization" not in {k.lower() for k in out.headers}
    assert b"sk-live" not in out.body
    # The original, which the transport goes on sending, is untouched.
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


def test_scrubbing_copies_a_response_without_deepcopy_and_leaves_the_original(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import copy

    key = "sk-live-0123456789abcdef"
    body = json.dumps({"echo": f"key {key}", "esc": "a\nb"}).encode()
    original = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Content-Type": ["application/json"], "Set-Cookie": ["s=1"],
                    "X-Echo": [f"Bearer {key}"]},
        "body": {"string": body},
    }  # fmt: skip
    snapshot = copy.deepcopy(original)

    def no_deepcopy(*_: Any, **__: Any) -> Any:
        raise AssertionError("deepcopy of a response: copying its headers and body serves")

    monkeypatch.setattr(copy, "deepcopy", no_deepcopy)
    out = cassettes.scrub_response(original, [key])
    assert out is not None
    assert original == snapshot  # what the client goes on reading is untouched
    assert out["status"] == snapshot["status"]
    assert out["headers"] == {"Content-Type": ["application/json"], "X-Echo": ["Bearer <redacted>"]}
    assert json.loads(out["body"]["string"]) == {"echo": "key <redacted>", "esc": "a\nb"}


SECRETS = [
    "sk-live-0123456789abcdef",
    'quo"te-secret-77',
    "back\\slash-secret",
    "sl/ash/secret-9",
    "ünï-cødé-sëcret",
    "md_under*star|bar",
    "tab\tsecret-value",
    "<html&secret>'x'",
]


def _spellings(secret: str) -> list[str]:
    """JSON texts holding ``secret`` in a decoded string, spelled every way a writer may."""
    doc = {"messages": [{"content": f"say {secret} now\n"}], f"k{secret}": [1, None]}
    compact = json.dumps(doc, ensure_ascii=False)
    spelled = json.dumps(secret, ensure_ascii=False)[1:-1]
    first = f"\\u{ord(secret[0]):04x}" + json.dumps(secret[1:], ensure_ascii=False)[1:-1]
    return [
        compact,
        json.dumps(doc),  # \u escapes for every non-ASCII character
        compact.replace("/", "\\/"),
        compact.replace(spelled, first),  # its first character \u-escaped
    ]


@pytest.mark.parametrize("secret", SECRETS)
def test_a_json_text_said_to_hold_no_secret_decodes_to_none(secret: str) -> None:
    """:func:`json_may_hold` answers False only where the decoded strings hold no form
    of any secret: the scrub then keeps the text without decoding it."""
    from toolbench.redaction import json_may_hold, redact_data

    for text in _spellings(secret):
        assert json_may_hold(text, [secret])  # every spelling of it is seen
        data = json.loads(text)
        assert redact_data(data, [secret]) != data
    others = [s for s in SECRETS if s != secret]
    for text in _spellings(secret):
        data = json.loads(text)
        if not json_may_hold(text, others):
            assert redact_data(data, others) is data
    said = 'no key here: "quoted", a\\b, tab\t, line\n'
    plain = json.dumps({"content": said}, ensure_ascii=False)
    assert not json_may_hold(plain, SECRETS)  # short escapes, no secret: not decoded
    assert json_may_hold(plain.replace("no", "\\u006eo"), SECRETS)


@pytest.mark.parametrize("secret", SECRETS)
def test_the_scrubbed_body_equals_the_full_decode(secret: str) -> None:
    from toolbench.cassettes.scrub import _scrub_body
    from toolbench.redaction import redact, redact_data

    for text in [*_spellings(secret), json.dumps({"a": "b\nc"})]:
        full = redact(json.dumps(redact_data(json.loads(text), [secret]), ensure_ascii=False),
                      [secret])  # fmt: skip
        out = _scrub_body(text.encode(), [secret])
        assert json.loads(out) == json.loads(full)
        assert secret not in out.decode()


def test_a_cassette_is_written_whole_with_its_mode_and_no_temporary_left(
    tmp_path: Path,
) -> None:
    import os
    import stat

    from toolbench.cassettes import persist

    path = tmp_path / "deep" / "c.json"
    # A temporary file a killed process with this id left is stepped over, not reused.
    path.parent.mkdir()
    serial = next(persist._temp_serial) + 1
    stale = path.parent / f".c.json.{os.getpid()}-{serial}.tmp"
    stale.write_text("torn")
    old = os.umask(0o077)
    try:
        persist.write_atomically(path, '{"x": "ü"}', 0o644)
        persist.write_atomically(path, '{"x": "é"}', 0o640)
    finally:
        os.umask(old)
    assert path.read_text(encoding="utf-8") == '{"x": "é"}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(["c.json", stale.name])
    assert stale.read_text() == "torn"
    fresh = tmp_path / "new" / "sub" / "d.json"  # a folder made when missing
    persist.write_atomically(fresh, "{}", 0o666 & ~persist._UMASK)
    assert fresh.read_text() == "{}"


@pytest.mark.parametrize("where", ["e.json", "rel/e.json"])
def test_a_cassette_at_a_relative_path_is_written_beside_it(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbench.cassettes import persist

    monkeypatch.chdir(tmp_path)
    persist.write_atomically(Path(where), "{}", 0o644)
    assert (tmp_path / where).read_text() == "{}"
    assert [p.name for p in (tmp_path / where).parent.iterdir()] == ["e.json"]


def test_the_results_file_stays_open_for_a_run_and_each_line_is_written_whole(
    tmp_path: Path,
) -> None:
    from toolbench.results import TrialResult
    from toolbench.store import ResultsAppender, append_result, iter_results

    path = tmp_path / "results.jsonl"

    def trial(sample: int) -> TrialResult:
        return TrialResult(run_id="r", toolbench_version="0", model="m", format="f",
                           scenario_id="s", sample=sample, started_at="t", cassette="c",
                           status="ok")  # fmt: skip

    append_result(path, trial(0))
    with ResultsAppender(path) as out:
        out.append(trial(1))
        # On disk as soon as it is appended: a kill now loses no finished trial.
        assert [r.sample for r in iter_results(path)] == [0, 1]
        out.append(trial(2))
    assert [r.sample for r in iter_results(path)] == [0, 1, 2]


@pytest.mark.parametrize("record", ["all", "new"])
def test_the_replay_hook_is_asked_only_where_a_recording_may_answer(
    record: cassettes.RecordOption, fake: FakeOpenAI, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """--record all never replays, and an empty cassette holds nothing: the shared call
    then skips the replay hook (a request key and a predicted HTTP request a turn), and
    what the hook would have reset is reset all the same."""
    cas = tmp_path / "c.json"
    with router(), use_cassette(cas, record) as tc, httpx.Client() as client:
        assert tc.may_replay() is False  # nothing recorded yet (new) / never (all)
        client.post(fake.base_url + "/chat/completions", json={"a": 1})
        tc.remember_key("sha256:k")
        tc.last_fault, tc.last_replayed = "stale", True
        # What this trial recorded: --record new may answer it again, --record all never.
        assert tc.may_replay() is (record == "new")
        assert (tc.last_fault, tc.last_replayed, tc._recorded) == (None, False, None)
        assert (tc.replay_reply("sha256:k", None) is None) is (record == "all")
    with router(), use_cassette(cas, record) as tc:
        # Reopened: --record new may replay what the file holds; --record all may not.
        assert tc.may_replay() is (record == "new")
        assert (tc.replay_reply("sha256:k", None) is not None) is (record == "new")
