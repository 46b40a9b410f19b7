"""Everything a plugin needs, in one public module: ``from toolbench.plugin import ...``.

A plugin is a module of its own distribution and an entry point in one of toolbench's
groups; toolbench's built-ins come in through the same groups (:mod:`toolbench.registry`):

=========================  =======================================  =====================
group                      an entry point names                     base / helpers here
=========================  =======================================  =====================
``toolbench.formats``      a :class:`Format` subclass               :class:`Format`,
                                                                    :class:`DialectFormat`
``toolbench.scorers``      a :class:`Scorer` or a sequence of them  :class:`Scorer`,
                                                                    :func:`named`
``toolbench.metrics``      a :class:`Metric` or a sequence of them  :class:`Metric`,
                                                                    :func:`flag_rate`
``toolbench.reports``      a :class:`ReportOutput` or a sequence    :class:`ReportOutput`
``toolbench.providers``    a class with ``name``, ``prefixes`` and  :class:`ModelAPI`
                           ``send`` (made with ProviderSettings)
``toolbench.environments`` an :class:`EnvironmentKind` or a         :class:`Environment`
                           sequence of them
``toolbench.wires``        a :class:`WireProtocol` (a protocol      :class:`WireProtocol`
                           package or object)
=========================  =======================================  =====================

A plugin that fails to import, or takes a name already taken, is one warning line and is
left out; the rest of toolbench works. A plugin's own tests load it through its entry
point without installing it with the registry's ``installing``::

    from importlib.metadata import EntryPoint
    from toolbench.plugin import FORMATS

    with FORMATS.installing(EntryPoint("toy", "my_plugin:Toy", "toolbench.formats")):
        ...  # toolbench sees the format, as if the distribution were installed

Only the names below are public (docs/guide.md, "Writing a plugin"); the modules behind
them may move between versions, these names stay.
"""

from __future__ import annotations

from toolbench import codes
from toolbench.environments.env_registry import ENVIRONMENTS
from toolbench.environments.environment import Environment, EnvironmentKind
from toolbench.formats.base import (
    Format,
    FormatOptions,
    Message,
    ModelReply,
    NamePattern,
    NoOptions,
    ParseIssue,
    ParseResult,
    RenderedRequest,
    Requirements,
    ShotsOptions,
    ToolCall,
)
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.dialect import DialectFormat
from toolbench.formats.format_registry import FORMATS
from toolbench.formats.jsonscan import loads_strict
from toolbench.formats.text import Cutter, tidy
from toolbench.metrics.metric_registry import METRICS, Metric, flag_rate
from toolbench.providers.kind_registry import KINDS
from toolbench.providers.model_api import (
    Capabilities,
    Completion,
    CompletionRequest,
    Endpoint,
    Fault,
    ModelAPI,
    ProviderSettings,
)
from toolbench.providers.stream_read import as_completion
from toolbench.providers.wire.chat.reader import Assembler
from toolbench.providers.wire.protocol import WireProtocol
from toolbench.providers.wire.wire_registry import WIRES
from toolbench.registry import DuplicateNameError, Kind, RegistrationError, Registry, instances_of
from toolbench.report.outputs import REPORTS, ReportInput, ReportOutput
from toolbench.results import ScoreValue, TrialSettings, TurnRecord, Value, ValueKind
from toolbench.scenarios.model import Scenario
from toolbench.scoring.scorer import (
    SCORERS,
    Scored,
    Scorer,
    TrialInput,
    effective_turns,
    get_scorer,
    named,
)
from toolbench.tools import ToolDef

__all__ = [
    "ENVIRONMENTS",
    "FORMATS",
    "KINDS",
    "METRICS",
    "REPORTS",
    "SCORERS",
    "WIRES",
    "Assembler",
    "CallCollector",
    "Capabilities",
    "Completion",
    "CompletionRequest",
    "Cutter",
    "DialectFormat",
    "DuplicateNameError",
    "Endpoint",
    "Environment",
    "EnvironmentKind",
    "Fault",
    "Format",
    "FormatOptions",
    "Kind",
    "Message",
    "Metric",
    "ModelAPI",
    "ModelReply",
    "NamePattern",
    "NoOptions",
    "ParseIssue",
    "ParseResult",
    "ProviderSettings",
    "RegistrationError",
    "Registry",
    "RenderedRequest",
    "ReportInput",
    "ReportOutput",
    "Requirements",
    "Scenario",
    "ScoreValue",
    "Scored",
    "Scorer",
    "ShotsOptions",
    "ToolCall",
    "ToolDef",
    "TrialInput",
    "TrialSettings",
    "TurnRecord",
    "Value",
    "ValueKind",
    "WireProtocol",
    "as_completion",
    "codes",
    "effective_turns",
    "flag_rate",
    "get_scorer",
    "instances_of",
    "loads_strict",
    "named",
    "tidy",
]
