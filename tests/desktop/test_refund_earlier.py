"""Refund of an earlier sale: charged on terminal T1 in one shift, refunded on terminal
T2 in a later shift by scanning the receipt number (a keyboard-wedge scanner types it
and Enter), with the supervisor's PIN, partially, with what is left shown; an account's
recent history from all terminals; clear words outside the window. Real Redis, real
terminals (engine + main window) offscreen."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.history import History

from .conftest import CASHIER, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in


def charge(qtbot, window, account: str, amount: str) -> str:
    page = window.sale_page
    page.account_input.setText(account)
    page.amount_input.setText(amount)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    txn_id = page.busy_txn
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    return txn_id


def open_earlier(qtbot, window):
    qtbot.mouseClick(window.findChild(object, "earlierSaleButton"), Qt.MouseButton.LeftButton)
    dialog = window.earlier_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    return dialog


def scan(qtbot, field, code: str, gap_ms: int = 5) -> None:
    """What a keyboard-wedge scanner does: the code typed into the focused field, a key
    every `gap_ms` as the window system stamps them, then Enter (exact whatever the load
    of the machine running the test)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication
    field.setFocus()
    special = {"-": Qt.Key.Key_Minus, ".": Qt.Key.Key_Period, "_": Qt.Key.Key_Underscore, ":": Qt.Key.Key_Colon}
    stamp = 1_000_000
    for ch in code + "\r":
        key = Qt.Key.Key_Return if ch == "\r" else special.get(ch) or Qt.Key(ord(ch.upper()))
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, ch)
            event.setTimestamp(stamp)
            QApplication.sendEvent(field, event)
        stamp += gap_ms


def test_refund_in_a_later_shift_on_another_terminal_by_scanning_the_receipt(
        qtbot, make_terminal, redis_url, ledger, registry):
    ledger.init()
    open_account(ledger, "E-1", 10_000)
    t1 = make_terminal(redis_url, "T1")
    sign_in(qtbot, t1)
    sale_txn = charge(qtbot, t1, "E-1", "30.00")
    assert ledger.balance("E-1") == 7000
    t1.finish_close_shift()                            # that shift is over (as after its confirmation)

    t2 = make_terminal(redis_url, "T2")
    sign_in(qtbot, t2)                                 # a later shift, elsewhere, another cashier
    assert t2.engine.outbox.get(sale_txn) is None      # T2 never saw this sale
    dialog = open_earlier(qtbot, t2)
    assert dialog.focusWidget() is dialog.number_input      # the scanner's keystrokes land there
    scan(qtbot, dialog.number_input, sale_txn)
    qtbot.waitUntil(lambda: dialog.loaded is not None, timeout=5000)
    assert dialog._reading == 0                        # Enter loaded once (no default button pressed)
    assert "Charge of ¥30.00 on account E-1" in dialog.summary.text() and "terminal T1" in dialog.summary.text()
    assert "at most ¥30.00 can still be refunded" in dialog.summary.text()
    assert dialog.refund_button.isEnabled()
    qtbot.mouseClick(dialog.refund_button, Qt.MouseButton.LeftButton)
    refund = dialog.refund_dialog
    assert refund.amount_input.text() == "30.00"
    refund.amount_input.setText("12.00")               # partial
    refund.supervisor_input.setText(SUPERVISOR)
    refund.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: t2.sale_page.busy_txn is None, timeout=5000)
    assert "Refunded: ¥12.00" in t2.sale_page.result_label.text()
    assert ledger.balance("E-1") == 8200
    assert History(ledger).load(sale_txn).refunded_minor == 1200
    refund_op = [op for op in t2.engine.outbox.ops_of_shift(t2.shift.shift_id) if op.kind == "refund"][0]
    assert (refund_op.original_txn_id, refund_op.approved_by, refund_op.terminal_id) == (sale_txn, SUPERVISOR, "T2")

    # again: what is left is shown, and more than that is refused before anything is sent
    dialog = open_earlier(qtbot, t2)
    scan(qtbot, dialog.number_input, sale_txn)
    qtbot.waitUntil(lambda: dialog.loaded is not None, timeout=5000)
    assert "Refunded so far ¥12.00; at most ¥18.00 can still be refunded." in dialog.summary.text()
    qtbot.mouseClick(dialog.refund_button, Qt.MouseButton.LeftButton)
    refund = dialog.refund_dialog
    assert refund.amount_input.text() == "18.00"
    refund.amount_input.setText("18.01")
    refund.supervisor_input.setText(SUPERVISOR)
    refund.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    assert refund.message.text() == "Amount: at most ¥18.00 can be refunded"
    refund.amount_input.setText("18.00")
    refund.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: t2.sale_page.busy_txn is None, timeout=5000)
    assert ledger.balance("E-1") == 10_000
    dialog = open_earlier(qtbot, t2)
    scan(qtbot, dialog.number_input, sale_txn)
    qtbot.waitUntil(lambda: dialog.loaded is not None, timeout=5000)
    assert "Already refunded in full" in dialog.summary.text() and not dialog.refund_button.isEnabled()


def test_account_history_lists_every_terminal_and_picks_a_sale(qtbot, make_terminal, redis_url, ledger, registry):
    ledger.init()
    open_account(ledger, "H-1", 10_000)
    ledger.deduct("H-1", 500, txn_id="T7-d-elsewhere", terminal_id="T7", cashier_id="c9")
    t1 = make_terminal(redis_url, "T1")
    sign_in(qtbot, t1)
    mine = charge(qtbot, t1, "H-1", "2.00")
    ledger.credit("H-1", 1000, txn_id="T8-c-topup", terminal_id="T8")
    dialog = open_earlier(qtbot, t1)
    dialog.account_input.setText("H-1")
    qtbot.mouseClick(dialog.history_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=5000)
    column = lambda c: [dialog.table.cell(r, c) for r in range(4)]  # noqa: E731
    assert column(6) == ["T8-c-topup", mine, "T7-d-elsewhere", "open-H-1"]      # newest first
    assert column(5)[:3] == ["T8", "T1", "T7"]
    assert column(2)[:3] == ["¥10.00", "-¥2.00", "-¥5.00"]
    dialog.table.selectRow(2)                           # T7's sale: loaded fresh, refundable here
    qtbot.waitUntil(lambda: dialog.loaded is not None and dialog.loaded.txn_id == "T7-d-elsewhere", timeout=5000)
    assert dialog.refund_button.isEnabled() and "terminal T7" in dialog.summary.text()
    dialog.table.selectRow(0)                           # a top-up: nothing to refund
    qtbot.waitUntil(lambda: dialog.loaded is not None and dialog.loaded.txn_id == "T8-c-topup", timeout=5000)
    assert not dialog.refund_button.isEnabled()
    assert "Only charges and completed sales can be refunded." in dialog.summary.text()
    dialog.account_input.setText("bad id{")
    qtbot.mouseClick(dialog.history_button, Qt.MouseButton.LeftButton)
    assert "Account" in dialog.message.text()


def test_outside_the_window_says_what_to_do(qtbot, terminal, ledger):
    open_account(ledger, "W-1", 1000)
    sign_in(qtbot, terminal)
    old = charge(qtbot, terminal, "W-1", "1.00")
    ledger.client.delete(ledger.schema.partition_of("W-1").txn(old))      # what 7 days of TTL do
    dialog = open_earlier(qtbot, terminal)
    scan(qtbot, dialog.number_input, old)
    qtbot.waitUntil(lambda: "last 7 days" in dialog.message.text(), timeout=5000)
    assert "back office" in dialog.message.text() and not dialog.refund_button.isEnabled()
    dialog.number_input.setText("not a receipt {}")
    qtbot.mouseClick(dialog.load_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text().startswith("Receipt number")
    assert ledger.balance("W-1") == 900
    assert CASHIER


def test_a_receipt_scanned_into_the_account_field_opens_it(qtbot, terminal, ledger):
    open_account(ledger, "K-1", 1000)
    sign_in(qtbot, terminal)
    sale = charge(qtbot, terminal, "K-1", "4.00")
    page = terminal.sale_page
    page.account_input.clear()
    scan(qtbot, page.account_input, sale)
    dialog = terminal.earlier_dialog
    qtbot.waitUntil(lambda: dialog is not None and dialog.loaded is not None, timeout=5000)
    assert dialog.loaded.txn_id == sale and dialog.refund_button.isEnabled()
    qtbot.waitUntil(lambda: not terminal.engine.reads.busy, timeout=5000)      # the account look-up answered
    assert page.account_input.text() == "" and page.account_error.text() == ""    # not taken as an account
