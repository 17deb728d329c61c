"""`python -m bench.unchained_service run ...`: the reconcile daemon WITHOUT the hash chain,
for part 6's "drain without the chain" (bench/parts/reconcile.py) only: the insert as it
was before the chain (no head lock or update, no SHA-256 per row; chain_seq a negative
unique placeholder, row_hash empty), so the bench can report what the chain costs. Such
a book does not verify. It replaces the store's BOOK_CHAIN in this process only and then
runs the service's own command line; the production daemon has no such switch.
"""
from __future__ import annotations

import sys

from reconcile_service import store
from reconcile_service.cli import main as cli_main
from reconcile_service.entries import LEDGER_COLUMNS

_POS_AT, _SEQ_AT = LEDGER_COLUMNS.index("journal_pos"), LEDGER_COLUMNS.index("chain_seq")


def _placeholder_seq(row: list) -> None:
    """A negative chain_seq unique per journal position (the table's unique index)."""
    pos = row[_POS_AT]
    row[_SEQ_AT] = -int(pos[:15]) * 10 ** 6 - int(pos[15:]) % 10 ** 6


class UnchainedBook(store.BookChain):
    """The book without its chain: no head to lock or store, no hash per row."""

    def lock_head(self, conn, partition, now):
        return (0, "")

    def linker(self, head):
        return _placeholder_seq

    def save_head(self, conn, partition, link, now):
        pass

    def raced(self) -> Exception:
        # unchained, what raced is left to the duplicate check; never met by the bench
        return RuntimeError("the bench's unchained drain met a txn id inserted concurrently")


def main(argv: list[str] | None = None) -> int:
    store.BOOK_CHAIN = UnchainedBook()
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
