"""toolbench: measure how well each tool-calling format works for each model.

The package is a library first (formats, scenarios, scoring) and a CLI second; nothing
here imports LiteLLM at import time, so offline commands stay fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
