"""`python -m gateway` = `cashier-gateway`."""
import sys

from .cli import main

sys.exit(main())
