"""The streamed half of a trial's cassette lives in the cassette layer and, like the rest
of it, imports only the ground and the cassette package (tests/cassettes/test_layer.py
scans the package); this checks the scan covers it and that the old ``streaming``
package is gone."""

from __future__ import annotations

import importlib.util

import toolbench.cassettes.stream_cassette as stream_cassette
from tests.cassettes.test_layer import PACKAGE, _toolbench_imports


def test_the_stream_cassette_is_scanned_with_the_cassette_layer() -> None:
    found = _toolbench_imports(PACKAGE)
    assert ("stream_cassette.py", "toolbench.cassettes.recording") in found
    assert stream_cassette.__name__.startswith("toolbench.cassettes.")


def test_the_streaming_package_is_gone() -> None:
    assert importlib.util.find_spec("toolbench.streaming") is None
