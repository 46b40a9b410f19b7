"""Whether a 400 or 422 to a request with tools refuses the tools themselves.

Only such a refusal makes the trial ``unsupported`` (the provider cannot do what the
format needs); any other 4xx is the provider's typed error (``infra.client_error``), so a
malformed request, a bad message or a quota is never counted as "this model takes no
tools". A body refuses the tools when:

- its structured fields name a tool parameter (``tools``, ``tool_choice``,
  ``functions``, ``function_call``): OpenAI's ``error.param``, a validation error's
  location (FastAPI and pydantic servers, Mistral: ``detail[].loc`` through
  ``body.tools``); whatever the model;
- or, when its structured fields name no parameter at all, for a model LiteLLM's table
  does not list as calling functions (``supports_function_calling``; a local server, an
  unknown deployment), its error message says the tools are not taken: a tool word
  (:data:`TOOL_WORDS`) and a refusal (:data:`REFUSAL_WORDS`) in the server's own text,
  as Ollama ("... does not support tools"), vLLM ("auto tool choice requires --enable-
  auto-tool-choice"), llama.cpp ("tools param requires --jinja") send it. For a model
  the table says calls functions, words alone decide nothing (LiteLLM rewords messages;
  a gateway's prose is no refusal).

The server's body is the exception's ``body`` (the OpenAI SDK's), else the first JSON
object in its message (where LiteLLM's other handlers put the body). Linear in the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_PARAMS = ("tools", "tool_choice", "functions", "function_call")
TOOL_WORDS = re.compile(
    r"\b(?:tools?|tool[ _-]?(?:choice|calls?|calling|use)|function[ _-]?call(?:s|ing)?"
    r"|functions)\b",
    re.IGNORECASE,
)
REFUSAL_WORDS = re.compile(
    r"\b(?:not supported|unsupported|(?:does|do|is) not support|doesn't support|"
    r"not enabled|requires|not available|cannot use|can't use)\b",
    re.IGNORECASE,
)
JSON_TRIES = 8
"""How many ``{`` of an exception's message are tried as the start of the body."""


def body_of(exc: BaseException) -> Any:
    """The server's error body behind ``exc`` (a dict, or the text when none is found)."""
    body = getattr(exc, "body", None)
    if body is not None:
        return body
    text = str(getattr(exc, "message", None) or exc)[:20_000]
    decoder = json.JSONDecoder()
    at = text.find("{")
    for _ in range(JSON_TRIES):
        if at < 0:
            break
        try:
            value, _end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        return value
    return text


def _error(body: Any) -> Any:
    inner = body.get("error") if isinstance(body, dict) else None
    return inner if inner is not None else body


def named(body: Any, param: str | None = None) -> list[str]:
    """The request parameters the body's structured fields name (``error.param``,
    ``detail[].loc`` under ``body``)."""
    names = [param] if isinstance(param, str) and param else []
    error = _error(body)
    if isinstance(error, dict) and isinstance(error.get("param"), str) and error["param"]:
        names.append(error["param"])
    detail = body.get("detail") if isinstance(body, dict) else None
    for item in detail if isinstance(detail, list) else ():
        loc = item.get("loc") if isinstance(item, dict) else None
        if isinstance(loc, list) and loc:
            top = loc[1] if loc[0] == "body" and len(loc) > 1 else loc[0]
            names.append(str(top))
    return names


def says_no_tools(body: Any) -> bool:
    """The body's error message says the tools are not taken (see the module docstring)."""
    error = _error(body)
    if isinstance(error, dict):
        text = str(error.get("message") or error.get("msg") or error.get("detail") or "")
    else:
        text = str(error)
    text = text[:2000]
    return bool(TOOL_WORDS.search(text) and REFUSAL_WORDS.search(text))


def refuses_tools(exc: BaseException, param: str | None, knows_tools: bool | None) -> bool:
    """Whether the 4xx ``exc`` refuses the tools themselves. ``knows_tools``: LiteLLM's
    table lists the model as calling functions (None: it does not know the model)."""
    body = body_of(exc)
    names = named(body, param)
    if any(name in TOOL_PARAMS for name in names):
        return True
    # A body that names another parameter refuses that one, whatever its words say.
    return not names and knows_tools is not True and says_no_tools(body)
