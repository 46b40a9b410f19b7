"""Running the matrix: providers through LiteLLM, cassettes, embedded local models."""
