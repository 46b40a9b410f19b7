"""Every test here leaves the metric registry as it found it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolbench.metrics import metric_registry as registry


@pytest.fixture(autouse=True)
def restore_registry() -> Iterator[None]:
    registry.load_metrics()
    saved = dict(registry._REGISTRY)
    loaded = registry.METRICS._loaded
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
    registry.METRICS._loaded = loaded
    registry.changed()
