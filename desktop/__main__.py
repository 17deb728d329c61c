"""`python -m desktop`: the same as the `cashier-terminal` command."""
import sys

from desktop.app import main

sys.exit(main())
