"""Integration: real xml-format replies scored against bundled scenarios.

The conversation is driven by the runner's own engine (:mod:`toolbench.engine`), with
hand-written model replies instead of a model.
"""

from __future__ import annotations

from toolbench import codes
from toolbench.engine import Conversation, TurnReply, effective_settings
from toolbench.formats import ModelReply, get_format
from toolbench.results import TrialScores
from toolbench.scenarios.loader import bundled_dir, load_scenarios
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

FMT = get_format("xml")
SUITE = {sc.id: sc for sc in load_scenarios([bundled_dir()])}


def converse(sc: Scenario, replies: list[str]) -> tuple[TrialScores, list[str]]:
    """Play the replies through the format; return the scores and the results fed back."""
    settings = effective_settings(sc)
    conv = Conversation(FMT, sc, settings)
    for i, text in enumerate(replies):
        request = conv.request()
        reply = ModelReply(text=text, finish_reason="stop")
        conv.feed(TurnReply(reply=reply, request={"messages": list(request.messages)}))
        if conv.done:
            assert i == len(replies) - 1, "the conversation stopped before the replies ran out"
    assert conv.done, "the replies ran out before the conversation ended"
    fed = [r for _, r in conv.fed]
    return score_trial(sc, FMT, conv.turns, settings), fed


def tc(name: str, args: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


def test_single_call_with_hard_strings() -> None:
    sc = SUITE["strings-quoted-note"]
    reply = tc("create_note", r'{"title": "Quote", "text": "He said \"hi\" {x}\nThen he left."}')
    s, _ = converse(sc, [reply])
    assert (s.get("parse"), s.get("call_accuracy"), s.get("args_schema_valid"), s.get("stop")) == (
        "strict",
        True,
        True,
        "clean",
    )
    assert s.errors == []


def test_parallel_any_order() -> None:
    sc = SUITE["parallel-weather"]
    reply = "\n".join(
        tc("get_weather", f'{{"city": "{c}"}}') for c in ("Oslo", "Berlin", "Madrid, Spain")
    )
    s, _ = converse(sc, [reply])
    assert s.get("call_accuracy") is True


def test_three_round_conversation_with_scripted_results() -> None:
    sc = SUITE["mt-price-in-euros"]
    replies = [
        tc("search_products", '{"query": "usb-c cable"}'),
        tc("get_product", '{"sku": "CBL-220"}'),
        tc("convert_currency", '{"amount": 12.4, "from_currency": "USD", "to_currency": "EUR"}'),
        "The cable costs 11.47 EUR.",
    ]
    s, fed = converse(sc, replies)
    assert '"CBL-220"' in fed[0] and '"price_usd": 12.4' in fed[1] and "11.47" in fed[2]
    assert (s.get("call_accuracy"), s.get("final_answer_ok"), s.get("stop_compliant")) == (
        True,
        True,
        True,
    )
    assert s.errors == []


def test_hallucinated_result_is_caught() -> None:
    sc = SUITE["weather-paris"]
    reply = tc("get_weather", '{"city": "Paris"}') + "\n<tool_response>\n{}\n</tool_response>"
    s, _ = converse(sc, [reply])
    assert s.get("call_accuracy") is True
    assert s.get("stop") == "hallucinated_result"
    assert codes.STOP_HALLUCINATED_RESULT in s.errors


def test_no_call_scenario_abstains() -> None:
    s, _ = converse(
        SUITE["irrelevant-joke"],
        ["Why did the cat sit on the laptop? To keep an eye on the mouse."],
    )
    assert (s.get("no_call_correct"), s.get("parse"), s.get("stop"), s.get("leak_raw")) == (
        True,
        "no_call",
        "no_call",
        False,
    )


def test_truncated_call_in_no_call_scenario_is_not_abstention() -> None:
    s, _ = converse(SUITE["irrelevant-joke"], ['<tool_call>\n{"name": "get_weather", "argu'])
    assert s.get("no_call_correct") is False
    assert codes.NO_CALL_DECODE_FAILURE in s.errors
