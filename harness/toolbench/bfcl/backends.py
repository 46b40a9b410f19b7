"""BFCL's multi-turn backends as environments (``bfcl.GorillaFileSystem``, ...).

Each backend class of ``bfcl-eval`` is one registered environment; a BFCL scenario names
the classes its entry involves, each with its initial configuration:
``{"config": {...}, "long_context": false}``. The class is loaded from the unpacked wheel
when a trial first needs it (:mod:`toolbench.bfcl.package`); where there is none the
trial is ``environment.unavailable``.

Everything the model sees or the checks compare follows BFCL's own executor
(``multi_turn_utils.execute_multi_turn_func_call``), so toolbench's verdict can equal
BFCL's: a tool is a public method of the instance; a string result is kept, a dict is
``json.dumps``-ed (else ``str``-ed), anything else ``str``-ed; a raised error reads
``Error during execution: <message>``; the names BFCL refuses to run are refused the
same way. The state compared after each turn is the instance's public attributes
(BFCL's ``state_checker``), snapshotted as JSON (:func:`jsonable`).
"""

from __future__ import annotations

import copy
import datetime
import inspect
import json
import math
from collections.abc import Mapping
from typing import Any

from toolbench.bfcl.package import BACKENDS, FETCH_COMMAND, PACKAGE, cache_root, load_module
from toolbench.environments.env_faults import EnvironmentUnavailable, StateInvalid
from toolbench.environments.environment import Environment, EnvironmentKind, JsonObject

CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""The backends of the multi-turn categories (BFCL's ``CLASS_FILE_PATH_MAPPING``)."""

STATELESS = frozenset({"MathAPI"})
"""Classes BFCL builds without loading a configuration."""

REFUSED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Names BFCL's executor will not run ("Function call X is not allowed.")."""

PREFIX = "bfcl."

CYCLE = "<cycle>"
"""A back-reference in a snapshot (a directory's parent): BFCL's equality ignores it."""


def environment_name(class_name: str) -> str:
    return PREFIX + class_name


def backend_class(class_name: str) -> type:
    """BFCL's class ``class_name`` from the unpacked wheel."""
    try:
        module = load_module(f"{BACKENDS}.{CLASS_MODULES[class_name]}")
    except ImportError as exc:
        if exc.name and not exc.name.startswith(PACKAGE):
            raise EnvironmentUnavailable(
                f"BFCL backend {class_name} needs the Python package {exc.name}: "
                f"pip install 'toolbench[bfcl]'"
            ) from None
        raise EnvironmentUnavailable(
            f"BFCL backend {class_name} cannot be loaded from {cache_root()} ({exc}); "
            f"fetch it with `{FETCH_COMMAND}`"
        ) from None
    except FileNotFoundError as exc:
        raise EnvironmentUnavailable(
            f"BFCL backend {class_name} cannot be loaded from {cache_root()} ({exc}); "
            f"fetch it with `{FETCH_COMMAND}`"
        ) from None
    cls: type = getattr(module, class_name)
    return cls


def jsonable(value: Any, above: tuple[int, ...] = ()) -> Any:
    """``value`` as JSON data: objects as their public attributes (with their class),
    sets sorted, dates as ISO text, a back-reference as :data:`CYCLE`."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if id(value) in above:
        return CYCLE
    inner = (*above, id(value))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, inner) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, inner) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v, inner) for v in value), key=repr)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if hasattr(value, "__dict__"):
        public = {k: jsonable(v, inner) for k, v in vars(value).items() if not k.startswith("_")}
        return {"__class__": type(value).__name__, **public}
    return repr(value)


class BfclBackend(Environment):
    """One BFCL backend instance, driven the way BFCL's executor drives it."""

    class_name = ""

    def load(self, state: JsonObject) -> None:
        unknown = set(state) - {"config", "long_context"}
        config = state.get("config", {})
        long_context = state.get("long_context", False)
        if unknown or not isinstance(config, dict) or not isinstance(long_context, bool):
            raise StateInvalid(
                f"{environment_name(self.class_name)}: the state is "
                "{config: {...}, long_context: bool}"
                + (f" (unknown key(s) {sorted(unknown)})" if unknown else "")
            )
        self.instance = backend_class(self.class_name)()
        if self.class_name not in STATELESS:
            self.instance._load_scenario(copy.deepcopy(config), long_context=long_context)

    def snapshot(self) -> JsonObject:
        attrs = {k: v for k, v in vars(self.instance).items() if not k.startswith("_")}
        out: JsonObject = jsonable(attrs)
        return out

    def tool_names(self) -> frozenset[str]:
        return frozenset(
            name
            for name, _ in inspect.getmembers(self.instance, inspect.ismethod)
            if not name.startswith("_")
        )

    def invoke(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if name in REFUSED:
            raise PermissionError(f"Function call {name} is not allowed.")
        return getattr(self.instance, name)(**arguments)

    def result_text(self, value: Any) -> str:
        if type(value) is str:
            return value
        if type(value) is dict:
            try:
                return json.dumps(value)
            except (TypeError, ValueError):
                return str(value)
        return str(value)

    def error_text(self, code: str, message: str, exc: BaseException | None = None) -> str:
        return f"Error during execution: {exc if exc is not None else message}"


def _kind(class_name: str) -> EnvironmentKind:
    backend = type(class_name, (BfclBackend,), {"class_name": class_name})
    return EnvironmentKind(
        environment_name(class_name), backend, f"BFCL's {class_name} backend (bfcl-eval)"
    )


KINDS: tuple[EnvironmentKind, ...] = tuple(_kind(name) for name in CLASS_MODULES)
"""One environment per backend class (entry point ``bfcl``)."""
