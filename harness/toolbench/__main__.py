"""``python -m toolbench``: the same CLI as the ``toolbench`` console script."""

from toolbench.cli.app import main

main()
