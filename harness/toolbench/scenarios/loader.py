"""Loading scenario files: YAML (safe loading only), tool references, clear errors.

Every error names the file and the field path, e.g.
``scenarios/weather.yaml: scenarios[2].expect.calls[0].name: field required``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolbench.errors import ScenarioError, UnknownNameError
from toolbench.scenarios.model import ID_PATTERN, Scenario, ToolRef
from toolbench.scenarios.toolschema import schema_problem
from toolbench.scenarios.yamlfile import read_yaml
from toolbench.tools import ToolDef

TOOLS_DIRNAME = "tools"


BUNDLED_DIRNAME = "_bundled_scenarios"
"""The package-data folder of the installed suite: a link to the repository's
``scenarios/`` in a checkout, a real folder in a built wheel (see pyproject.toml)."""


def bundled_dir() -> Path:
    """Where the bundled suite lives: ``$TOOLBENCH_SCENARIOS``, ``./scenarios``, or the package's.

    The package's copy is what a plain ``pip install`` has; a source checkout reaches the
    repository's ``scenarios/`` through the same path (a symbolic link).
    """
    env = os.environ.get("TOOLBENCH_SCENARIOS")
    if env:
        return Path(env)
    here = Path("scenarios")
    if here.is_dir() and any(here.glob("*.yaml")):
        return here
    packaged = Path(__file__).resolve().parents[1] / BUNDLED_DIRNAME
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "scenarios"


def _loc(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _msg(msg: str) -> str:
    msg = msg.removeprefix("Value error, ")
    if msg == "Extra inputs are not permitted":
        return "unknown key"
    return msg[:1].lower() + msg[1:] if msg else msg


def _normalise_tool(raw: Any) -> Any:
    """Accept OpenAI's ``{type: function, function: {...}}`` or the flat shape."""
    if isinstance(raw, dict) and raw.get("type") == "function" and "function" in raw:
        extra = set(raw) - {"type", "function"}
        if extra:
            return raw  # let validation name the unknown key
        return raw["function"]
    if isinstance(raw, dict) and isinstance(raw.get("parameters"), dict):
        params = dict(raw["parameters"])
        if params.get("type") == "dict":  # BFCL spelling of the object root
            params["type"] = "object"
        return {**raw, "parameters": params}
    return raw


def _check_schema(where: str, raw: Any) -> None:
    """Refuse a tool whose ``parameters`` would crash or mis-score a run (see toolschema)."""
    if isinstance(raw, dict) and "parameters" in raw:
        problem = schema_problem(raw["parameters"])
        if problem is not None:
            raise ScenarioError(f"{where}.parameters: {problem}")


def load_tool_set(path: Path) -> list[ToolDef]:
    """The tool definitions of a shared tool set (``tools/<name>.yaml``).

    Read once per file version: many scenarios reference the same set, and decoding its
    YAML again for each was a large share of a replayed run's CPU."""
    st = path.stat()
    return list(_tool_set(str(path), st.st_mtime_ns, st.st_size))


@lru_cache(maxsize=256)
def _tool_set(name: str, _mtime_ns: int, _size: int) -> tuple[ToolDef, ...]:
    path = Path(name)
    data = read_yaml(path)
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise ScenarioError(f"{path}: tools: expected a list of tool definitions")
    out = []
    for i, raw in enumerate(data):
        _check_schema(f"{path}: tools[{i}]", _normalise_tool(raw))
        try:
            out.append(ToolDef.model_validate(_normalise_tool(raw)))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ScenarioError(
                f"{path}: tools[{i}].{_loc(err['loc'])}: {_msg(err['msg'])}".replace(".:", ":")
            ) from None
    return tuple(out)


def _resolve_tools(raw_tools: Any, file: Path, prefix: str) -> Any:
    if not isinstance(raw_tools, list):
        return raw_tools
    resolved: list[Any] = []
    for i, raw in enumerate(raw_tools):
        if isinstance(raw, dict) and "ref" in raw:
            try:
                ref = ToolRef.model_validate(raw)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ScenarioError(
                    f"{file}: {prefix}tools[{i}].{_loc(err['loc'])}: {_msg(err['msg'])}"
                ) from None
            tools_dir = file.parent / TOOLS_DIRNAME
            set_path = tools_dir / f"{ref.ref}.yaml"
            if not set_path.resolve().is_relative_to(tools_dir.resolve()):
                raise ScenarioError(
                    f"{file}: {prefix}tools[{i}].ref: '{ref.ref}' must name a tool set "
                    f"inside {tools_dir}"
                )
            if not set_path.exists():
                raise ScenarioError(
                    f"{file}: {prefix}tools[{i}].ref: no tool set '{ref.ref}' ({set_path})"
                )
            tools = load_tool_set(set_path)
            if ref.only is not None:
                names = {t.name for t in tools}
                for n in ref.only:
                    if n not in names:
                        raise ScenarioError(
                            f"{file}: {prefix}tools[{i}].only: "
                            + str(UnknownNameError("tool", n, names))
                        )
                tools = [t for t in tools if t.name in ref.only]
            resolved.extend(t.model_dump() for t in tools)
        else:
            _check_schema(f"{file}: {prefix}tools[{i}]", _normalise_tool(raw))
            resolved.append(_normalise_tool(raw))
    return resolved


def load_file(path: str | Path) -> list[Scenario]:
    """Load every scenario in one file (a mapping, a list, or ``{scenarios: [...]}``)."""
    file = Path(path)
    data = read_yaml(file)
    many = False
    if isinstance(data, dict) and set(data) == {"scenarios"}:
        data, many = data["scenarios"], True
    elif isinstance(data, list):
        many = True
    if many and not isinstance(data, list):
        raise ScenarioError(f"{file}: scenarios: expected a list")
    if many and not data:
        # It validated as "ok: 0 scenarios": a file that tests nothing is a mistake.
        raise ScenarioError(f"{file}: scenarios: an empty list (a file holds at least one)")
    items = data if many else [data]
    out: list[Scenario] = []
    for i, raw in enumerate(items):
        prefix = f"scenarios[{i}]." if many else ""
        if not isinstance(raw, dict):
            raise ScenarioError(f"{file}: {prefix.rstrip('.') or 'scenario'}: expected a mapping")
        raw = {**raw, "tools": _resolve_tools(raw.get("tools", []), file, prefix)}
        try:
            sc = Scenario.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = _loc(err["loc"])
            where = f"{prefix}{loc}" if loc else (prefix.rstrip(".") or "scenario")
            raise ScenarioError(f"{file}: {where}: {_msg(err['msg'])}") from None
        sc.source = str(file)
        out.append(sc)
    return out


def scenario_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories to their ``*.yaml`` files (tool sets excluded).

    Nothing is opened here. A FIFO, socket or device named ``*.yaml`` is listed too, so
    that reading it fails with "not a regular file" instead of being skipped unseen.
    """
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir() and p.suffix in (".yaml", ".yml"):
            raise ScenarioError(f"{p}: a directory, not a scenario file")
        if p.is_dir():
            files.extend(sorted(f for f in p.glob("*.y*ml") if f.suffix in (".yaml", ".yml")))
        elif p.exists():
            files.append(p)
        else:
            raise ScenarioError(f"{p}: no such file or directory")
    return files


def load_scenarios(paths: Iterable[str | Path] | None = None) -> list[Scenario]:
    """Load scenarios from files/directories (default: the bundled suite); ids must be unique."""
    files = scenario_files(paths if paths else [bundled_dir()])
    seen: dict[str, str] = {}
    out: list[Scenario] = []
    for f in files:
        for sc in load_file(f):
            if sc.id in seen:
                raise ScenarioError(
                    f"{f}: id: duplicate scenario id '{sc.id}' (also in {seen[sc.id]})"
                )
            seen[sc.id] = str(f)
            out.append(sc)
    return out


def validate_paths(paths: Iterable[str | Path]) -> list[str]:
    """Every error across the given files, one line each (an empty list means valid)."""
    errors: list[str] = []
    seen: dict[str, str] = {}
    try:
        files = scenario_files(paths)
    except ScenarioError as exc:
        return [str(exc)]
    for f in files:
        try:
            for sc in load_file(f):
                if sc.id in seen:
                    errors.append(
                        f"{f}: id: duplicate scenario id '{sc.id}' (also in {seen[sc.id]})"
                    )
                seen[sc.id] = str(f)
        except ScenarioError as exc:
            errors.append(str(exc))
    return errors


def opt_in_suites() -> dict[str, Path]:
    """Sub-folders of the bundled suite (``bfcl-smoke``): never in the default run, which
    reads only the top folder's files; ``--scenarios NAME`` selects one by its name."""
    root = bundled_dir()
    if not root.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(root.iterdir())
        if p.is_dir() and p.name != TOOLS_DIRNAME and re.fullmatch(ID_PATTERN, p.name)
    }


DEFAULT_SELECTION = "recorded"
"""What ``toolbench run`` selects when no ``--scenarios`` is given: the scenarios whose
cassettes are committed for the embedded default (one or more of every theme), so a first
run replays in minutes instead of recording for hours."""
ALL_SELECTION = "all"
"""The selector word for the whole bundled suite (the top folder; opt-in suites apart)."""


def select_scenarios(selectors: Sequence[str] | None) -> list[Scenario]:
    """``--scenarios``: paths load files; ``all`` loads the whole bundled suite; a word
    naming an opt-in suite (a sub-folder of the bundled suite) loads it; other words pick
    bundled scenarios by id or tag. No selector at all means the whole suite here; the run
    command applies its own default (:data:`DEFAULT_SELECTION`)."""
    if not selectors:
        return load_scenarios()
    picked: dict[str, Scenario] = {}
    bundled: list[Scenario] | None = None
    for sel in selectors:
        if Path(sel).exists():
            for sc in load_scenarios([sel]):
                picked.setdefault(sc.id, sc)
            continue
        if sel == ALL_SELECTION:
            for sc in load_scenarios():
                picked.setdefault(sc.id, sc)
            continue
        suites = opt_in_suites()
        if sel in suites:
            for sc in load_scenarios([suites[sel]]):
                picked.setdefault(sc.id, sc)
            continue
        if bundled is None:
            bundled = load_scenarios()
        hits = [sc for sc in bundled if sc.id == sel or sel in sc.tags]
        if not hits:
            tags = sorted(tag_counts(bundled))
            # 130-odd ids make an unreadable line: list tags and suites, point to the ids.
            listing = (
                f"Tags: {', '.join(tags) or '(none)'}; suites: {', '.join(suites) or '(none)'};"
                " scenario ids: toolbench scenarios list"
            )
            choices = {sc.id for sc in bundled} | set(tags) | set(suites) | {ALL_SELECTION}
            raise UnknownNameError("scenario or tag", sel, choices, listing)
        for sc in hits:
            picked.setdefault(sc.id, sc)
    return list(picked.values())


def tag_counts(scenarios: Iterable[Scenario]) -> dict[str, int]:
    """How many scenarios carry each tag, most used first (ties by name)."""
    counts = Counter(tag for sc in scenarios for tag in dict.fromkeys(sc.tags))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
