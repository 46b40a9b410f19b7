"""Provider kinds: how a request reaches a model (one module per kind).

:mod:`.base` is the protocol every kind implements (``ModelAPI``: ``complete``,
``capabilities``, ``classify``); :mod:`.litellm_api` reaches any provider LiteLLM
speaks, :mod:`.local_api` the embedded local models, and :mod:`.fake` is a
request-aware fake OpenAI-compatible server for tests and benchmarks. The runner picks a
kind by model string through :mod:`.registry`.
"""
