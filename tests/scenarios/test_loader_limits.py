"""What the scenario loader refuses, and what it still accepts, beyond the CLI table.

The one-line messages are asserted through the installed CLI in
``tests/cli/test_usage_errors.py``; here: the cases that need links, timing or the
library API.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from toolbench.errors import ScenarioError
from toolbench.scenarios.loader import BUNDLED_DIRNAME, bundled_dir, load_file, validate_paths
from toolbench.scenarios.toolschema import schema_problem
from toolbench.scenarios.yamlfile import MAX_FILE_BYTES, read_yaml

GOOD = """\
id: good
tools: [{ref: REF}]
messages: [{role: user, content: hi}]
expect: {calls: [{name: f, arguments: {x: a}}]}
"""
TOOL_SET = "- name: f\n  parameters: {type: object, properties: {x: {type: string}}}\n"


def test_tool_set_in_a_sub_folder_is_found(tmp_path: Path) -> None:
    (tmp_path / "tools" / "shop").mkdir(parents=True)
    (tmp_path / "tools" / "shop" / "orders.yaml").write_text(TOOL_SET)
    (tmp_path / "s.yaml").write_text(GOOD.replace("REF", "shop/orders"))
    assert [t.name for t in load_file(tmp_path / "s.yaml")[0].tools] == ["f"]


def test_tool_set_link_leading_out_of_tools_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(TOOL_SET)
    (tmp_path / "suite" / "tools").mkdir(parents=True)
    os.symlink(outside, tmp_path / "suite" / "tools" / "t.yaml")
    scenario = tmp_path / "suite" / "s.yaml"
    scenario.write_text(GOOD.replace("REF", "t"))
    with pytest.raises(ScenarioError) as err:
        load_file(scenario)
    assert str(err.value) == (
        f"{scenario}: tools[0].ref: 't' must name a tool set inside {tmp_path / 'suite' / 'tools'}"
    )


def test_nesting_a_million_deep_is_refused_at_once(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("x: " + "[" * 1_000_000)
    start = time.monotonic()
    with pytest.raises(ScenarioError, match="nested deeper than 64 levels"):
        read_yaml(deep)
    assert time.monotonic() - start < 2


def test_alias_bomb_is_refused_before_anything_expands(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 1024
    with pytest.raises(ScenarioError, match=r"YAML aliases \(\*name\) are not allowed"):
        read_yaml(bomb)


def test_a_file_at_the_size_cap_loads_in_seconds(tmp_path: Path) -> None:
    """libyaml parses; the cap keeps the worst case to a few seconds on 2 cores."""
    one = (
        "- id: s{i}\n"
        "  tools: [{{name: f, parameters:"
        " {{type: object, properties: {{x: {{type: string}}}}}}}}]\n"
        '  messages: [{{role: user, content: "hello {i}"}}]\n'
        "  expect: {{calls: [{{name: f, arguments: {{x: a}}}}]}}\n"
    )
    size = len(one.format(i=10000))
    text = "".join(one.format(i=10000 + i) for i in range(MAX_FILE_BYTES // size))
    assert MAX_FILE_BYTES - size < len(text.encode()) <= MAX_FILE_BYTES
    big = tmp_path / "big.yaml"
    big.write_text(text)
    start = time.monotonic()
    assert len(load_file(big)) == MAX_FILE_BYTES // size
    assert time.monotonic() - start < 30


def test_fifo_in_a_suite_is_reported_not_opened(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.yaml").write_text(TOOL_SET)
    (tmp_path / "good.yaml").write_text(GOOD.replace("REF", "t"))
    os.mkfifo(tmp_path / "pipe.yaml")
    assert validate_paths([tmp_path]) == [f"{tmp_path / 'pipe.yaml'}: not a regular file"]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"x": {"type": "string"}}}, None),
        (
            {
                "type": "object",
                "$defs": {"u": {"type": "string"}},
                "properties": {"x": {"$ref": "#/$defs/u"}},
            },
            None,
        ),
        ({"type": "object", "properties": {"x": {"$ref": "#"}}}, None),
        (
            {"type": "object", "properties": {"x": {"$dynamicRef": "other.json#n"}}},
            "$ref 'other.json#n' does not resolve inside the schema"
            " (only local references such as '#/$defs/name' are allowed)",
        ),
        ([], "must be a JSON Schema object"),
        (
            {"type": "object", "required": "x"},
            "not valid JSON Schema at required: 'x' is not of type 'array'",
        ),
    ],
)
def test_schema_problem(schema: object, problem: str | None) -> None:
    assert schema_problem(schema) == problem


def test_bundled_suite_is_reached_through_the_package() -> None:
    """In a checkout the package's link leads to scenarios/; a wheel holds real copies."""
    packaged = Path(__file__).resolve().parents[2] / "harness" / "toolbench" / BUNDLED_DIRNAME
    assert packaged.is_symlink()
    assert packaged.resolve() == (Path(__file__).resolve().parents[2] / "scenarios")
    assert validate_paths([bundled_dir()]) == []
