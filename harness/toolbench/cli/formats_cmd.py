"""``toolbench formats list|show|detect``: what formats exist, exactly what one would
send, and which one ``--formats auto`` picks for a model.

``show`` renders a scenario's first request through a format, so a prompt can be read
(or diffed with ``--json``) before any model is called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolbench.cli.conventions import Command, typer_app

if TYPE_CHECKING:  # imported inside the commands: `toolbench --help` stays fast
    from toolbench.formats.base import RenderedRequest
    from toolbench.scenarios.model import Scenario

formats_app = typer_app("formats", "List tool-call formats and show what they send.")

ScenariosDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--scenarios-dir",
        metavar="DIR",
        help="Load scenarios from here (default: the bundled suite).",
    ),
]


def find_scenario(scenario_id: str, scenarios_dir: Path | None) -> Scenario:
    """The scenario with this id, or a did-you-mean error listing the ids."""
    from toolbench.errors import UnknownNameError
    from toolbench.scenarios.loader import load_scenarios

    scenarios = load_scenarios([scenarios_dir] if scenarios_dir else None)
    for sc in scenarios:
        if sc.id == scenario_id:
            return sc
    raise UnknownNameError("scenario", scenario_id, [sc.id for sc in scenarios])


def render_text(req: RenderedRequest) -> str:
    """A rendered request as readable text: settings first, then each message in full."""
    stop = json.dumps(req.stop, ensure_ascii=False) if req.stop else "(none)"
    lines = [f"stop: {stop}", f"tool_choice: {req.tool_choice if req.tool_choice else '(none)'}"]
    if req.tools:
        lines.append("tools:")
        lines.append(json.dumps(req.tools, indent=2, ensure_ascii=False))
    else:
        lines.append("tools: (none)")
    for i, msg in enumerate(req.messages):
        lines.append(f"--- message {i}: {msg.get('role', '?')} ---")
        content = msg.get("content")
        lines.append(content if isinstance(content, str) else json.dumps(content))
        extra = {k: v for k, v in msg.items() if k not in ("role", "content")}
        if extra:
            lines.append(json.dumps(extra, indent=2, ensure_ascii=False))
    return "\n".join(lines)


@formats_app.command("list", cls=Command)
def list_cmd() -> None:
    """Print each format's name and description, one per line."""
    from toolbench.formats.format_registry import format_class, format_names
    from toolbench.formats.prompt_axes import AXIS_NAMES

    names = format_names()
    width = max((len(n) for n in names), default=0)
    for name in names:
        cls = format_class(name)
        axes = [a for a in AXIS_NAMES if a in cls.Options.model_fields]
        more = f" Axes: {', '.join(axes)}." if axes else ""
        typer.echo(f"{name.ljust(width)}  {cls.description}{more}".rstrip())


@formats_app.command("show", cls=Command)
def show_cmd(
    name: Annotated[
        str, typer.Argument(help="Format spec, optionally with options: prompt-json:shots=2")
    ],
    scenario: Annotated[
        str, typer.Option("--scenario", metavar="ID", help="Scenario id to render.")
    ],
    scenarios_dir: ScenariosDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the request as JSON.")] = False,
) -> None:
    """Print exactly what the format would send for a scenario's first turn."""
    from toolbench.formats.format_registry import get_format

    fmt = get_format(name)
    sc = find_scenario(scenario, scenarios_dir)
    req = fmt.render(sc.tools, [m.model_dump() for m in sc.messages])
    if req.api == "responses":  # sent as the Responses API's request, not as chat
        from toolbench.providers.wire.responses.request import preview

        shaped = json.dumps(preview(req), indent=2, ensure_ascii=False)
        if not as_json:
            what = "OpenAI's Responses API; the model and sampling parameters are added per run"
            typer.echo(f"format: {fmt.spec}\nscenario: {sc.id}\napi: responses ({what})")
        typer.echo(shaped)
        return
    if as_json:
        typer.echo(req.model_dump_json(indent=2))
        return
    typer.echo(f"format: {fmt.spec}\nscenario: {sc.id}")
    typer.echo(render_text(req))


@formats_app.command("detect", cls=Command)
def detect_cmd(
    models: Annotated[
        list[str], typer.Argument(metavar="MODEL...", help="Model names (LiteLLM strings).")
    ],
) -> None:
    """Print the format --formats auto gives each model, and why."""
    from toolbench.formats.auto import choose_format

    width = max(len(m) for m in models)
    for model in models:
        d = choose_format(model)
        typer.echo(f"{model.ljust(width)}  {d.format}  ({d.reason})")


def register(app: typer.Typer) -> None:
    app.add_typer(formats_app, name="formats")
