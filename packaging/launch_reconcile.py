"""PyInstaller entry point of the console `reconcile-service` executable.

The same as the `reconcile-service` console script (reconcile_service.cli:main), plus
one subcommand of the bundle only: ``reconcile-service self-test`` (see
`packaging/bundle_selftest.py`), which proves offline that the bundle finds its Lua
scripts and Alembic migrations and can migrate an SQLite database. It is handled here
until reconcile_service/ has a self-test of its own.
"""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["self-test"]:
        from bundle_selftest import run_reconcile_selftest
        sys.exit(run_reconcile_selftest())
    from reconcile_service.cli import main
    sys.exit(main())
