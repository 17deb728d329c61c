"""The back office's reports on the database of record (issue 16): stored-value liability
over a period (`book.liability`), one account's statement, the terminals' shift closes
and the open discrepancies, rendered as text, CSV or PDF in English or Chinese
(`render`), and the `report` / `resolve` subcommands of reconcile-service (`commands`).
Read-only except `resolve`, which records a person's resolution of one discrepancy.
"""
