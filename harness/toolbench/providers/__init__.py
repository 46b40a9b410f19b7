"""Provider kinds and the one call pipeline: how a request reaches a model.

:mod:`.base` is the protocol every kind implements (``ModelAPI``: transport only,
``send``, ``classify``, ``capabilities``); :mod:`.call` is the shared call every request
goes through, plain or streamed (attempts, retries, the total deadline, parameter
dropping, the replay hook, the provider's time), reading replies with :mod:`.reply`,
:mod:`.streamed` and the protocol readers of :mod:`.readers`. :mod:`.litellm_api`
reaches any provider LiteLLM speaks, :mod:`.local_api` the embedded local models, and
:mod:`.fake` is a request-aware fake OpenAI-compatible server for tests and benchmarks.
Kinds register through the ``toolbench.providers`` entry-point group (:mod:`.registry`).
"""
