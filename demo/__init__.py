"""demo: `python -m demo` brings up a complete shop on one PC and proves it works.

It uses the configured Redis (or starts a private redis-server with AOF in the demo's
data directory), runs the reconcile service on an embedded SQLite database, creates
demo accounts and a demo cashier, opens a cashier terminal, and on a machine without
a display makes one charge end to end (terminal engine -> Redis -> journal ->
reconcile service -> database) and prints it. Everything it started is stopped on
the way out. See `demo.cli` for the options.
"""
