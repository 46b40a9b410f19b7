from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.environments.mcp_support import fake, openai_key  # noqa: F401 - the MCP tests' fixtures
from tests.environments.toy import FAULTY, PICKY, RELEASE
from toolbench.environments import register_environment, unregister_environment


@pytest.fixture(autouse=True)
def toy_environments() -> Iterator[None]:
    register_environment(FAULTY, replace=True)
    register_environment(PICKY, replace=True)
    RELEASE.clear()
    yield
    RELEASE.set()
    unregister_environment("faulty")
    unregister_environment("picky")
