"""`python -m reconcile_service`: the same command line as the `reconcile-service` script."""
import sys

from reconcile_service.cli import main

sys.exit(main())
