"""Provider kinds and the one call pipeline: how a request reaches a model.

:mod:`.base` is the protocol every kind implements (``ModelAPI``: transport only,
``send``, ``classify``, ``capabilities``); :mod:`.call` is the shared call every request
goes through, plain or streamed, in stages: build (:mod:`.request`) -> replay at the
boundary (:mod:`.replay`, the one place a cassette answers) or send (:mod:`.attempts`:
attempts, retries, the total deadline, parameter dropping, the provider's time) -> read
(:mod:`.reply`, :mod:`.streamed` and the wire protocol packages of :mod:`.wire`) -> keep.
:mod:`.litellm_api` reaches any provider LiteLLM speaks, :mod:`.local_api` the embedded
local models, and :mod:`.fake` is a request-aware fake OpenAI-compatible server for tests
and benchmarks. Kinds register through the ``toolbench.providers`` entry-point group
(:mod:`.registry`), wire protocols through ``toolbench.wires`` (:mod:`.wire.registry`).
"""
