"""PyInstaller entry point of the console `reconcile-service` executable.

The same as the `reconcile-service` console script (reconcile_service.cli:main),
including its offline `self-test` subcommand; it exists because PyInstaller starts
from a script file, not from an entry point name.
"""
import sys

from reconcile_service.cli import main

if __name__ == "__main__":
    sys.exit(main())
