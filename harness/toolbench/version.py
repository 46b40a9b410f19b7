"""The version of toolbench, in a module of its own.

Kept apart from the package's ``__init__`` (the public API, which re-exports names from
the formats, the scoring and the scenarios) so the store, the runner and the report can
record the version without importing the module that sits above them all.
"""

__version__ = "0.1.0"
"""Kept equal to ``project.version`` in pyproject.toml (a test checks)."""
