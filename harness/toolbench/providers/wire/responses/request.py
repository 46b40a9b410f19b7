"""A request for the OpenAI Responses API (``native:api=responses``), shaped from the chat
request every format renders, and which providers take it.

The format renders the conversation as chat messages, as for every provider; the request
is built and its parameters filtered once (:mod:`toolbench.providers.turn_request`), then
shaped here for ``litellm.aresponses``, which hands it to the provider as it is (LiteLLM 1.106.2,
``llms/openai/responses/transformation.py``). Shapes from the OpenAI API reference
(https://platform.openai.com/docs/api-reference/responses/create, "Function calling" in
the guide):

- the leading system messages are the ``instructions``; every other message is an
  ``input`` item: a user message as it is (``{"role": "user", "content": ...}``), the
  model's own turn as the ``output`` items it returned, verbatim (its ``reasoning`` items
  with their ``encrypted_content``, its ``function_call`` items with ``id`` and
  ``call_id``: :data:`~toolbench.providers.wire.responses.reader.OUTPUT_ITEMS`), a tool's
  result as a ``function_call_output`` item naming the call's ``call_id``;
- tools are flat (``{"type": "function", "name", "description", "parameters",
  "strict"}``; ``strict`` is always sent, since the Responses API makes an unmarked
  function strict); a forced ``tool_choice`` is ``{"type": "function", "name"}``;
- the API takes neither ``seed`` nor ``stop``: they are dropped and recorded on the
  trial, like any parameter a provider does not take; ``reasoning_effort`` goes as
  ``reasoning.effort`` and ``max_tokens`` as ``max_output_tokens``.
"""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import boundary
from toolbench.errors import UserError
from toolbench.formats.base import RenderedRequest
from toolbench.providers.capabilities import provider_of
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.model_api import Endpoint, WireRequest
from toolbench.providers.wire.responses.reader import OUTPUT_ITEMS
from toolbench.results import RequestParams

API = "responses"
"""The value of ``native:api`` that sends this request."""
NOT_TAKEN = ("seed", "stop")
"""Parameters of the chat request the Responses API does not define."""
RENAMED = {"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens"}
CHAT_ONLY = ("messages", "stream_options")


def is_responses(request: dict[str, Any]) -> bool:
    """Whether ``request`` (the kind's arguments) is a Responses API request."""
    return "input" in request and "messages" not in request


def _content(content: Any) -> Any:
    """A chat message's content as a Responses input's (text parts are ``input_text``)."""
    if not isinstance(content, list):
        return content if content is not None else ""
    return [
        {**p, "type": "input_text"} if isinstance(p, dict) and p.get("type") == "text" else p
        for p in content
    ]


def _assistant(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's own turn: its output items as returned; a turn it did not return
    (a scripted or few-shot one) as the items it would have been."""
    items = msg.get(OUTPUT_ITEMS)
    if isinstance(items, list):
        return [dict(i) for i in items if isinstance(i, dict)]
    out: list[dict[str, Any]] = []
    content = msg.get("content")
    if isinstance(content, str) and content:
        out.append({"role": "assistant", "content": content})
    for tc in msg.get("tool_calls") or ():
        fn = tc.get("function") if isinstance(tc, dict) else None
        if isinstance(fn, dict):
            out.append(
                {
                    "type": "function_call",
                    "call_id": tc.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments") or "{}",
                }
            )
    return out


def input_items(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(instructions, input items)`` of a chat conversation."""
    lead: list[str] = []
    rest = list(messages)
    while rest and isinstance(rest[0], dict) and rest[0].get("role") in ("system", "developer"):
        content = rest.pop(0).get("content")
        lead.append(content if isinstance(content, str) else str(content))
    items: list[dict[str, Any]] = []
    for m in rest:
        role = m.get("role") if isinstance(m, dict) else None
        if role == "assistant":
            items += _assistant(m)
        elif role == "tool":
            output = m.get("content")
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": m.get("tool_call_id"),
                    "output": output if isinstance(output, str) else str(output),
                }
            )
        elif role is not None:
            items.append({"role": role, "content": _content(m.get("content"))})
    return ("\n\n".join(lead) if lead else None), items


def flat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A chat function tool as the Responses API's flat one (``strict`` always said)."""
    fn = tool.get("function")
    if tool.get("type") != "function" or not isinstance(fn, dict):
        return tool
    out: dict[str, Any] = {"type": "function", "name": fn.get("name")}
    if "description" in fn:
        out["description"] = fn["description"]
    out["parameters"] = fn.get("parameters") or {"type": "object", "properties": {}}
    out["strict"] = bool(fn.get("strict", False))
    return out


def tool_choice(choice: Any) -> Any:
    """A chat ``tool_choice`` as the Responses API's (a forced function is flat)."""
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def shape(request: dict[str, Any], record: RequestParams) -> dict[str, Any]:
    """The chat ``request`` (as :func:`~toolbench.providers.turn_request.build_request` made
    it) as a Responses API request; ``record`` notes what the API does not take."""
    instructions, items = input_items(list(request.get("messages") or []))
    out: dict[str, Any] = {"model": request["model"], "input": items}
    if instructions is not None:
        out["instructions"] = instructions
    for key, value in request.items():
        if key in ("model", *CHAT_ONLY):
            continue
        if key in NOT_TAKEN:
            record.sent = [p for p in record.sent if p != key]
            record.dropped[key] = f"the Responses API does not take {key}"
        elif key == "tools":
            out["tools"] = [flat_tool(t) if isinstance(t, dict) else t for t in value]
        elif key == "tool_choice":
            out["tool_choice"] = tool_choice(value)
        elif key == "reasoning_effort":
            out["reasoning"] = {**(out.get("reasoning") or {}), "effort": value}
        else:
            out[RENAMED.get(key, key)] = value
    return out


def preview(rendered: RenderedRequest) -> dict[str, Any]:
    """What a format's rendered turn is sent as to the Responses API, before the model and
    the sampling parameters are added (``toolbench formats show``)."""
    chat: dict[str, Any] = {"model": "", "messages": list(rendered.messages)}
    if rendered.tools:
        chat["tools"] = rendered.tools
        if rendered.tool_choice is not None:
            chat["tool_choice"] = rendered.tool_choice
    chat.update(rendered.params)
    out = shape(chat, RequestParams())
    del out["model"]
    return out


def refusal(model: str, api_base: str | None, kind: str) -> str | None:
    """Why ``model`` cannot be sent Responses API requests (None: it can): a model
    another kind serves (``local/``: toolbench's own llama-server speaks chat completions
    only), or a provider for which LiteLLM has no Responses API of its own (LiteLLM would
    translate the request to chat completions: not the API asked for). LiteLLM 1.106.2
    has one for ``openai``, ``azure``, ``azure_ai`` (some models), ``xai``, ``sail``,
    ``github_copilot`` and the JSON-configured providers that declare it
    (``ProviderConfigManager.get_provider_responses_api_config``)."""
    if kind != "litellm":
        return f"served by toolbench's '{kind}' kind, which speaks chat completions only"
    try:
        _name, provider = provider_of(model, api_base)
    except UserError:
        return None  # the unknown provider is refused by its own check
    litellm()  # its switches set before anything of LiteLLM's is imported
    from litellm.utils import ProviderConfigManager  # deferred for start-up, as LiteLLM

    try:
        config = ProviderConfigManager.get_provider_responses_api_config(
            provider=provider, model=model, api_base=api_base
        )
    except Exception:
        config = None
    if config is None:
        return f"LiteLLM has no Responses API for provider '{provider}'"
    return None


def wire_request(endpoint: Endpoint, request: dict[str, Any]) -> WireRequest | None:
    """The HTTP request LiteLLM sends for the Responses API ``request`` (its replay's
    match in an older cassette): its OpenAI transformation passes the request on as it is
    but for the model's name, without ``stream_options``; only OpenAI's wire is predicted
    (None for another provider: a wrong prediction would match nothing)."""
    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
    except UserError:
        return None
    if provider not in boundary.WIRE_PROVIDERS:
        return None
    base = (endpoint.api_base or boundary.OPENAI_BASE).rstrip("/")
    body = {k: v for k, v in request.items() if k != "stream_options"}
    return WireRequest("POST", f"{base}/responses", {**body, "model": name})
