"""Tools the provider runs itself: shown on the trial, never scored as the model's calls.

Anthropic's server tools (web search, web fetch, code execution, tool search) come back
as ``server_tool_use`` blocks, each followed by its ``*_tool_result``
(https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool,
.../code-execution-tool, .../tool-search-tool). LiteLLM 1.106 turns a
``server_tool_use`` block into an ordinary tool call (its id ``srvtoolu_...``) and keeps
the results in the message's ``provider_specific_fields`` (``web_search_results``,
``tool_results``), from which it rebuilds both blocks when the message is echoed. So the
message keeps them as they came (the next turn must echo them), and the reply's calls,
which formats parse and scorers judge, are only the client tools the model asked the
caller to run: a call is the provider's own when its id has Anthropic's server-tool
prefix, or a provider-run result names it (``tool_use_id``).
"""

from __future__ import annotations

from typing import Any

SERVER_ID_PREFIXES = ("srvtoolu_",)
"""Anthropic's ids of ``server_tool_use`` blocks (the prefix LiteLLM's echo rebuilds
them by)."""
RESULT_KEYS = ("web_search_results", "tool_results")
"""The message's ``provider_specific_fields`` that hold the results of provider-run tools."""


def executed_ids(message: dict[str, Any]) -> set[str]:
    """The ids of the message's calls the provider ran itself."""
    ids: set[str] = set()
    for tc in message.get("tool_calls") or []:
        cid = tc.get("id") if isinstance(tc, dict) else None
        if isinstance(cid, str) and cid.startswith(SERVER_ID_PREFIXES):
            ids.add(cid)
    extras = message.get("provider_specific_fields")
    if isinstance(extras, dict):
        for key in RESULT_KEYS:
            results = extras.get(key)
            for result in results if isinstance(results, list) else ():
                named = result.get("tool_use_id") if isinstance(result, dict) else None
                if isinstance(named, str):
                    ids.add(named)
    return ids


def client_calls(calls: list[dict[str, Any]], message: dict[str, Any]) -> list[dict[str, Any]]:
    """``calls`` without the ones the provider ran itself (all of them when it ran none)."""
    executed = executed_ids(message)
    if not executed:
        return calls
    return [tc for tc in calls if tc.get("id") not in executed]
