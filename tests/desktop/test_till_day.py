"""A day at the till (issue 13), driven through the objectName contract with real key
and mouse events against the real Redis: dialogs keep their errors on Enter, the
result panel never shows another customer's result, scans are recognised wherever
the focus is, confirmations and permissions, keyboard-only operation, the keypad in
the dialogs, the IME's full stop, declined rows, one pending charge blocks only its
account, and a start without a display."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QPushButton, QTableView, QWidget

from desktop.settings import TerminalSettings

from .conftest import (CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, approve, close_shift, open_account, sign_in,
                       stays_true, visible_window)
from .proxy import FaultProxy

ROOT = Path(__file__).resolve().parents[2]
ENTER = Qt.Key.Key_Return


def child(window, name: str, kind=QWidget):
    found = window.findChild(kind, name)
    assert found is not None, name
    return found


def result(window) -> str:
    return child(window, "resultLabel", QLabel).text()


def wait_idle(qtbot, window):
    qtbot.waitUntil(lambda: window.sale_page.busy_txn is None, timeout=5000)


def focused() -> QWidget | None:
    return QApplication.focusWidget()


def scan(qtbot, code: str, delay_ms: int = -1, suffix=ENTER) -> None:
    """A keyboard-wedge scanner: the code typed into whatever has the focus, then the
    suffix key, 2 ms apart by the window system's stamps (so a loaded test machine cannot
    stretch a scan into typing); with `delay_ms` >= 0, real key clicks that far apart."""
    target = focused()
    assert target is not None
    if delay_ms < 0:
        scan_with_timestamps(code, 2, suffix)
        return
    qtbot.keyClicks(target, code, delay=delay_ms)
    qtbot.keyClick(focused(), suffix, delay=delay_ms)


def scan_with_timestamps(code: str, gap_ms: int, suffix=ENTER) -> None:
    """A scanner sending a key every `gap_ms`, as the window system stamps the key presses
    (X11 does): exact whatever the load of the machine running the test."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    special = {"-": Qt.Key.Key_Minus, ".": Qt.Key.Key_Period, "_": Qt.Key.Key_Underscore,
               ":": Qt.Key.Key_Colon}
    suffix_text = {Qt.Key.Key_Return: "\r", Qt.Key.Key_Enter: "\r", Qt.Key.Key_Tab: "\t"}.get(suffix, "")
    stamp = 1_000_000
    for ch in [*code, None]:
        key = suffix if ch is None else special.get(ch) or Qt.Key(ord(ch.upper()))
        text = suffix_text if ch is None else ch
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text)
            event.setTimestamp(stamp)
            QApplication.sendEvent(focused(), event)
        stamp += gap_ms


def type_like_a_person(qtbot, widget, text: str) -> None:
    qtbot.keyClicks(widget, text, delay=150)


def activate(qtbot, window) -> None:
    """Back to the main window after a dialog (the window system does this on a real
    display; offscreen, the test asks for it)."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)


def charge_typed(qtbot, window, account: str, amount: str) -> None:
    """Look the account up (scanned), type the amount, Enter; wait for the answer."""
    activate(qtbot, window)
    child(window, "accountInput").setFocus()
    scan(qtbot, account)
    qtbot.waitUntil(lambda: child(window, "accountInput").text() == account, timeout=3000)
    amount_input = child(window, "amountInput", QLineEdit)
    amount_input.setText(amount)
    amount_input.setFocus()
    qtbot.keyClick(amount_input, ENTER)
    wait_idle(qtbot, window)


def select_row_of(window, txn_id: str) -> None:
    table = child(window, "historyTable", QTableView)
    for row in range(table.rowCount()):
        if table.txn_at(row) == txn_id:
            table.selectRow(row)
            return
    raise AssertionError(txn_id)


def last_op(window):
    return window.engine.outbox.ops_of_shift(window.shift.shift_id)[-1]


# ---------------------------------------------------------------- 1. Enter in a dialog

def test_enter_after_a_wrong_supervisor_pin_keeps_the_refund_dialog_open(qtbot, terminal, ledger):
    open_account(ledger, "EN-0001", 5000)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "EN-0001", "30.00")
    select_row_of(terminal, last_op(terminal).txn_id)
    qtbot.mouseClick(child(terminal, "refundButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("refundDialog")
    assert dialog is not None
    supervisor = child(dialog, "supervisorInput", QLineEdit)
    pin = child(dialog, "supervisorPinInput", QLineEdit)
    supervisor.setFocus()
    qtbot.keyClicks(supervisor, SUPERVISOR)
    pin.setFocus()
    qtbot.keyClicks(pin, "1111")
    qtbot.keyClick(pin, ENTER)
    qtbot.waitUntil(lambda: "wrong" in child(dialog, "refundMessage", QLabel).text(), timeout=5000)
    assert dialog.isVisible() and dialog.focusWidget() is pin
    # Enter again with the right PIN: the default action, the refund is made
    qtbot.keyClicks(pin, SUPERVISOR_PIN)
    qtbot.keyClick(pin, ENTER)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, terminal)
    assert ledger.balance("EN-0001") == 5000 and "Refunded: ¥30.00" in result(terminal)


def test_enter_after_a_zero_top_up_keeps_the_dialog_open(qtbot, terminal, ledger):
    open_account(ledger, "EN-0002", 100)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    child(terminal, "accountInput", QLineEdit).setText("EN-0002")
    qtbot.mouseClick(child(terminal, "topUpButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("topUpDialog")
    amount = child(dialog, "topUpAmountInput", QLineEdit)
    amount.setFocus()
    qtbot.keyClicks(amount, "0")
    qtbot.keyClick(amount, ENTER)
    assert dialog.isVisible()
    assert child(dialog, "topUpMessage", QLabel).text() == "Amount: must be more than zero"
    assert dialog.focusWidget() is amount
    amount.clear()
    qtbot.keyClicks(amount, "5")
    qtbot.keyClick(amount, ENTER)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, terminal)
    assert ledger.balance("EN-0002") == 600


def test_enter_after_completing_above_the_hold_keeps_the_dialog_open(qtbot, terminal, ledger):
    open_account(ledger, "EN-0003", 10000)
    sign_in(qtbot, terminal)
    child(terminal, "accountInput").setFocus()
    scan(qtbot, "EN-0003")
    child(terminal, "amountInput", QLineEdit).setText("20.00")
    qtbot.mouseClick(child(terminal, "holdButton", QPushButton), Qt.MouseButton.LeftButton)
    wait_idle(qtbot, terminal)
    qtbot.mouseClick(child(terminal, "completeSaleButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("completeSaleDialog")
    amount = child(dialog, "completeAmountInput", QLineEdit)
    amount.setFocus()
    amount.selectAll()
    qtbot.keyClicks(amount, "25.00")
    qtbot.keyClick(amount, ENTER)
    assert dialog.isVisible()
    assert child(dialog, "completeMessage", QLabel).text() == "Amount: at most ¥20.00 (the hold)"
    assert dialog.focusWidget() is amount
    assert ledger.balance("EN-0003") == 10000


# ---------------------------------------------------------------- 2, 4. stale result, stale amount

def test_a_new_card_clears_the_previous_customers_result_and_amount(qtbot, terminal, ledger):
    open_account(ledger, "ST-0001", 5000)
    open_account(ledger, "ST-0002", 100)
    open_account(ledger, "ST-0003", 900)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "ST-0001", "8.00")
    assert "Approved: ¥8.00 charged" in result(terminal)
    child(terminal, "accountInput").setFocus()
    scan(qtbot, "ST-0002")
    qtbot.waitUntil(lambda: "¥1.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    assert result(terminal) == ""                           # not ST-1's "Approved"
    # a decline keeps the amount for the same customer, a new card clears it
    amount = child(terminal, "amountInput", QLineEdit)
    amount.setText("5.00")
    qtbot.keyClick(amount, ENTER)
    wait_idle(qtbot, terminal)
    assert result(terminal).startswith("Declined") and amount.text() == "5.00"
    scan(qtbot, "ST-0003")
    qtbot.waitUntil(lambda: "¥9.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    assert amount.text() == "" and result(terminal) == ""
    assert ledger.balance("ST-0003") == 900


def test_a_refund_of_an_earlier_customer_shows_under_that_customer(qtbot, terminal, ledger):
    open_account(ledger, "RF-0001", 5000)
    open_account(ledger, "RF-0002", 700)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "RF-0001", "20.00")
    charged = last_op(terminal)
    child(terminal, "accountInput").setFocus()
    scan(qtbot, "RF-0002")                               # the next customer is on screen
    qtbot.waitUntil(lambda: "¥7.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    approve(qtbot, terminal)
    terminal.sale_page.start_operation("refund", "RF-0001", 500, original_txn_id=charged.txn_id,
                                       approved_by=SUPERVISOR)
    wait_idle(qtbot, terminal)
    assert "Refunded: ¥5.00" in result(terminal)
    assert child(terminal, "accountInput", QLineEdit).text() == "RF-0001"
    qtbot.waitUntil(lambda: "RF-0001" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)


def test_the_result_panel_follows_the_connection(qtbot, make_terminal, redis_url, redis_db, ledger, registry):
    ledger.init()
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        open_account(ledger, "CN-0001", 5000)
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        proxy.mode = "blackhole"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state == "offline", timeout=10000)
        page = window.sale_page
        page.account_input.setText("CN-0001")
        page.amount_input.setText("1.00")
        qtbot.keyClick(page.amount_input, ENTER)
        assert result(window).startswith("No connection")
        proxy.mode = "pass"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state == "online", timeout=10000)
        qtbot.waitUntil(lambda: not result(window).startswith("No connection"), timeout=3000)
        assert result(window) == "Connected again: charges can be made."
    finally:
        proxy.close()


# ---------------------------------------------------------------- 3, 5, 6. scans

def test_a_scan_with_the_focus_in_the_history_table_is_not_lost(qtbot, terminal, ledger):
    open_account(ledger, "SC-0001", 5000)
    open_account(ledger, "D-1001", 4200)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "SC-0001", "1.00")
    table = child(terminal, "historyTable", QTableView)
    table.setFocus()
    table.selectRow(0)
    scan(qtbot, "D-1001")
    qtbot.waitUntil(lambda: "¥42.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    assert child(terminal, "accountInput", QLineEdit).text() == "D-1001"
    # the next amount goes to the new customer
    amount = child(terminal, "amountInput", QLineEdit)
    assert focused() is amount
    qtbot.keyClicks(amount, "2")
    qtbot.keyClick(amount, ENTER)
    wait_idle(qtbot, terminal)
    assert (ledger.balance("D-1001"), ledger.balance("SC-0001")) == (4000, 4900)


def test_a_scan_replaces_what_the_account_field_holds(qtbot, terminal, ledger):
    open_account(ledger, "RP-0001", 100)
    open_account(ledger, "RP-0002", 700)
    sign_in(qtbot, terminal)
    account = child(terminal, "accountInput", QLineEdit)
    account.setText("RP-0001")
    account.setFocus()
    account.setCursorPosition(len("RP-0001"))            # clicked into the field, cursor at the end
    scan(qtbot, "RP-0002")
    qtbot.waitUntil(lambda: "¥7.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    assert account.text() == "RP-0002"


@pytest.mark.parametrize("gap_ms", [1, 50])
def test_scanners_from_1_to_50_ms_per_key_and_letters(qtbot, terminal, ledger, gap_ms):
    open_account(ledger, "D-1002", 300)
    sign_in(qtbot, terminal)
    amount = child(terminal, "amountInput", QLineEdit)
    amount.setFocus()
    scan_with_timestamps("D-1002", gap_ms)            # lands in the amount field: still a card
    qtbot.waitUntil(lambda: "¥3.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    assert child(terminal, "accountInput", QLineEdit).text() == "D-1002" and amount.text() == ""
    assert terminal.engine.outbox.pending_count() == 0 and ledger.balance("D-1002") == 300


def test_a_person_typing_is_not_a_scan(qtbot, terminal, ledger):
    open_account(ledger, "HU-0001", 100000)
    sign_in(qtbot, terminal)
    child(terminal, "accountInput").setFocus()
    scan(qtbot, "HU-0001")
    amount = child(terminal, "amountInput", QLineEdit)
    qtbot.waitUntil(lambda: focused() is amount, timeout=3000)
    type_like_a_person(qtbot, amount, "123.45")
    qtbot.keyClick(amount, ENTER, delay=150)
    wait_idle(qtbot, terminal)
    assert ledger.balance("HU-0001") == 100000 - 12345


def test_scanner_prefix_and_suffix_come_from_the_settings(qtbot, terminal, ledger, tmp_path):
    from desktop.scanner import ScannerConfig
    settings = TerminalSettings(tmp_path / "t.ini")
    settings.q.setValue("scanner/prefix", "~")
    settings.q.setValue("scanner/suffix", "tab")
    settings.q.setValue("scanner/max_key_gap_ms", "80")
    config = ScannerConfig.from_settings(settings)
    assert config == ScannerConfig(prefix="~", suffix="tab", max_key_gap_ms=80, min_chars=6)
    terminal.scan_detector.config = config
    open_account(ledger, "PX-100", 500)
    open_account(ledger, "PX-200", 600)
    sign_in(qtbot, terminal)
    table = child(terminal, "historyTable", QTableView)
    table.setFocus()
    scan(qtbot, "~PX-100", suffix=Qt.Key.Key_Tab)
    qtbot.waitUntil(lambda: "¥5.00" in child(terminal, "balanceLabel", QLabel).text(), timeout=5000)
    table.setFocus()
    scan(qtbot, "PX-200", suffix=Qt.Key.Key_Tab)       # no prefix: not a scan with this setting
    stays_true(qtbot, lambda: child(terminal, "accountInput", QLineEdit).text() == "PX-100", 300)


# ---------------------------------------------------------------- 15. one pending charge

def test_one_pending_charge_blocks_only_its_account_and_its_end_is_shown(qtbot, make_terminal, redis_url, redis_db,
                                                                         ledger, registry):
    ledger.init()
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        for account, balance in (("PD-0000", 100), ("PD-0001", 10000), ("PD-0002", 3000)):
            open_account(ledger, account, balance)
        window = make_terminal(proxy.url(redis_db), retry_interval_ms=3_600_000)   # we decide when it retries
        sign_in(qtbot, window)
        page = window.sale_page
        page.account_input.setText("PD-0000")             # the eviction check is done: next on the wire is the script
        page.amount_input.setText("0.01")
        page.charge()
        wait_idle(qtbot, window)
        proxy.mode = "drop_replies"
        page.account_input.setText("PD-0001")
        page.amount_input.setText("25.00")
        qtbot.keyClick(page.amount_input, ENTER)
        qtbot.waitUntil(lambda: page.result_label.property("tone") == "checking", timeout=10000)
        # The engine's retry has not come round yet (as if the outage went on for this one
        # charge): hold it back until the next customer has been served.
        window.engine._resolving = True
        proxy.mode = "pass"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state == "online", timeout=10000)
        assert window.engine.pending_count == 1
        # the next customer is served meanwhile
        page.account_input.setText("PD-0002")
        page.amount_input.setText("10.00")
        qtbot.keyClick(page.amount_input, ENTER)
        qtbot.waitUntil(lambda: "Approved: ¥10.00 charged" in result(window), timeout=10000)
        assert ledger.balance("PD-0002") == 2000
        # PD-1 itself still waits
        page.account_input.setText("PD-0001")
        page.amount_input.setText("25.00")
        qtbot.keyClick(page.amount_input, ENTER)
        assert "still being checked" in result(window)
        page.new_sale()
        window.engine._resolving = False
        window.engine._retry_pending()                # the retry timer's turn
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
        notice = child(window, "noticeLabel", QLabel)
        qtbot.waitUntil(lambda: notice.isVisible() and "PD-0001" in notice.text(), timeout=3000)
        assert notice.text() == "Checked: Charge ¥25.00 for PD-0001: Approved"
        assert ledger.balance("PD-0001") == 7500
    finally:
        proxy.close()


# ---------------------------------------------------------------- 16. no display

@pytest.mark.parametrize("display", [None, ":97"])
def test_no_display_exits_with_a_sentence_not_a_qt_abort(tmp_path, display):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["CASHIER_TERMINAL_TOKEN"] = "T1.none"
    if display:
        env["DISPLAY"] = display
    done = subprocess.run([sys.executable, "-m", "desktop", "--gateway-url", "http://127.0.0.1:1",
                           "--terminal-id", "T1", "--data-dir", str(tmp_path), "--config", str(tmp_path / "t.ini")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert done.stderr.startswith("cashier-terminal: no display") and "xcb" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- 7. close shift

def test_close_shift_is_confirmed_with_its_totals(qtbot, terminal, ledger):
    open_account(ledger, "CS-0001", 5000)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "CS-0001", "12.50")
    qtbot.mouseClick(child(terminal, "closeShiftButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("closeShiftDialog")
    assert dialog is not None
    summary = child(dialog, "closeShiftSummary", QLabel).text()
    assert "Charge: 1 · ¥12.50" in summary and "Net: ¥12.50" in summary
    assert terminal.engine.outbox.current_shift() is not None          # nothing closed yet
    qtbot.mouseClick(child(dialog, "closeShiftCancelButton", QPushButton), Qt.MouseButton.LeftButton)
    assert terminal.shift is not None and terminal.stack.currentWidget() is terminal.sale_page
    report = close_shift(qtbot, terminal)
    assert terminal.engine.outbox.current_shift() is None
    assert f"by {CASHIER}" in report.view.toPlainText()


def test_another_cashier_needs_a_supervisor_to_close_the_shift(qtbot, terminal, ledger, registry):
    registry.add("c2", "Zhao Li", "2222")
    sign_in(qtbot, terminal)                     # c1 opens the shift
    terminal.sign_out()
    sign_in(qtbot, terminal, "c2", "2222")      # c2 joins it
    dialog = terminal.close_shift()
    confirm = child(dialog, "closeShiftConfirmButton", QPushButton)
    child(dialog, "closeShiftCountedInput", QLineEdit).setText("0")       # the drawer counted
    qtbot.mouseClick(confirm, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and child(dialog, "closeShiftMessage", QLabel).text() == "Supervisor id: must not be empty"
    child(dialog, "supervisorInput", QLineEdit).setText(SUPERVISOR)
    child(dialog, "supervisorPinInput", QLineEdit).setText("0000")
    qtbot.mouseClick(confirm, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in child(dialog, "closeShiftMessage", QLabel).text(), timeout=5000)
    assert terminal.engine.outbox.current_shift() is not None
    report = close_shift(qtbot, terminal, (SUPERVISOR, SUPERVISOR_PIN))
    assert report.report.shift.closed_by == f"c2+{SUPERVISOR}"
    assert f"by c2, approved by {SUPERVISOR}" in report.view.toPlainText()


# ---------------------------------------------------------------- 8. confirmations

def test_release_hold_and_large_amounts_are_confirmed(qtbot, terminal, ledger):
    open_account(ledger, "LG-0001", 500000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    child(terminal, "accountInput").setFocus()
    scan(qtbot, "LG-0001")
    amount = child(terminal, "amountInput", QLineEdit)
    amount.setText("30.00")
    qtbot.mouseClick(child(terminal, "holdButton", QPushButton), Qt.MouseButton.LeftButton)
    wait_idle(qtbot, terminal)
    qtbot.mouseClick(child(terminal, "releaseHoldButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("confirmDialog")
    assert "Release the hold of ¥30.00 on account LG-0001" in child(dialog, "confirmText", QLabel).text()
    qtbot.mouseClick(child(dialog, "confirmNoButton", QPushButton), Qt.MouseButton.LeftButton)
    stays_true(qtbot, lambda: ledger.available("LG-0001") == 497000, 200)
    # a large amount: confirmed with the amount in words
    amount.setText("1500.50")
    qtbot.keyClick(amount, ENTER)
    dialog = visible_window("confirmDialog")
    text = child(dialog, "confirmText", QLabel).text()
    assert "¥1,500.50" in text and "one thousand five hundred yuan and fifty fen" in text
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    stays_true(qtbot, lambda: terminal.engine.outbox.pending_count() == 0 and ledger.balance("LG-0001") == 500000, 200)
    qtbot.keyClick(amount, ENTER)
    dialog = visible_window("confirmDialog")
    qtbot.mouseClick(child(dialog, "confirmYesButton", QPushButton), Qt.MouseButton.LeftButton)
    wait_idle(qtbot, terminal)
    assert ledger.balance("LG-0001") == 500000 - 150050
    # at the threshold: no question
    page.amount_input.setText("1000.00")
    qtbot.keyClick(page.amount_input, ENTER)
    wait_idle(qtbot, terminal)
    assert ledger.balance("LG-0001") == 500000 - 150050 - 100000


def test_the_large_amount_threshold_is_a_setting(tmp_path):
    settings = TerminalSettings(tmp_path / "t.ini")
    assert settings.large_amount_minor == 100000
    settings.q.setValue("confirm/large_amount_minor", "50000")
    assert settings.large_amount_minor == 50000
    settings.q.setValue("confirm/large_amount_minor", "lots")
    assert settings.large_amount_minor == 100000


# ---------------------------------------------------------------- 9. settings

def test_settings_need_a_supervisor_and_show_the_values_in_use(qtbot, make_terminal, redis_url, ledger, registry,
                                                               tmp_path):
    ledger.init()
    settings = TerminalSettings(tmp_path / "t.ini")
    settings.save("STORED", ["https://stored.example:8470"], "en", token="STORED.token")
    window = make_terminal(redis_url, terminal_id="T5", settings=settings)    # as under the demo: options
    qtbot.waitUntil(lambda: window.engine.state == "online", timeout=5000)
    qtbot.mouseClick(child(window, "settingsButton", QPushButton), Qt.MouseButton.LeftButton)
    assert visible_window("settingsDialog") is None
    gate = visible_window("supervisorDialog")
    child(gate, "supervisorInput", QLineEdit).setText(CASHIER)
    child(gate, "supervisorPinInput", QLineEdit).setText(CASHIER_PIN)
    qtbot.keyClick(child(gate, "supervisorPinInput"), ENTER)
    qtbot.waitUntil(lambda: "not a supervisor" in child(gate, "supervisorMessage", QLabel).text(), timeout=5000)
    assert visible_window("settingsDialog") is None
    child(gate, "supervisorInput", QLineEdit).setText(SUPERVISOR)
    child(gate, "supervisorPinInput", QLineEdit).setText(SUPERVISOR_PIN)
    qtbot.keyClick(child(gate, "supervisorPinInput"), ENTER)
    qtbot.waitUntil(lambda: visible_window("settingsDialog") is not None, timeout=5000)
    dialog = visible_window("settingsDialog")
    assert child(dialog, "terminalIdInput", QLineEdit).text() == "T5"
    assert child(dialog, "gatewayUrlInput", QLineEdit).text() == window.engine.gateway_urls[0]
    assert child(dialog, "terminalTokenInput", QLineEdit).text() == ""      # the credential is never shown
    # only the language: saved without a connection test, the connection settings untouched
    save = child(dialog, "saveSettingsButton", QPushButton)
    dialog.language_box.setCurrentIndex(2)
    assert save.isEnabled()
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    again = TerminalSettings(tmp_path / "t.ini")
    assert (again.language, again.terminal_id, again.gateway_urls, again.token) == (
        "zh_CN", "STORED", ["https://stored.example:8470"], "STORED.token")


# ---------------------------------------------------------------- 10. own refund

def test_a_supervisor_cannot_approve_their_own_refund(qtbot, terminal, ledger):
    open_account(ledger, "OW-0001", 5000)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    charge_typed(qtbot, terminal, "OW-0001", "20.00")
    select_row_of(terminal, last_op(terminal).txn_id)
    qtbot.mouseClick(child(terminal, "refundButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("refundDialog")
    child(dialog, "supervisorInput", QLineEdit).setText(SUPERVISOR)
    child(dialog, "supervisorPinInput", QLineEdit).setText(SUPERVISOR_PIN)
    qtbot.mouseClick(child(dialog, "refundConfirmButton", QPushButton), Qt.MouseButton.LeftButton)
    stays_true(qtbot, lambda: dialog.isVisible() and terminal.engine.outbox.pending_count() == 0, 300)
    assert "cannot approve their own refund" in child(dialog, "refundMessage", QLabel).text()
    assert ledger.balance("OW-0001") == 3000
    assert [op.kind for op in terminal.engine.outbox.ops_of_shift(terminal.shift.shift_id)] == ["deduct"]


# ---------------------------------------------------------------- 12, 13. keyboard and keypad

def test_keyboard_only_shortcuts_and_tab_out_of_the_history(qtbot, terminal, ledger):
    open_account(ledger, "KB-0001", 5000)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    for name, key in (("newSaleButton", "(Esc)"), ("refundButton", "(F5)"), ("topUpButton", "(F6)"),
                      ("closeShiftButton", "(F8)"), ("chargeButton", "(F12)"), ("holdButton", "(F9)")):
        assert key in child(terminal, name, QPushButton).text(), name
    charge_typed(qtbot, terminal, "KB-0001", "3.00")
    table = child(terminal, "historyTable", QTableView)
    table.setFocus()
    table.selectRow(0)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert focused() is not table                          # Tab leaves the table
    table.selectRow(0)
    qtbot.keyClick(focused(), Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: visible_window("refundDialog") is not None, timeout=3000)
    qtbot.keyClick(visible_window("refundDialog"), Qt.Key.Key_Escape)
    qtbot.keyClick(focused() or terminal, Qt.Key.Key_F6)
    qtbot.waitUntil(lambda: visible_window("topUpDialog") is not None, timeout=3000)
    qtbot.keyClick(visible_window("topUpDialog"), Qt.Key.Key_Escape)
    qtbot.keyClick(focused() or terminal, Qt.Key.Key_Escape)       # next customer
    assert child(terminal, "accountInput", QLineEdit).text() == "" and result(terminal) == ""
    qtbot.keyClick(focused() or terminal, Qt.Key.Key_F8)
    qtbot.waitUntil(lambda: visible_window("closeShiftDialog") is not None, timeout=3000)
    qtbot.keyClicks(child(visible_window("closeShiftDialog"), "closeShiftCountedInput", QLineEdit), "0")
    qtbot.keyClick(visible_window("closeShiftDialog"), ENTER)
    qtbot.waitUntil(lambda: terminal.shift is None, timeout=3000)


def test_refund_and_top_up_dialogs_have_the_keypad(qtbot, terminal, ledger):
    open_account(ledger, "KP-0001", 5000)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    child(terminal, "accountInput", QLineEdit).setText("KP-0001")
    qtbot.mouseClick(child(terminal, "topUpButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("topUpDialog")
    for key in ("1", "2", "point", "5"):
        qtbot.mouseClick(child(dialog, f"key_{key}", QPushButton), Qt.MouseButton.LeftButton)
    assert child(dialog, "topUpAmountInput", QLineEdit).text() == "12.5"
    qtbot.mouseClick(child(dialog, "topUpConfirmButton", QPushButton), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)   # once the promotions are known
    wait_idle(qtbot, terminal)
    assert ledger.balance("KP-0001") == 6250
    charge_typed(qtbot, terminal, "KP-0001", "10.00")
    charged = last_op(terminal)
    assert (charged.kind, charged.applied) == ("deduct", True), charged
    select_row_of(terminal, charged.txn_id)
    assert child(terminal, "refundButton", QPushButton).isEnabled()
    qtbot.mouseClick(child(terminal, "refundButton", QPushButton), Qt.MouseButton.LeftButton)
    dialog = visible_window("refundDialog")
    amount = child(dialog, "refundAmountInput", QLineEdit)
    amount.setFocus()
    qtbot.mouseClick(child(dialog, "key_clear", QPushButton), Qt.MouseButton.LeftButton)
    qtbot.mouseClick(child(dialog, "key_4", QPushButton), Qt.MouseButton.LeftButton)
    assert amount.text() == "4"
    child(dialog, "supervisorPinInput", QLineEdit).setFocus()
    for key in SUPERVISOR_PIN:
        qtbot.mouseClick(child(dialog, f"key_{key}", QPushButton), Qt.MouseButton.LeftButton)
    assert child(dialog, "supervisorPinInput", QLineEdit).text() == SUPERVISOR_PIN and amount.text() == "4"


# ---------------------------------------------------------------- 14. 。, declined rows

def test_the_ime_full_stop_is_a_decimal_mark(qtbot, terminal, ledger):
    open_account(ledger, "IM-0001", 5000)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "IM-0001", "12。50")
    assert ledger.balance("IM-0001") == 3750


def test_declined_rows_are_distinct_from_debits(qtbot, terminal, ledger):
    from desktop.sale import ROW_TONE_ROLE
    open_account(ledger, "DR-0001", 100)
    sign_in(qtbot, terminal)
    charge_typed(qtbot, terminal, "DR-0001", "0.50")
    charge_typed(qtbot, terminal, "DR-0001", "6.00")           # declined: not enough money
    table = child(terminal, "historyTable", QTableView)
    declined, approved = table.model().index(0, 3), table.model().index(1, 3)
    assert (declined.data(), approved.data()) == ("¥6.00", "-¥0.50")
    assert (declined.data(ROW_TONE_ROLE), approved.data(ROW_TONE_ROLE)) == ("declined", "applied")
    colour = lambda index: (index.data(Qt.ItemDataRole.ForegroundRole) or QBrush()).color()  # noqa: E731
    assert colour(declined) != colour(approved) and declined.data(Qt.ItemDataRole.FontRole).strikeOut()
