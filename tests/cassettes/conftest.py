"""Fixtures for cassette tests: the runner tests' fake OpenAI-compatible server, tiny
scenario file and fast retries (some cassettes are recorded by a whole run)."""

from tests.runner.conftest import _fast_backoff, fake, openai_key, scenario_file

__all__ = ["_fast_backoff", "fake", "openai_key", "scenario_file"]
