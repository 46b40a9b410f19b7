"""One local Ray instance (two CPUs, this machine) for the Ray executor's tests: starting
one is most of a short run's time. The executor uses the instance it finds and leaves it
running; the workers take the environment the instance starts with."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

KEY = "test-key-not-secret-0000"


@pytest.fixture(scope="package")
def cluster() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", KEY)  # before the instance starts: its workers' env
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR,
                 log_to_driver=False)  # fmt: skip
        try:
            yield
        finally:
            ray.shutdown()
