"""Prints the terminal's receipts off the UI thread, keeps the last one for a reprint,
and says when a receipt did not print.

`ReceiptService.operation_resolved(op, cashier)` is called for every operation the
engine resolves: an applied charge, completed sale, refund, top-up or card close gets a
receipt, printed at once when `auto_print` is on. Printing runs on its own one-thread
worker, so a printer that hangs (a network printer that is off waits for its timeout)
never holds up the sale screen or the money operations, which have long been applied
and recorded when the receipt is composed. A failure is reported with `notPrinted`
(the receipt stays the "last receipt" for the reprint button); nothing is retried on
its own, because a slip printed minutes later at a busy till goes to the wrong customer.
A slip printed again says REPRINT only when it was printed before (`again`): the first
slip of a receipt that never reached the printer is not a reprint.
A shift's Z / X slip goes through the same worker (`print_items`).
"""
from __future__ import annotations

import logging
from dataclasses import replace

from PySide6.QtCore import QObject, QSettings, Signal

from ..workers import Background
from .config import PrinterConfig, ReceiptOptions, printer_config, receipt_options
from .model import (RECEIPT_KINDS, Receipt, ReceiptContext, receipt_for_offline, receipt_for_op,
                    receipt_for_past)

log = logging.getLogger(__name__)


def with_split(receipt: Receipt, history) -> Receipt:
    """The receipt with its principal/bonus split from the journal entry, when the
    operation's answer did not carry it (worker thread; best effort: a failed read
    prints the slip without the split)."""
    if history is None or receipt.principal_delta_minor is not None or receipt.reprint:
        return receipt
    try:
        past = history.load(receipt.txn_id)
    except Exception as exc:                  # the slip matters more than the split
        log.info("receipt %s without bucket split (%s)", receipt.txn_id, type(exc).__name__)
        return receipt
    if past.principal_delta_minor is None or past.bonus_delta_minor is None:
        return receipt
    return replace(receipt, principal_delta_minor=past.principal_delta_minor,
                   bonus_delta_minor=past.bonus_delta_minor, method=receipt.method or past.method)


class ReceiptService(QObject):
    printed = Signal(object)                 # Receipt
    notPrinted = Signal(object, str, str)    # Receipt, reason code (see printer), detail
    lastChanged = Signal(object)             # Receipt: the one "Reprint last" prints

    def __init__(self, terminal_id: str, *, settings: QSettings | None = None,
                 config: PrinterConfig | None = None, options: ReceiptOptions | None = None,
                 ui_language=lambda: "en", history=None, parent=None):
        super().__init__(parent)
        self.terminal_id = terminal_id
        self.history = history               # core.history.History: the bucket split of a fresh slip
        self.config = config or (printer_config(settings) if settings is not None else PrinterConfig())
        self.options = options or (receipt_options(settings) if settings is not None else ReceiptOptions())
        self._ui_language = ui_language
        self.worker = Background(1, "receipts")
        self.last: Receipt | None = None
        self.sent: list[Receipt] = []        # receipts that reached the printer, this run
        self.unprinted: set[str] = set()     # txn ids of this run's receipts that never reached it

    @property
    def language(self) -> str:
        return self.options.language or self._ui_language()

    def context(self, cashier=None) -> ReceiptContext:
        return ReceiptContext(self.options.shop_name, self.options.shop_address, self.terminal_id,
                              getattr(cashier, "cashier_id", "") or "", getattr(cashier, "name", "") or "",
                              self.language)

    def receipt_for(self, op, cashier=None) -> Receipt | None:
        """The receipt of an outbox operation, or None when it gets none (declined, a hold...).
        An offline sale's is the one printed when it was made (`operation_made_offline`)."""
        if getattr(op, "offline", False):
            return receipt_for_offline(op, self.context(cashier))
        if not op.applied or op.kind not in RECEIPT_KINDS:
            return None
        return receipt_for_op(op, self.context(cashier))

    def receipt_for_past(self, past, cashier=None) -> Receipt:
        """A reprint of an operation loaded from the ledger (`core.history.PastOperation`)."""
        return receipt_for_past(past, self.context(cashier))

    def operation_made_offline(self, op, cashier=None) -> Receipt:
        """Hook for the engine's offlineSale: the sale's receipt, marked OFFLINE, remembered
        (and auto-printed) as soon as it is saved."""
        return self._made(receipt_for_offline(op, self.context(cashier)))

    def operation_resolved(self, op, cashier=None) -> Receipt | None:
        """Hook for the engine's opResolved: remember (and auto-print) the receipt (an offline
        sale's was printed when it was made)."""
        if getattr(op, "offline", False):
            return None
        receipt = self.receipt_for(op, cashier)
        if receipt is None:
            return None
        return self._made(receipt)

    def _made(self, receipt: Receipt) -> Receipt:
        self.last = receipt
        self.unprinted.add(receipt.txn_id)
        self.lastChanged.emit(receipt)
        if self.options.auto_print and self.config.enabled:
            self.print(receipt)
        return receipt

    def again(self, receipt: Receipt) -> Receipt:
        """`receipt` printed once more: marked REPRINT, unless it is one of this run's
        receipts that never reached the printer (auto-print off, the printer was off):
        then this is its first slip. A receipt this run did not make (an earlier run's,
        another terminal's) is taken as printed before."""
        return replace(receipt, reprint=receipt.txn_id not in self.unprinted)

    def reprint_last(self) -> bool:
        if self.last is None:
            return False
        self.print(self.again(self.last))
        return True

    def print(self, receipt: Receipt) -> None:
        """Print on the receipts worker; the answer comes as printed / notPrinted."""
        config, history = self.config, self.history

        def job():
            from .printer import print_receipt        # python-escpos only when printing
            return print_receipt(with_split(receipt, history), config)

        def failed(exc):
            reason, detail = getattr(exc, "reason", "failed"), getattr(exc, "detail", str(exc))
            log.warning("receipt %s not printed: %s %s", receipt.txn_id, reason, detail)
            self.notPrinted.emit(receipt, reason, detail)

        def done(_data):
            self.sent.append(receipt)
            self.unprinted.discard(receipt.txn_id)
            log.info("receipt %s printed%s", receipt.txn_id, " (reprint)" if receipt.reprint else "")
            self.printed.emit(receipt)
        self.worker.run(job, done, failed)

    def print_items(self, items: list, done=lambda: None, failed=lambda reason, detail: None) -> None:
        """A shift's Z / X slip (laid-out items, receipts/shift_slip.py) on the receipts
        worker: `done()` once sent, `failed(reason, detail)` if not (never retried)."""
        config = self.config

        def job():
            from .printer import print_items
            return print_items(items, config)

        def not_printed(exc):
            reason, detail = getattr(exc, "reason", "failed"), getattr(exc, "detail", str(exc))
            log.warning("shift slip not printed: %s %s", reason, detail)
            failed(reason, detail)
        self.worker.run(job, lambda _data: done(), not_printed)

    def wait(self, timeout_ms: int = 30_000) -> bool:
        return self.worker.wait(timeout_ms)
