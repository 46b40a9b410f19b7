"""The hosts a cassette records in place of this machine's: placeholders and model paths.

The embedded local server gets a new port every run, so its address is recorded and
matched as the fixed placeholder ``local-model.toolbench``; the server of ``--api-base``
likewise as ``api-base.toolbench`` (a run recorded against ``localhost:8000`` replays
against ``localhost:8001``, or with no server at all). The registries here are filled by
the providers and the runner and read by the scrubber (:mod:`toolbench.cassettes.scrub`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

LOCAL_HOST = "local-model.toolbench"
LOCAL_BASE = f"http://{LOCAL_HOST}/v1"
"""Where replayed local-model requests go: the recorded placeholder, never a real port."""

API_HOST = "api-base.toolbench"
"""Where ``--api-base`` requests are recorded and matched: the server's host and port are
the machine's, not part of a request's identity."""

_local_netlocs: set[str] = set()
_api_netlocs: set[str] = set()


def register_local_netloc(netloc: str) -> None:
    """Tell the scrubber that ``host:port`` is the embedded server (rewritten on record)."""
    _local_netlocs.add(netloc)


_local_model_paths: dict[str, str] = {}


def register_local_model_path(path: str, alias: str) -> None:
    """Tell the scrubber that the embedded server reports ``path`` as its model.

    llama-server writes the GGUF's absolute path into every reply's ``model`` field: a
    fact of this machine (a venv, a home directory), not of the reply, so it is recorded
    as the model's alias, as the port is recorded as the placeholder host.
    """
    _local_model_paths[path] = alias


def normalise_local_model(text: str) -> str:
    """``text`` (a reply body or stream chunk) with registered GGUF paths as aliases."""
    for path, alias in _local_model_paths.items():
        encoded = json.dumps(path, ensure_ascii=False)[1:-1]  # as JSON writes it
        for form in (encoded, encoded.replace("/", "\\/")):  # slashes escaped or not
            if form in text:
                text = text.replace(form, alias)
    return text


def _netloc(url: str) -> str:
    """``host:port`` of ``url`` as httpx sends it (no userinfo, no default port)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if port is None or port == default else f"{host}:{port}"


def register_api_base(api_base: str | None) -> str | None:
    """Tell the scrubber that ``api_base``'s server is the run's ``--api-base`` (recorded
    and matched as :data:`API_HOST`); returns the placeholder base (None without one)."""
    if not api_base:
        return None
    _api_netlocs.add(_netloc(api_base))
    return cassette_api_base(api_base)


def cassette_api_base(api_base: str) -> str:
    """The api base as cassettes hold it: scheme ``http``, host :data:`API_HOST`, the rest
    kept (a query in the base changes the path the SDK builds from it)."""
    parts = urlsplit(api_base)
    return urlunsplit(("http", API_HOST, parts.path, parts.query, parts.fragment))


def placeholder(netloc: str) -> str | None:
    """The host ``netloc`` is recorded as: :data:`LOCAL_HOST` for the embedded server,
    :data:`API_HOST` for the ``--api-base`` server, None for any other (kept as sent)."""
    if netloc in _local_netlocs:
        return LOCAL_HOST
    if netloc in _api_netlocs:
        return API_HOST
    return None


def normalise_local_body(body: Any) -> Any:
    """A response body (bytes or text) with registered GGUF paths as aliases; the same
    object when it holds none."""
    if not body or not _local_model_paths:
        return body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    normal = normalise_local_model(text)
    if normal == text:
        return body
    return normal.encode("utf-8") if isinstance(body, bytes) else normal
