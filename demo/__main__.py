"""`python -m demo`: the one-command demo (see demo.cli)."""
import sys

from demo.cli import main

sys.exit(main())
