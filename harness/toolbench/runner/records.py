"""What ``run.json`` records of a run's inputs, and reading them back for resume and rescore.

A run names its scenario files with a SHA-256 of their bytes. ``run --resume`` and
``rescore`` read the scenarios from those files, and refuse (exit 2, naming the file) one
that is missing or changed since the run: a trial scored against another version of its
scenario would mix two experiments silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from toolbench.errors import ScenarioError, UserError
from toolbench.results import RunInfo, ScenarioFile
from toolbench.scenarios.loader import TOOLS_DIRNAME, load_file
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.yamlfile import read_text, read_yaml
from toolbench.store.shards import file_sha256


def scenario_files(scenarios: Sequence[Scenario]) -> list[ScenarioFile]:
    """The files ``scenarios`` came from (in first-use order), hashed now, then the tool
    sets they reference (``ids`` empty): a changed tool set changes the scenario too."""
    by_path: dict[str, ScenarioFile] = {}
    for sc in scenarios:
        if sc.source is None:
            continue  # built in code (tests): no file to record
        path = str(Path(sc.source).resolve())
        entry = by_path.get(path)
        if entry is None:
            try:
                digest = file_sha256(Path(path))
            except OSError:
                continue  # read a moment ago; gone now: nothing to vouch for
            entry = by_path[path] = ScenarioFile(path=path, sha256=digest)
        entry.ids.append(sc.id)
    tool_sets: dict[str, ScenarioFile] = {}
    for entry in list(by_path.values()):
        for ref in _tool_set_paths(Path(entry.path)):
            key = str(ref.resolve())
            if key not in by_path and key not in tool_sets:
                try:
                    tool_sets[key] = ScenarioFile(path=key, sha256=file_sha256(ref))
                except OSError:
                    continue
    return [*by_path.values(), *tool_sets.values()]


_REF_KEY = re.compile(r"""(?<![\w-])["']?ref["']?\s*:""")
"""Where a ``ref`` key may stand in a YAML text (block or flow, quoted or not): a file
without one references no tool set and is not parsed again (parsing ``bfcl-smoke``'s
file a second time was a large share of its whole replay)."""


def _tool_set_paths(path: Path) -> list[Path]:
    """The tool-set files a scenario file references (``tools: [{ref: NAME}]``)."""
    try:
        if not _REF_KEY.search(read_text(path)):
            return []
        data = read_yaml(path)
    except ScenarioError:
        return []
    if isinstance(data, dict) and set(data) == {"scenarios"}:
        data = data["scenarios"]
    items = data if isinstance(data, list) else [data]
    refs = {
        tool["ref"]
        for item in items
        if isinstance(item, dict) and isinstance(item.get("tools"), list)
        for tool in item["tools"]
        if isinstance(tool, dict) and isinstance(tool.get("ref"), str)
    }
    return [path.parent / TOOLS_DIRNAME / f"{ref}.yaml" for ref in sorted(refs)]


def recorded_scenarios(info: RunInfo, who: str) -> list[Scenario]:
    """The run's scenarios read from its recorded files, in the run's order.

    ``who`` starts the error line (``--resume``, ``rescore``). A file (scenario file or
    tool set) that is missing or changed (another hash) is refused.
    """
    for entry in info.scenario_files:  # every hash first: a tool set changes its scenarios
        path = Path(entry.path)
        kind = "scenario file" if entry.ids else "tool set"
        try:
            digest = file_sha256(path)
        except OSError as exc:
            why = "is missing" if isinstance(exc, FileNotFoundError) else "cannot be read"
            raise UserError(f"{who}: {kind} {path} {why} (the run read it)") from None
        if digest != entry.sha256:
            raise UserError(
                f"{who}: {kind} {path} changed since the run "
                f"(sha256 {digest[:12]}, the run read {entry.sha256[:12]})"
            )
    wanted = set(info.scenarios)
    found: dict[str, Scenario] = {}
    for entry in info.scenario_files:
        if not entry.ids:
            continue
        try:
            loaded = load_file(entry.path)
        except ScenarioError as exc:  # unreadable although unchanged (a limit changed)
            raise UserError(f"{who}: {exc}") from None
        for sc in loaded:
            if sc.id in wanted and sc.id in entry.ids:
                found.setdefault(sc.id, sc)
    missing = [s for s in info.scenarios if s not in found]
    if missing:
        raise UserError(
            f"{who}: scenario '{missing[0]}' of the run is in none of its recorded files"
        )
    return [found[s] for s in info.scenarios]
