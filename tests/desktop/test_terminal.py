"""The terminal against the real Redis: sign in, look up, charge, every decline,
inline input errors, one charge per sale, scanner input, refund with a supervisor
PIN, top-up, shift report and translation."""
from __future__ import annotations

import csv
import re

import pytest
from PySide6.QtCore import Qt

from core import Status
from desktop.main_window import MainWindow

from .conftest import approve, close_shift, CASHIER, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in


def charge(qtbot, window: MainWindow, account: str, amount: str):
    page = window.sale_page
    page.account_input.setText(account)
    page.amount_input.setText(amount)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)


def wait_idle(qtbot, window: MainWindow):
    qtbot.waitUntil(lambda: window.sale_page.busy_txn is None, timeout=5000)


def result_text(window) -> str:
    return window.findChild(object, "resultLabel").text()


def test_object_names_contract(terminal):
    for name in ("accountInput", "amountInput", "chargeButton", "balanceLabel", "resultLabel",
                 "historyTable", "connectionStatus"):
        assert terminal.findChild(object, name) is not None, name


def test_sign_in_wrong_pin_then_right(qtbot, terminal):
    page = terminal.sign_in_page
    page.cashier_input.setText(CASHIER)
    page.pin_input.setText("0000")
    qtbot.mouseClick(page.sign_in_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in page.message.text(), timeout=5000)
    assert "4 tries left" in page.message.text()
    assert terminal.stack.currentWidget() is page
    assert page.pin_input.text() == ""
    page.pin_input.setText("12a4")
    qtbot.mouseClick(page.sign_in_button, Qt.MouseButton.LeftButton)
    assert page.message.text() == "PIN: 4 to 12 digits"
    sign_in(qtbot, terminal)
    assert "Li Na" in terminal.findChild(object, "cashierStatus").text()
    assert terminal.findChild(object, "connectionStatus").text() == "● Connected"
    assert "T1" in terminal.findChild(object, "terminalStatus").text()


def test_look_up_with_scanner_moves_to_amount(qtbot, terminal, ledger):
    open_account(ledger, "62220001", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    qtbot.keyClicks(page.account_input, "62220001")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "¥50.00" in page.balance_label.text(), timeout=5000)
    assert "Active" in page.balance_label.text()
    assert page.amount_input.hasFocus()
    page.account_input.setText("nobody")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "unknown account nobody" in page.account_error.text(), timeout=5000)


def test_look_up_shows_the_holder_name(qtbot, terminal, ledger):
    ledger.open_account("62220009", txn_id="open-62220009", initial_minor=1200, holder_name="张三")
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    qtbot.keyClicks(page.account_input, "62220009")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "¥12.00" in page.balance_label.text(), timeout=5000)
    assert "张三" in page.balance_label.text() and "Active" in page.balance_label.text()


def test_scan_into_amount_field_is_taken_as_account(qtbot, terminal, ledger):
    open_account(ledger, "62220002", 700)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.amount_input.setFocus()
    qtbot.keyClicks(page.amount_input, "62220002")       # a scanner's burst, not a person
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "¥7.00" in page.balance_label.text(), timeout=5000)
    assert page.account_input.text() == "62220002"
    assert page.amount_input.text() == ""
    assert ledger.balance("62220002") == 700                # nothing charged


def test_charge_approved_shows_new_balance_and_history(qtbot, terminal, ledger):
    open_account(ledger, "A-1", 5000)
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "A-1", "12.50")
    wait_idle(qtbot, terminal)
    assert "Approved: ¥12.50 charged" in result_text(terminal)
    assert "New balance ¥37.50" in result_text(terminal)
    assert ledger.balance("A-1") == 3750
    table = terminal.sale_page.history_table
    assert table.rowCount() == 1
    assert [table.cell(0, c) for c in (1, 2, 3, 4, 5, 6)] == \
        ["Charge", "A-1", "-¥12.50", "Approved", "¥37.50", CASHIER]
    assert terminal.sale_page.amount_input.text() == ""       # the next Enter cannot re-charge
    entry = ledger.journal("A-1", count=5)[0]
    assert (entry.kind, entry.amount_minor, entry.terminal_id, entry.cashier_id) == ("deduct", -1250, "T1", CASHIER)


def test_f12_charges(qtbot, terminal, ledger):
    open_account(ledger, "A-2", 1000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("A-2")
    page.amount_input.setText("1")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_F12)
    wait_idle(qtbot, terminal)
    assert ledger.balance("A-2") == 900


@pytest.mark.parametrize("setup, words", [
    ("poor", "Declined: not enough money on the account"),
    ("frozen", "Declined: the account is frozen"),
    ("missing", "Declined: unknown account"),
])
def test_every_decline_in_words(qtbot, terminal, ledger, setup, words):
    if setup != "missing":
        open_account(ledger, "B-1", 100)
    if setup == "frozen":
        assert ledger.freeze("B-1", txn_id="frz-B-1").applied
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "B-1", "5.00")
    wait_idle(qtbot, terminal)
    assert result_text(terminal) == words
    assert terminal.sale_page.result_label.property("tone") == "declined"
    if setup != "missing":
        assert ledger.balance("B-1") == 100
    assert terminal.sale_page.amount_input.text() == "5.00"   # kept, so the cashier can fix it


@pytest.mark.parametrize("typed, message", [
    ("", "Amount: enter an amount, e.g. 12.50"),
    ("1.234", "Amount: at most two decimals (fen)"),
    ("-5", "Amount: must not be negative"),
    ("0.00", "Amount: must be more than zero"),
    ("1000000001", "Amount: too large for one payment"),
    ("12,5.0", "Amount: use digits and one decimal point, e.g. 12.50"),
    ("abc", "Amount: use digits and one decimal point, e.g. 12.50"),
])
def test_bad_amounts_get_inline_messages(qtbot, terminal, ledger, typed, message):
    open_account(ledger, "C-1", 100)
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "C-1", typed)
    assert terminal.sale_page.amount_error.text() == message
    assert terminal.sale_page.busy_txn is None
    assert terminal.engine.outbox.pending_count() == 0
    assert ledger.journal("C-1", count=5)[0].kind == "open"


def test_bad_account_gets_inline_message(qtbot, terminal, ledger):
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "no spaces{}", "1.00")
    assert terminal.sale_page.account_error.text() == "Account: only letters, digits and . _ : - are allowed"


def test_second_charge_for_the_same_sale_cannot_start(qtbot, terminal, ledger):
    open_account(ledger, "D-1", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("D-1")
    page.amount_input.setText("10.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    assert not page.charge_button.isEnabled()
    # A nervous cashier: Enter again, F12, the button: all while the first is in flight.
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_F12)
    page.charge()
    wait_idle(qtbot, terminal)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)      # the amount is cleared now
    assert page.amount_error.text() == "Amount: enter an amount, e.g. 12.50"
    terminal.engine.ops.wait()
    assert ledger.balance("D-1") == 9000
    assert [e.kind for e in ledger.journal("D-1", count=10)] == ["deduct", "open"]


def test_keypad_types_amount(qtbot, terminal, ledger):
    open_account(ledger, "E-1", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("E-1")
    for key in ("1", "2", ".", "5", "back", "0"):
        qtbot.mouseClick(page.keypad.buttons[key], Qt.MouseButton.LeftButton)
    assert page.amount_input.text() == "12.0"
    qtbot.mouseClick(page.charge_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, terminal)
    assert ledger.balance("E-1") == 5000 - 1200


def _select_row_of(window, txn_id):
    table = window.sale_page.history_table
    for row in range(table.rowCount()):
        if table.txn_at(row) == txn_id:
            table.selectRow(row)
            return
    raise AssertionError(txn_id)


def test_refund_needs_supervisor_pin_partial_then_rest(qtbot, terminal, ledger, registry):
    open_account(ledger, "F-1", 5000)
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "F-1", "30.00")
    wait_idle(qtbot, terminal)
    deduct_txn = terminal.sale_page.history_table.txn_at(0)
    _select_row_of(terminal, deduct_txn)
    assert terminal.sale_page.refund_button.isEnabled()
    qtbot.mouseClick(terminal.sale_page.refund_button, Qt.MouseButton.LeftButton)
    dialog = terminal.refund_dialog
    assert dialog.amount_input.text() == "30.00"
    # a cashier who is not a supervisor cannot approve
    registry.add("c2", "Zhao Li", "2222")
    dialog.amount_input.setText("10.00")
    dialog.supervisor_input.setText("c2")
    dialog.pin_input.setText("2222")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "not a supervisor" in dialog.message.text(), timeout=5000)
    # wrong supervisor PIN
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText("1111")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in dialog.message.text(), timeout=5000)
    assert ledger.balance("F-1") == 2000
    # more than was charged: refused inline
    dialog.amount_input.setText("30.01")
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Amount: at most ¥30.00 can be refunded"
    dialog.amount_input.setText("10.00")
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, terminal)
    assert "Refunded: ¥10.00" in result_text(terminal)
    assert ledger.balance("F-1") == 3000
    refund_op = [op for op in terminal.engine.outbox.ops_of_shift(terminal.shift.shift_id) if op.kind == "refund"][0]
    assert refund_op.approved_by == SUPERVISOR and refund_op.original_txn_id == deduct_txn
    # the approval was for that one refund: a second refund asks for the PIN again
    _select_row_of(terminal, deduct_txn)
    qtbot.mouseClick(terminal.sale_page.refund_button, Qt.MouseButton.LeftButton)
    dialog = terminal.refund_dialog
    assert dialog.amount_input.text() == "20.00"             # what is left to refund
    dialog.supervisor_input.setText(SUPERVISOR)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "PIN: enter your PIN"
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, terminal)
    assert ledger.balance("F-1") == 5000


def test_top_up_only_for_permitted_cashiers(qtbot, terminal, ledger):
    open_account(ledger, "G-1", 0)
    sign_in(qtbot, terminal)
    assert not terminal.sale_page.top_up_button.isVisibleTo(terminal)
    terminal.sign_out()
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    assert terminal.sale_page.top_up_button.isVisibleTo(terminal)
    terminal.sale_page.account_input.setText("G-1")
    qtbot.mouseClick(terminal.sale_page.top_up_button, Qt.MouseButton.LeftButton)
    dialog = terminal.top_up_dialog
    assert dialog.account_input.text() == "G-1"
    dialog.amount_input.setText("100")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)   # once the promotions are known
    wait_idle(qtbot, terminal)
    assert "Topped up: ¥100.00 (Cash)" in result_text(terminal)
    assert ledger.balance("G-1") == 10000


def test_shift_report_totals_csv_and_pdf(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "H-1", 100000)
    open_account(ledger, "H-2", 100)
    sign_in(qtbot, terminal)
    for account, amount in (("H-1", "10.00"), ("H-1", "2.50"), ("H-2", "5.00")):   # last one declines
        charge(qtbot, terminal, account, amount)
        wait_idle(qtbot, terminal)
    first = terminal.engine.outbox.ops_of_shift(terminal.shift.shift_id)[0]
    approve(qtbot, terminal)             # the gateway grants the supervisor's approval for one refund
    terminal.sale_page.start_operation("refund", "H-1", 400, original_txn_id=first.txn_id, approved_by=SUPERVISOR)
    wait_idle(qtbot, terminal)
    terminal.sign_out()
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)   # same shift, second cashier
    charge(qtbot, terminal, "H-1", "0.25")
    wait_idle(qtbot, terminal)
    terminal.sale_page.start_operation("credit", "H-2", 1000)
    wait_idle(qtbot, terminal)
    dialog = close_shift(qtbot, terminal)
    report = dialog.report
    assert (report.by_kind["deduct"].count, report.by_kind["deduct"].sum_minor) == (3, 1275)
    assert (report.by_kind["refund"].count, report.by_kind["refund"].sum_minor) == (1, 400)
    assert (report.by_kind["credit"].count, report.by_kind["credit"].sum_minor) == (1, 1000)
    assert report.declined_count == 1
    assert report.net_minor == 875
    assert report.by_cashier[CASHIER]["deduct"].sum_minor == 1250
    assert report.by_cashier[SUPERVISOR]["deduct"].sum_minor == 25
    assert report.by_cashier[CASHIER]["refund"].sum_minor == 400      # approved by the supervisor
    # the ledger agrees with the report
    assert ledger.balance("H-1") == 100000 - 1275 + 400
    dialog.save_csv(tmp_path / "shift.csv")
    rows = list(csv.DictReader(open(tmp_path / "shift.csv", encoding="utf-8-sig")))
    all_deduct = [r for r in rows if r["Cashier"] == "All cashiers" and r["Kind"] == "Charge"][0]
    assert (all_deduct["Count"], all_deduct["Sum (fen)"], all_deduct["Sum (yuan)"]) == ("3", "1275", "12.75")
    net = [r for r in rows if r["Kind"].startswith("Net")][0]
    assert (net["Sum (yuan)"], net["Sum (fen)"]) == ("8.75", "875")
    # readable: local date and time, who closed it; no epoch milliseconds, no internal names
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", net["Opened"]) and net["Closed by"] == SUPERVISOR
    assert not any(re.fullmatch(r"\d{13}", v) or v in ("deduct", "credit", "ALL") for r in rows for v in r.values())
    dialog.save_pdf(tmp_path / "shift.pdf")
    assert (tmp_path / "shift.pdf").read_bytes().startswith(b"%PDF")
    assert "¥12.75" in dialog.view.toPlainText()
    assert terminal.stack.currentWidget() is terminal.sign_in_page
    # the next sign-in opens a new, empty shift
    sign_in(qtbot, terminal)
    assert terminal.shift.shift_id == report.shift.shift_id + 1
    assert terminal.sale_page.history_table.rowCount() == 0


def test_shift_cannot_close_while_a_charge_is_being_checked(qtbot, terminal, ledger):
    open_account(ledger, "I-1", 1000)
    sign_in(qtbot, terminal)
    terminal.engine.state = "offline"     # as if the monitor had just lost Redis
    charge(qtbot, terminal, "I-1", "1.00")
    assert result_text(terminal) == "No connection to the central server: charges are refused until it is back."
    assert terminal.engine.outbox.pending_count() == 0


def test_translation_switch_to_chinese_translates_every_visible_string(qtbot, terminal, ledger):
    import re

    from PySide6.QtWidgets import QAbstractButton, QLabel, QLineEdit

    open_account(ledger, "J-1", 2000)
    sign_in(qtbot, terminal)
    charge(qtbot, terminal, "J-1", "3.00")
    wait_idle(qtbot, terminal)
    # the account's read after the charge has landed (else the balance line still holds the
    # English text of before the charge, until that read answers: a race, not a missing word)
    qtbot.waitUntil(lambda: terminal.sale_page._account is not None, timeout=5000)
    terminal.set_language("zh_CN")
    qtbot.waitUntil(lambda: terminal.sale_page.charge_button.text() == "收款  (F12)", timeout=3000)
    assert "成功" in result_text(terminal) and "¥3.00" in result_text(terminal)
    assert terminal.findChild(object, "connectionStatus").text() == "● 已连接"
    # No English word may be left on screen (ids, amounts, F12, PIN, PDF, CSV are not words to translate).
    allowed = {"F12", "Esc", "PIN", "PDF", "CSV", "Redis", "URL", "Li", "Na", "Wang", "Wei", "T1", "J-1", "c1"}
    texts = []
    for w in terminal.findChildren(QLabel) + terminal.findChildren(QAbstractButton):
        if w.isVisibleTo(terminal) and w.text():
            texts.append(w.text())
    for w in terminal.findChildren(QLineEdit):
        if w.isVisibleTo(terminal):
            texts.append(w.placeholderText())
    table = terminal.sale_page.history_table
    texts += [table.model().headerData(c, Qt.Orientation.Horizontal) for c in range(table.model().columnCount())]
    texts += [table.cell(0, c) for c in range(table.model().columnCount())]
    texts.append(terminal.windowTitle())
    leftovers = {word for t in texts for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}", t)} - allowed
    assert not leftovers, leftovers
    terminal.set_language("en")
    qtbot.waitUntil(lambda: terminal.sale_page.charge_button.text() == "Charge  (F12)", timeout=3000)
