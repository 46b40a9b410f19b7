"""Reaching a Ray cluster for ``--executor ray``: the checks before any trial, the
connection, and where a trial may run.

Ray is an optional extra (``pip install 'toolbench-harness[ray]'``). Without it, or with
an ``--address`` where no cluster answers, the run is refused in one line naming the
option (exit 2) before any trial or model call. Without ``--address`` a Ray instance is
started on this machine for the run (two CPUs, as this project's machines have) and
stopped after it.

Placement: a trial of an embedded model (``local/NAME``) that may call its server asks
for the custom resource ``toolbench-model:local/NAME``, so Ray places it only on a node
started with that resource (``ray start --resources '{"toolbench-model:local/NAME": 100}'``),
one that holds the model's file and llama-server. A replayed trial calls no server and
asks for nothing. The instance toolbench starts itself declares the resource for every
embedded model of the plan: this machine is where the run was checked to be ready.
"""

from __future__ import annotations

import logging
import socket
from types import ModuleType
from typing import Any

from toolbench.errors import UserError
from toolbench.runner.options import RunOptions
from toolbench.runner.plan import PlannedTrial
from toolbench.runner.variants import bare_model

LOCAL_CPUS = 2
"""CPUs of the Ray instance started on this machine (without ``--address``)."""
RESOURCE_PREFIX = "toolbench-model:"
"""A node holding embedded model ``local/NAME`` declares ``toolbench-model:local/NAME``."""
PER_TASK = 0.01
"""How much of a model's resource one task takes: many tasks share a node's model (its
server serializes them); the resource only says where the model is."""
PROBE_S = 3.0


def import_ray() -> ModuleType:
    """The ``ray`` module, or the line saying it is not installed."""
    try:
        # Deferred: an optional extra, and a heavy import only --executor ray needs.
        import ray
    except ImportError:
        raise UserError(
            "--executor: ray is not installed; install the extra: "
            "pip install 'toolbench-harness[ray]'"
        ) from None
    return ray


def check_ray(opts: RunOptions) -> None:
    """Refuse ``--executor ray`` without Ray, or with an ``--address`` where no cluster
    answers; with one, connect to it now (before the run directory is written)."""
    ray = import_ray()
    if opts.address is None:
        return
    where = address_form(opts.address)  # a malformed address is refused in every case
    if ray.is_initialized():
        return  # a process already connected (a notebook, a test) runs on its instance
    probe_address(opts.address, where)
    try:
        ray.init(address=opts.address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"--address: no Ray cluster at {opts.address}: {first}") from None


def address_form(address: str) -> tuple[str, int] | None:
    """``address``'s host and port (None for ``auto``), or the one line refusing it."""
    if address == "auto":
        return None  # Ray reads this machine's running instance itself, and says so at once
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--address: '{address}' is not HOST:PORT, ray://HOST:PORT or auto")
    return host, int(port)


def probe_address(address: str, where: tuple[str, int] | None) -> None:
    """A ``HOST:PORT`` (or ``ray://HOST:PORT``) where nothing listens is refused at once:
    Ray itself would retry its connection for a minute before saying so."""
    if where is None:
        return
    host, port = where
    try:
        socket.create_connection((host, port), timeout=PROBE_S).close()
    except OSError as exc:
        raise UserError(f"--address: no Ray cluster at {address} ({exc.strerror or exc})") from None


def connect(ray: ModuleType, trials: list[PlannedTrial]) -> bool:
    """Connect for the run: the cluster ``check_ray`` reached, or a Ray instance started
    here for it. True when this run started it (and must stop it)."""
    if ray.is_initialized():
        return False
    held = {RESOURCE_PREFIX + m: 1000.0 for m in sorted(_local_models(trials))}
    ray.init(num_cpus=LOCAL_CPUS, resources=held, logging_level=logging.ERROR, log_to_driver=False,
             include_dashboard=False)  # fmt: skip
    return True


def placement(batch: list[PlannedTrial]) -> dict[str, Any]:
    """The task options that place ``batch`` (one model's trials) on a node holding its
    embedded model, when it may call the model's server."""
    models = _local_models(batch)
    return {"resources": {RESOURCE_PREFIX + m: PER_TASK for m in sorted(models)}} if models else {}


def _local_models(trials: list[PlannedTrial]) -> set[str]:
    """Embedded models the trials may call live (a pure replay calls none)."""
    return {
        bare_model(t.spec.model)
        for t in trials
        if t.policy != "replay" and bare_model(t.spec.model).startswith("local/")
    }
