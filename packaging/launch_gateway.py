"""PyInstaller entry point of the console `cashier-gateway` executable.

The same as the `cashier-gateway` console script (gateway.cli:main), including its
offline `self-test` subcommand; it exists because PyInstaller starts from a script
file, not from an entry point name.
"""
import sys

from gateway.cli import main

if __name__ == "__main__":
    sys.exit(main())
