"""reconcile_service: the headless daemon that moves the ledger journal into the database
of record exactly once, proves Redis and the database agree, and repairs what it can prove wrong."""
