"""PyInstaller entry point of the console `cashierctl` executable.

The same as the `cashierctl` console script (admin.cashierctl:main); it exists because
PyInstaller starts from a script file, not from an entry point name.
"""
import sys

from admin.cashierctl import main

if __name__ == "__main__":
    sys.exit(main())
