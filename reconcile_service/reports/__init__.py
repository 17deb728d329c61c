"""The back office's reports on the database of record (issue 16): stored-value liability
over a period (`book.liability`, or consecutive periods: `book.liability_series`), one
account's statement, the terminals' shift closes, the open discrepancies, and (issue 29)
a period's sums per terminal, cashier or promotion (`book.breakdown`) and its biggest
spenders (`book.top_members`), rendered as text, CSV or PDF in English or Chinese
(`render`), and the `report` / `resolve` subcommands of reconcile-service (`commands`).
Read-only except `resolve`, which records a person's resolution of one discrepancy.
"""
