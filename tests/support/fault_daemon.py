"""The reconcile daemon with the journal's fault point armed, for tests that need a
process to die exactly between a batch's COMMIT and its XACK.

`python -m tests.support.fault_daemon <reconcile-service arguments>` reads
``CASHIER_FAULT_EXIT_AFTER_COMMIT=<n>`` from its environment, installs
`reconcile_service.journal.after_commit_hook` so that the process exits at once
(``os._exit(FAULT_EXIT_CODE)``, no cleanup, like a power cut) right after the COMMIT of
its n-th batch, and runs the CLI. The production daemon reads no such variable.
"""
from __future__ import annotations

import os
import sys

from reconcile_service import journal
from reconcile_service.cli import main as cli_main

FAULT_ENV = "CASHIER_FAULT_EXIT_AFTER_COMMIT"
FAULT_EXIT_CODE = 86          # distinct from every exit code of the CLI, so a test knows it was this
MODULE = "tests.support.fault_daemon"      # what `python -m` runs


def install(exit_after_commits: int) -> None:
    """Arm the fault point: the process dies after its `exit_after_commits`-th COMMIT."""
    def exit_after(commits: int) -> None:
        if commits >= exit_after_commits:
            os._exit(FAULT_EXIT_CODE)
    journal.after_commit_hook = exit_after


def main(argv: list[str] | None = None) -> int:
    value = os.environ.get(FAULT_ENV, "")
    if value.isdigit() and int(value) > 0:
        install(int(value))
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
