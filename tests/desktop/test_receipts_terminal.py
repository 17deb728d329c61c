"""Receipts at the till: printed after every applied charge, top-up and refund; a printer
that is off never blocks or loses the sale (the charge is applied, the terminal says
"Receipt not printed" and offers to print it, marked REPRINT only once printed before); a printer that hangs does
not hold up the next sale. Real Redis, real terminal offscreen, real printer endpoints
(a file, a FIFO no one reads yet, a closed TCP port)."""
from __future__ import annotations

import os
import threading

from PySide6.QtCore import Qt

from escpos.constants import CD_KICK_2

from desktop.receipts.config import PrinterConfig

from .conftest import SUPERVISOR, SUPERVISOR_PIN, SUPERVISOR2, SUPERVISOR2_PIN, approve, open_account, sign_in


def charge(qtbot, window, account: str, amount: str) -> str:
    page = window.sale_page
    page.account_input.setText(account)
    page.amount_input.setText(amount)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    txn_id = page.busy_txn
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    return txn_id


def status_text(window) -> str:
    return window.findChild(object, "receiptStatus").text()


def qr_of(txn_id: str) -> bytes:
    return b"1P0" + txn_id.encode()


def test_printer_off_never_blocks_or_loses_the_sale_and_offers_reprint(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "P-1", 5000)
    terminal.receipts.config = PrinterConfig(connection="network", address="127.0.0.1:1", timeout_s=1)
    sign_in(qtbot, terminal)
    txn = charge(qtbot, terminal, "P-1", "12.50")
    assert "Approved: ¥12.50 charged" in terminal.sale_page.result_label.text()
    assert ledger.balance("P-1") == 3750 and terminal.engine.outbox.get(txn).applied
    qtbot.waitUntil(lambda: "Receipt not printed" in status_text(terminal), timeout=10_000)
    status = terminal.findChild(object, "receiptStatus")
    assert status_text(terminal) == "Receipt not printed: printer offline"
    assert "The sale itself is done." in status.toolTip() and "Check it, then reprint." in status.toolTip()
    reprint = terminal.findChild(object, "reprintLastButton")
    assert reprint.isEnabled()
    # the printer is back (here: the device file of a USB printer on Linux)
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device))
    qtbot.mouseClick(reprint, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: status_text(terminal) == "Receipt printed.", timeout=10_000)
    printed = device.read_bytes()                     # its first slip: never printed, so no REPRINT
    assert qr_of(txn) in printed and b"REPRINT" not in printed and "¥37.50".encode("gb18030") in printed
    assert ledger.balance("P-1") == 3750                  # a reprint moves no money


def test_every_applied_operation_prints_and_declines_do_not(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "Q-1", 5000)
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device), drawer_kick=True)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)   # may top up
    sale = charge(qtbot, terminal, "Q-1", "20.00")
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 1, timeout=10_000)
    charge(qtbot, terminal, "Q-1", "999.00")               # declined: no slip
    terminal.sale_page.start_operation("credit", "Q-1", 1000)
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 2, timeout=10_000)
    assert device.read_bytes().endswith(CD_KICK_2)            # the cash drawer opens after a cash top-up
    approve(qtbot, terminal, SUPERVISOR2, SUPERVISOR2_PIN)     # a supervisor never approves their own refund
    terminal.sale_page.start_operation("refund", "Q-1", 500, original_txn_id=sale, approved_by=SUPERVISOR2)
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 3, timeout=10_000)
    assert [r.kind for r in terminal.receipts.sent] == ["deduct", "credit", "refund"]
    assert [r.balance_after_minor for r in terminal.receipts.sent] == [3000, 4000, 4500]
    assert terminal.receipts.sent[2].original_txn_id == sale
    assert status_text(terminal) == "Receipt printed."
    assert terminal.receipts.sent[1].context.cashier_id == SUPERVISOR
    # reprint a receipt picked in the shift's history (not the last one)
    table = terminal.sale_page.history_table
    row = next(r for r in range(table.rowCount()) if table.txn_at(r) == sale)
    table.selectRow(row)
    qtbot.mouseClick(terminal.findChild(object, "reprintLastButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 4, timeout=10_000)
    again = device.read_bytes()                               # each slip is one open-write-close
    assert qr_of(sale) in again and b"*** REPRINT ***" in again and "¥30.00".encode("gb18030") in again
    assert CD_KICK_2 not in again and qr_of(terminal.receipts.sent[2].txn_id) not in again


def test_a_hanging_printer_does_not_hold_up_the_next_sale(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "R-1", 5000)
    fifo = tmp_path / "printer.fifo"
    os.mkfifo(fifo)                  # opening it for writing blocks until someone reads
    terminal.receipts.config = PrinterConfig(connection="file", address=str(fifo))
    sign_in(qtbot, terminal)
    received = bytearray()

    def read_two_slips():            # until two slips (two paper cuts) have come through
        while received.count(b"\x1dV") < 2:
            with open(fifo, "rb") as device:
                received.extend(device.read())
    reader = threading.Thread(target=read_two_slips, daemon=True)
    try:
        first = charge(qtbot, terminal, "R-1", "1.00")
        assert status_text(terminal) == "Printing the receipt…"
        second = charge(qtbot, terminal, "R-1", "2.00")     # the till goes on
        assert ledger.balance("R-1") == 4700 and terminal.engine.outbox.get(second).applied
        assert terminal.receipts.worker.busy and terminal.receipts.sent == []
    finally:
        reader.start()                                      # the printer wakes up
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 2, timeout=10_000)
    reader.join(timeout=10)
    assert qr_of(first) in received and qr_of(second) in received     # neither slip was lost


def test_a_completed_sale_prints_and_a_hold_does_not(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "S-1", 5000)
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device), paper_mm=58)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    hold = page.start_operation("hold", "S-1", 3000)
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    assert terminal.receipts.last is None                         # a hold moves no money: no slip
    page.start_operation("capture", "S-1", 2500, original_txn_id=hold.txn_id)
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 1, timeout=10_000)
    slip = terminal.receipts.sent[0]
    assert (slip.kind, slip.amount_minor, slip.balance_after_minor) == ("capture", 2500, 2500)
    printed = device.read_bytes()
    assert b"SALE (COMPLETED HOLD)" in printed and qr_of(slip.txn_id) in printed   # the UI language here
