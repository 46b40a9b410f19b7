"""The live tests' shared guard: skip a module, with the reason printed, where no
llama-server is installed (CI installs ``toolbench[local]``, so they run there)."""

from __future__ import annotations

import pytest

from toolbench.providers.local_server import server_available


def require_llama_server(what: str) -> None:
    """Skip the calling test module unless llama-server is installed."""
    if not server_available():  # pragma: no cover - depends on the install
        pytest.skip(
            f"llama-server is not installed (pip install 'toolbench[local]'); {what} skipped",
            allow_module_level=True,
        )
