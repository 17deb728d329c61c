"""PyInstaller entry point of the windowed `cashier-terminal` executable.

The same as the `cashier-terminal` gui-script (desktop.app:main); it exists because
PyInstaller starts from a script file, not from an entry point name.
"""
import sys

from desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
