"""Protocol readers: what a provider sent, put back together into one assembled reply.

Every kind hands the shared call (:mod:`toolbench.providers.call`) OpenAI chat shapes:
a chat completion (read by :mod:`toolbench.providers.reply`) or a stream of
``chat.completion.chunk`` deltas, read by :mod:`.chat` (content, reasoning, thinking
blocks with their signatures, tool calls with their thought signatures, finish reason,
usage). LiteLLM translates the other providers' wires (Anthropic, Gemini, Bedrock,
Ollama, Cohere) into these shapes; the framing of the bytes themselves (SSE, NDJSON, AWS
eventstream) is read by the cassette layer, which hands OpenAI-shaped events it saw on
the wire to the same reader (LiteLLM repairs broken delta sequences on the way). Wires
LiteLLM misreads are read from those events by their own reader, into the same chat
deltas: Cohere v2 (:mod:`.cohere`), the Responses API (:mod:`.responses`), Gemini calls
streamed in parts (:mod:`.gemini`, :mod:`.partial_args`)."""
