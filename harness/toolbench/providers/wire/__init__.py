"""Wire protocols, one package each: what a provider sent, put back together into one
assembled reply, and the request shaped for a wire that is not OpenAI chat.

Every kind hands the shared call (:mod:`toolbench.providers.call`) OpenAI chat shapes: a
chat completion (read by :mod:`toolbench.providers.reply`) or a stream of
``chat.completion.chunk`` deltas, read by :mod:`.chat` (content, reasoning, thinking
blocks with their signatures, tool calls with their thought signatures, finish reason,
usage). LiteLLM translates the other providers' wires (Anthropic, Gemini, Bedrock,
Ollama, Cohere) into these shapes; the framing of the bytes themselves (SSE, NDJSON, AWS
eventstream) is read by the cassette layer, which hands the events it saw on the wire to
the readers. Wires LiteLLM misreads are read from those events by their own package, into
the same chat deltas: Cohere v2 (:mod:`.cohere`), the Responses API (:mod:`.responses`,
with its request shaping), Gemini calls streamed in parts (:mod:`.gemini`). A package also
says what HTTP request the sender sends for a request of its wire (``request.wire_request``
of :mod:`.chat` and :mod:`.responses`): what a replay at the boundary matches an older
cassette's exchange by (:mod:`toolbench.providers.replay`).

A package is a :class:`~toolbench.providers.wire.protocol.WireProtocol` (its ``name``,
``speaks`` and ``assemble``; how its bytes are cut into events is a framing's, chosen by
content type: :mod:`toolbench.framings`), registered by name in
:data:`~toolbench.providers.wire.wire_registry.WIRES` (entry-point group ``toolbench.wires``): a
new protocol is a new package and an entry point. A provider's failure signals inside a
2xx stream, common to every wire, are :mod:`.signals`.
"""
