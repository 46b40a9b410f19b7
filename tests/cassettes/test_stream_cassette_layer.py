"""The one trial cassette lives in the cassette layer and, like the rest of it, imports
only the ground and the cassette package (tests/cassettes/test_layer.py scans the
package); this checks the scan covers it, that the old ``streaming`` package is gone,
and that no module of the layer imports vcrpy (it serves only ``cassettes migrate``'s
reading of old YAML files, and that reads YAML without it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import toolbench.cassettes.trial as trial
from tests.cassettes.test_layer import PACKAGE, _toolbench_imports


def test_the_trial_cassette_is_scanned_with_the_cassette_layer() -> None:
    found = _toolbench_imports(PACKAGE)
    assert ("exchanges.py", "toolbench.cassettes.recording") in found
    assert any(f == "trial.py" and n.startswith("toolbench.cassettes.exchanges") for f, n in found)
    assert trial.__name__.startswith("toolbench.cassettes.")


def test_the_streaming_package_and_the_two_cassettes_are_gone() -> None:
    assert importlib.util.find_spec("toolbench.streaming") is None
    for gone in ("cassette", "stream_cassette", "replay_only", "vcr_replay", "serializer"):
        assert importlib.util.find_spec(f"toolbench.cassettes.{gone}") is None


def test_no_cassette_module_imports_vcrpy() -> None:
    root = importlib.util.find_spec("toolbench.cassettes")
    assert root is not None and root.submodule_search_locations is not None
    folder = Path(next(iter(root.submodule_search_locations)))
    for module in folder.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert "import vcr" not in text and "from vcr" not in text, module.name
