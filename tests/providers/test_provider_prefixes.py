"""The checked-in table of LiteLLM's provider prefixes (:mod:`toolbench.providers.
provider_prefixes`, what a replay's preflight reads instead of importing LiteLLM) is the
installed LiteLLM's: an upgrade that changes LiteLLM's lists fails here until the table is
written again (``python -m toolbench.providers.provider_prefixes --write``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.providers import provider_prefixes
from toolbench.providers.capabilities import UnknownProviderError, check_provider


def test_the_table_is_the_installed_litellms() -> None:
    assert provider_prefixes.installed() == (
        provider_prefixes.PROVIDER_LIST,
        provider_prefixes.JSON_PROVIDERS,
    )


def test_writing_the_table_again_changes_nothing(tmp_path: Path) -> None:
    src = Path(provider_prefixes.__file__)
    copy = tmp_path / "provider_prefixes.py"
    copy.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    provider_prefixes.write(copy)
    assert copy.read_text(encoding="utf-8") == src.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("model", "known"),
    [
        ("anthropic/claude-3-5-haiku-latest", True),
        ("openrouter/openai/gpt-4o-mini", True),
        ("veniceai/llama", True),  # a JSON-configured provider
        ("anthropic/", False),  # no model name: LiteLLM decides
        ("antropic/claude", False),
        ("gpt-4o", False),  # no prefix: only LiteLLM's tables resolve it
    ],
)
def test_a_known_prefix_is_known_without_litellm(model: str, known: bool) -> None:
    assert provider_prefixes.known_prefix(model) is known


def test_an_unknown_prefix_is_still_refused_with_a_did_you_mean() -> None:
    with pytest.raises(UnknownProviderError, match="Did you mean 'anthropic/claude'"):
        check_provider("antropic/claude")
    check_provider("gpt-4o")  # resolved by LiteLLM's tables
