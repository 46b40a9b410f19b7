"""The command-line interface (typer)."""
