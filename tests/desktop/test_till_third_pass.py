"""Issue 26 (the till, third pass): money never goes to a customer who is not on screen,
dialogs open with the right field focused and Enter doing the right thing, the
customer display never takes the keyboard. Offscreen pytest-qt, real Redis (db 3)."""
from __future__ import annotations

from dataclasses import replace

from desktop.receipts.model import Receipt, ReceiptContext, plain_text

ZH = ReceiptContext("星光便利店", "", "T1", "c1", "李娜", "zh_CN")
EN = replace(ZH, shop_name="Starlight Store", language="en")


# ---------------------------------------------------------------- item 4: the 退卡 slip

def _close_slip(ctx) -> str:
    receipt = Receipt("T1-x-0123456789abcdef0123456789abcdef", "close", "M-1002", 23000, 0,
                      1_796_000_000_000, ctx, principal_delta_minor=-23000, bonus_delta_minor=-2000)
    return plain_text(receipt, 48)


def test_close_slip_pays_out_the_principal_and_forfeits_the_bonus_on_its_own_line():
    text = _close_slip(EN)
    paid = [line for line in text.splitlines() if line.startswith("Paid out")]
    assert len(paid) == 1 and paid[0].endswith("¥230.00")
    assert "of which" not in text                      # the bonus was never paid out
    forfeited = [line for line in text.splitlines() if line.startswith("Bonus forfeited")]
    assert len(forfeited) == 1 and forfeited[0].endswith("¥20.00")
    zh = _close_slip(ZH)
    assert "其中赠送" not in zh and "其中本金" not in zh
    assert any(line.startswith("赠送金额作废") and line.endswith("¥20.00") for line in zh.splitlines())


# ---------------------------------------------------------------- item 1: edit without Enter

def test_editing_the_account_without_enter_clears_it_and_charges_nobody(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in, stays_true
    open_account(ledger, "M-1002", 5000)
    open_account(ledger, "M-1004", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    qtbot.keyClicks(page.account_input, "M-1002")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "M-1002", timeout=5000)
    assert "M-1002" in page.balance_label.text()
    # the cashier edits the field to another account, and never presses Enter there
    page.account_input.setFocus()
    page.account_input.end(False)
    qtbot.keyClick(page.account_input, Qt.Key.Key_Backspace)
    qtbot.keyClick(page.account_input, "4")
    assert page.account_input.text() == "M-1004"
    assert "M-1002" not in page.balance_label.text()          # the old account is off screen
    page.amount_input.setFocus()
    qtbot.keyClicks(page.amount_input, "1")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    stays_true(qtbot, lambda: page.busy_txn is None and page.history_table.rowCount() == 0, 500)
    assert ledger.balance("M-1002") == 5000 and ledger.balance("M-1004") == 5000
    assert "look it up" in page.result_label.text()
    assert not terminal.engine.unresolved()
    # looked up and shown: now it may be charged
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "M-1004", timeout=5000)
    page.amount_input.setText("1")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ledger.balance("M-1004") == 4900, timeout=5000)
    assert ledger.balance("M-1002") == 5000


def _keys_to_focus(qtbot, dialog, *keys) -> None:
    """Real key events where the keyboard focus is in `dialog`, as a person types them."""
    for key in keys:
        target = dialog.focusWidget() or dialog
        if isinstance(key, str) and len(key) > 1:
            qtbot.keyClicks(target, key)
        else:
            qtbot.keyClick(target, key)


def _opened(qtbot, dialog) -> None:
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    qtbot.wait(50)                                  # the dialog's own first-field focus has run


# ---------------------------------------------------------------- item 2: the pick list's arrows

def test_pick_list_has_the_focus_on_row_one_so_down_down_enter_picks_row_three(qtbot):
    from types import SimpleNamespace

    from PySide6.QtCore import Qt

    from desktop.members import MemberPickDialog
    matches = [SimpleNamespace(account_id=f"M-20{i}", holder_name=f"张{i}", phone=f"1390000000{i}",
                               balance_minor=100 * i, bonus_minor=0, status="active") for i in (1, 2, 3)]
    dialog = MemberPickDialog("张", matches)
    qtbot.addWidget(dialog)
    picked = []
    dialog.picked.connect(picked.append)
    dialog.open()
    _opened(qtbot, dialog)
    assert dialog.focusWidget() is dialog.list and dialog.list.currentRow() == 0
    _keys_to_focus(qtbot, dialog, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Return)
    assert picked == ["M-203"]


# ---------------------------------------------------------------- item 6: first field focused

def test_refund_and_supervisor_dialogs_open_on_their_first_field_and_the_pin_is_masked(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLineEdit

    from desktop.dialogs import SupervisorDialog
    from .conftest import SUPERVISOR, open_account, sign_in
    open_account(ledger, "F-6", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("F-6")
    page.amount_input.setText("30.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.busy_txn is None and page.history_table.rowCount() == 1, timeout=5000)
    page.history_table.selectRow(0)
    qtbot.mouseClick(page.refund_button, Qt.MouseButton.LeftButton)
    dialog = terminal.refund_dialog
    _opened(qtbot, dialog)
    assert dialog.focusWidget() is dialog.amount_input
    _keys_to_focus(qtbot, dialog, "12", Qt.Key.Key_Tab, SUPERVISOR, Qt.Key.Key_Tab, "9876")
    assert dialog.amount_input.text() == "12"                  # typed over the prefilled amount
    assert dialog.supervisor_input.text() == SUPERVISOR and dialog.pin_input.text() == "9876"
    assert dialog.pin_input.echoMode() == QLineEdit.EchoMode.Password
    dialog.reject()
    supervisor = SupervisorDialog(terminal.engine, "Settings", terminal)
    supervisor.open()
    _opened(qtbot, supervisor)
    assert supervisor.focusWidget() is supervisor.supervisor_input
    _keys_to_focus(qtbot, supervisor, SUPERVISOR, Qt.Key.Key_Tab, "9876")
    assert supervisor.supervisor_input.text() == SUPERVISOR and supervisor.pin_input.text() == "9876"
    supervisor.reject()


# ---------------------------------------------------------------- item 3: the choice stands out

def test_payment_method_and_card_reason_show_the_checked_choice_and_the_confirm_repeats_it(qtbot, terminal,
                                                                                         ledger):
    from PySide6.QtCore import Qt

    from desktop.members import CardDialog
    from desktop.style import STYLE_SHEET
    from .conftest import SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in
    open_account(ledger, "G-3", 1000)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    terminal.open_top_up("G-3")
    dialog = terminal.top_up_dialog
    _opened(qtbot, dialog)
    cash, wechat = dialog.method_buttons["cash"], dialog.method_buttons["wechat"]
    assert cash.text().startswith("✓") and not wechat.text().startswith("✓")
    assert "Cash" in dialog.confirm_button.text()
    qtbot.mouseClick(wechat, Qt.MouseButton.LeftButton)
    assert wechat.text() == "✓ WeChat Pay" and not cash.text().startswith("✓")
    assert dialog.method == "wechat" and "WeChat Pay" in dialog.confirm_button.text()
    assert "Cash" not in dialog.confirm_button.text()
    # not by colour alone: the checked look has its own border and weight
    rule = next(line for line in STYLE_SHEET.splitlines() if ':checked' in line and 'choice' in line)
    assert "border" in rule
    assert wechat.property("role") == "choice"
    dialog.reject()
    view = type("View", (), {"account_id": "G-3", "holder_name": "", "card_no": "C-1"})()
    card = CardDialog(terminal.sale_page, view, terminal)
    card.open()
    _opened(qtbot, card)
    lost = card.reason_buttons["lost"]
    assert lost.text().startswith("✓") and card.reason == "lost"
    other = next(b for r, b in card.reason_buttons.items() if r != "lost")
    qtbot.mouseClick(other, Qt.MouseButton.LeftButton)
    assert other.text().startswith("✓") and not lost.text().startswith("✓")
    assert other.text()[2:] in card.confirm_button.text()
    card.reject()


# ---------------------------------------------------------------- item 5: typed amount vs scan

import pytest  # noqa: E402


@pytest.mark.parametrize("gap_ms", [30, 45, 90])
def test_an_amount_typed_fast_is_charged_not_taken_as_a_scan(qtbot, terminal, ledger, gap_ms):
    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in
    open_account(ledger, "AM-0001", 100000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setFocus()
    qtbot.keyClicks(page.account_input, "AM-0001")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "AM-0001", timeout=5000)
    amount = page.amount_input
    assert amount.hasFocus() or amount.setFocus() is None
    for ch in "100.00":                               # real key events, `gap_ms` apart
        qtbot.keyClick(amount, ch)
        qtbot.wait(gap_ms)
    qtbot.keyClick(amount, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ledger.balance("AM-0001") == 90000, timeout=5000)
    assert page.account_input.text() == "AM-0001"


def test_a_card_scanned_into_the_amount_field_is_still_a_card():
    from desktop.scanner import may_be_amount
    assert may_be_amount("100.00") and may_be_amount("1234567") and may_be_amount("88,50")
    assert not may_be_amount("62220002") and not may_be_amount("D-1002") and not may_be_amount("M1002")


# ---------------------------------------------------------------- item 7: first run, Enter saves

def test_first_run_test_connection_then_enter_saves_and_never_cancels(qtbot, tmp_path, redis_url, ledger, gateways):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDialog

    from desktop.settings import SettingsDialog, TerminalSettings
    ledger.init()
    settings = TerminalSettings(tmp_path / "terminal.ini")
    dialog = SettingsDialog(settings, first_run=True)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    gateway = gateways.for_url(redis_url)
    dialog.terminal_input.setText("T9")
    dialog.url_input.setText(gateway.url)
    dialog.token_input.setText(gateway.enroll("T9"))
    dialog.test_button.setFocus()
    qtbot.keyClick(dialog.test_button, Qt.Key.Key_Space)          # Test connection, from the keyboard
    qtbot.waitUntil(dialog.save_button.isEnabled, timeout=10000)
    assert dialog.focusWidget() is not dialog.cancel_button
    qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    assert dialog.result() == QDialog.DialogCode.Accepted
    again = TerminalSettings(tmp_path / "terminal.ini")
    assert (again.terminal_id, again.gateway_urls, again.token) == ("T9", [gateway.url], gateway.enroll("T9"))


# ---------------------------------------------------------------- item 8: the customer display

def _terminal_with_display(qtbot, tmp_path, till, display_ini: str):
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.settings import TerminalSettings

    from .conftest import FAST
    ini = tmp_path / "terminal.ini"
    ini.write_text("[customer_display]\nenabled=true\nscreen=1\n" + display_ini, encoding="utf-8")
    engine = Engine(till, "T1", tmp_path / "data", **FAST)
    window = MainWindow(engine, TerminalSettings(ini))
    qtbot.addWidget(window)
    return window, engine


def test_customer_display_never_takes_the_keyboard_and_is_off_on_one_screen_unless_placed(
        qtbot, tmp_path, redis_url, till_ledger, ledger, registry):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from desktop.receipts.hooks import apply_settings
    from .conftest import sign_in
    assert len(QGuiApplication.screens()) == 1
    ledger.init()
    window, engine = _terminal_with_display(qtbot, tmp_path, till_ledger(redis_url), "")
    try:
        window.show()
        engine.start()
        display = window.customer_display
        assert display is not None and not display.isVisible()      # one screen, not placed: off
        sign_in(qtbot, window)
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
        page = window.sale_page
        page.account_input.setFocus()
        # placed by hand: a window there, which never takes the focus (a restart shows it again)
        window.receipt_hooks.settings.setValue("customer_display/geometry", "10,10,640,400")
        apply_settings(window, window.receipt_hooks)
        display = window.customer_display
        qtbot.waitUntil(display.isVisible, timeout=3000)
        qtbot.wait(100)
        assert display.windowFlags() & Qt.WindowType.WindowDoesNotAcceptFocus
        assert display.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        assert QApplication.activeWindow() is window and QApplication.focusWidget() is page.account_input
        assert display.geometry().getRect() == (10, 10, 640, 400)
    finally:
        engine.close()
        if window.customer_display is not None:
            window.customer_display.close()


# ---------------------------------------------------------------- item 10: history by card or phone

def test_earlier_sale_history_takes_a_card_number_and_a_phone(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt

    from .conftest import sign_in
    assert ledger.open_account("M-1010", txn_id="open-M-1010", holder_name="张珊", phone="13900001010").applied
    assert ledger.credit("M-1010", 5000, txn_id="fund-M-1010").applied
    assert ledger.issue_card("M-1010", "62221010", txn_id="card-62221010").applied
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("M-1010")
    page.amount_input.setText("3.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ledger.balance("M-1010") == 4700, timeout=5000)
    qtbot.mouseClick(terminal.findChild(object, "earlierSaleButton"), Qt.MouseButton.LeftButton)
    dialog = terminal.earlier_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    for typed in ("62221010", "13900001010"):
        dialog.recent = []
        dialog.table.clear_rows()
        dialog.account_input.setText(typed)
        qtbot.keyClick(dialog.account_input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: dialog._reading == 0 and dialog.table.rowCount() > 0, timeout=5000)
        assert dialog.account_input.text() == "M-1010"
        assert any(op.kind == "deduct" and op.amount_minor == 300 for op in dialog.recent)
    assert "phone" in dialog.account_input.placeholderText()
    dialog.reject()


# ---------------------------------------------------------------- item 11: Printer… needs a supervisor

def test_printer_settings_need_a_supervisor(qtbot, tmp_path, redis_url, till_ledger, ledger, registry):
    from PySide6.QtCore import Qt

    from .conftest import CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, sign_in
    ledger.init()
    window, engine = _terminal_with_display(qtbot, tmp_path, till_ledger(redis_url), "")
    try:
        window.show()
        engine.start()
        sign_in(qtbot, window)
        qtbot.mouseClick(window.findChild(object, "receiptSettingsButton"), Qt.MouseButton.LeftButton)
        qtbot.wait(100)
        assert window.receipt_settings_dialog is None                 # not without a supervisor
        supervisor = window.receipt_hooks.supervisor_dialog
        assert supervisor is not None and supervisor.isVisible()
        supervisor.supervisor_input.setText(CASHIER)                  # a cashier cannot approve
        supervisor.pin_input.setText(CASHIER_PIN)
        qtbot.mouseClick(supervisor.confirm_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: supervisor.message.text() not in ("", "Checking the supervisor PIN…"), timeout=5000)
        assert window.receipt_settings_dialog is None
        supervisor.supervisor_input.setText(SUPERVISOR)
        supervisor.pin_input.setText(SUPERVISOR_PIN)
        qtbot.mouseClick(supervisor.confirm_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.receipt_settings_dialog is not None, timeout=5000)
        qtbot.waitUntil(window.receipt_settings_dialog.isVisible, timeout=3000)
        window.receipt_settings_dialog.reject()
    finally:
        engine.close()
        if window.customer_display is not None:
            window.customer_display.close()


# ---------------------------------------------------------------- item 12: close shift, the keypad

def test_close_shift_supervisor_dialog_has_the_keypad(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    from desktop.report import CloseShiftDialog
    from .conftest import SUPERVISOR, SUPERVISOR_PIN, sign_in
    sign_in(qtbot, terminal)
    dialog = CloseShiftDialog(terminal.engine, terminal._shift_report(terminal.shift), terminal.cashier,
                              needs_supervisor=True, parent=terminal)
    approved = []
    dialog.closeConfirmed.connect(approved.append)
    dialog.open()
    _opened(qtbot, dialog)
    assert dialog.focusWidget() is dialog.supervisor_input
    _keys_to_focus(qtbot, dialog, SUPERVISOR, Qt.Key.Key_Tab)
    assert dialog.focusWidget() is dialog.pin_input
    for key in SUPERVISOR_PIN:                                  # tapped on the on-screen keypad
        button = dialog.findChild(QPushButton, f"key_{key}")
        assert button is not None and button.isVisible()
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert dialog.pin_input.text() == SUPERVISOR_PIN and dialog.supervisor_input.text() == SUPERVISOR
    dialog.counted_input.setText("0")                          # the drawer counted
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: approved == [SUPERVISOR], timeout=5000)


# ---------------------------------------------------------------- item 13: a scan fills, never submits

def _scan_into(field, code: str, gap_ms: int = 5) -> None:
    """A keyboard-wedge scanner: the code into `field`, a key every `gap_ms` as the window
    system stamps them, then Enter."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication
    special = {"-": Qt.Key.Key_Minus}
    stamp = 2_000_000
    for ch in code + "\r":
        key = Qt.Key.Key_Return if ch == "\r" else special.get(ch) or Qt.Key(ord(ch.upper()))
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, ch)
            event.setTimestamp(stamp)
            QApplication.sendEvent(field, event)
        stamp += gap_ms


def test_a_card_scanned_into_the_member_dialogs_fills_the_field_and_does_not_submit(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt

    from desktop.members import CardDialog, NewMemberDialog
    from .conftest import SUPERVISOR, SUPERVISOR_PIN, sign_in, stays_true
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)            # may open accounts without approval
    page = terminal.sale_page
    dialog = NewMemberDialog(page, needs_supervisor=False, parent=terminal)
    dialog.open()
    _opened(qtbot, dialog)
    dialog.holder_input.setText("蒋七")
    dialog.card_input.setFocus()
    _scan_into(dialog.card_input, "C-1301")
    assert dialog.card_input.text() == "C-1301"
    stays_true(qtbot, lambda: dialog.isVisible() and page.busy_txn is None and not terminal.engine.unresolved(), 300)
    assert not ledger.resolve_card("C-1301").active
    qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)         # the cashier's own Enter: open it
    qtbot.waitUntil(lambda: ledger.resolve_card("C-1301").active, timeout=5000)
    qtbot.waitUntil(lambda: terminal.outcome_dialog is not None and terminal.outcome_dialog.isVisible(),
                    timeout=5000)
    terminal.outcome_dialog.accept()
    view = type("View", (), {"account_id": dialog.account_id, "holder_name": "蒋七", "card_no": "C-1301"})()
    card = CardDialog(page, view, terminal)
    card.open()
    _opened(qtbot, card)
    assert card.focusWidget() is card.new_input
    _scan_into(card.new_input, "C-1302")
    assert card.new_input.text() == "C-1302"
    assert card.focusWidget() is card.supervisor_input               # on to the next field to fill
    stays_true(qtbot, lambda: card.isVisible() and card.message.text() == "", 300)
    card.reject()


# ---------------------------------------------------------------- the new words, in zh_CN

def test_the_new_texts_are_translated(qapp):
    from PySide6.QtCore import QCoreApplication

    from desktop import i18n
    from desktop.texts import refusal_words
    try:
        i18n.install("zh_CN")
        assert refusal_words("not_looked_up").startswith("未收款")
        assert QCoreApplication.translate("SalePage", "Press Enter to look up %1") == "按回车键查询 %1"
        assert QCoreApplication.translate("EarlierSaleDialog", "Card, phone or account number") == "卡号、手机号或账户号"
        assert "主管" in QCoreApplication.translate("ReceiptBar", "The receipt and printer settings need a supervisor.")
    finally:
        i18n.install("en")


# ---------------------------------------------------------------- item 18: keys for Earlier sale and Reprint

def test_f3_opens_earlier_sale_and_f4_reprints_the_last_receipt(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from .conftest import open_account, sign_in
    open_account(ledger, "K-18", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    bar = terminal.receipt_hooks.bar
    assert "(F3)" in bar.earlier_button.text() and "(F4)" in bar.reprint_button.text()
    page.account_input.setText("K-18")
    page.amount_input.setText("2.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: terminal.receipts.last is not None, timeout=5000)
    terminal.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is terminal, timeout=3000)
    page.account_input.setFocus()
    shown = []
    bar.reprint_last = lambda: shown.append("reprint")            # what the button runs, watched
    bar.reprint_button.clicked.disconnect()
    bar.reprint_button.clicked.connect(bar.reprint_last)
    qtbot.keyClick(page.account_input, Qt.Key.Key_F4)
    assert shown == ["reprint"]
    qtbot.keyClick(page.account_input, Qt.Key.Key_F3)
    qtbot.waitUntil(lambda: terminal.earlier_dialog is not None and terminal.earlier_dialog.isVisible(), timeout=3000)
    terminal.earlier_dialog.reject()


# ---------------------------------------------------------------- item 18: notices go with their customer

def test_notices_clear_when_the_next_customer_comes(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in
    open_account(ledger, "N-1", 5000)
    open_account(ledger, "N-2", 5000)
    sign_in(qtbot, terminal)
    page, bar = terminal.sale_page, terminal.receipt_hooks.bar
    page.account_input.setText("N-1")
    page.amount_input.setText("1.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: terminal.receipts.last is not None and page.busy_txn is None, timeout=5000)
    page.show_notice("Checked: Charge ¥25.00 for N-0: Approved")
    bar._show("printed", terminal.receipts.last)
    assert bar.status_label.text() == "Receipt printed."
    page.account_input.setText("N-2")                 # the next customer
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "N-2", timeout=5000)
    assert page.notice_label.text() == "" and bar.status_label.text() == ""
    page.show_notice("Checked: Charge ¥25.00 for N-0: Approved")
    qtbot.keyClick(page.account_input, Qt.Key.Key_Escape)        # Next customer (Esc)
    assert page.notice_label.text() == ""


# ---------------------------------------------------------------- item 18: a test print looks like a test

def test_the_printer_test_print_is_a_test_slip_dated_today(qtbot, tmp_path, redis_url, till_ledger, ledger,
                                                           registry):
    from datetime import datetime

    from PySide6.QtCore import Qt

    from .conftest import sign_in
    from .test_receipts_settings import approve_as_supervisor
    ledger.init()
    window, engine = _terminal_with_display(qtbot, tmp_path, till_ledger(redis_url), "")
    try:
        window.show()
        engine.start()
        sign_in(qtbot, window)
        qtbot.mouseClick(window.findChild(object, "receiptSettingsButton"), Qt.MouseButton.LeftButton)
        approve_as_supervisor(qtbot, window)
        dialog = window.receipt_settings_dialog
        device = tmp_path / "lp0"
        device.write_bytes(b"")
        dialog.connection_box.setCurrentIndex(dialog.connection_box.findData("file"))
        dialog.address_input.setText(str(device))
        dialog.shop_name_input.setText("星光便利店")
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.message.text() == "The test slip was sent to the printer.", timeout=10_000)
        data = device.read_bytes()
        assert b"TEST PRINT" in data and b"not a sale" in data        # the slip's language: the UI's (en)
        assert b"SALE" not in data and b"Amount" not in data and b"1970-" not in data
        assert datetime.now().strftime("%Y-%m-%d").encode() in data
        dialog.reject()
    finally:
        engine.close()
        if window.customer_display is not None:
            window.customer_display.close()


# ---------------------------------------------------------------- item 14: the newest row stays in view

def test_the_history_keeps_the_newest_row_in_view(qtbot, terminal, ledger):
    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in
    open_account(ledger, "H-14", 100_000)
    sign_in(qtbot, terminal)
    terminal.resize(1024, 768)
    page, table = terminal.sale_page, terminal.sale_page.history_table
    for n in range(1, 10):
        page.account_input.setText("H-14")
        page.amount_input.setText(f"{n}.00")
        qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: page.busy_txn is None and table.rowCount() == n, timeout=5000)
    table.scrollToBottom()
    table.selectRow(table.rowCount() - 1)                 # the cashier picked an old charge down the list
    assert table.verticalScrollBar().value() > 0
    page.account_input.setText("H-14")
    page.amount_input.setText("10.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.busy_txn is None and table.rowCount() == 10, timeout=5000)
    top = table.visualRect(table.model().index(0, 0))
    assert table.viewport().rect().contains(top.topLeft())   # the newest row is on screen


def test_a_small_screen_opens_the_window_maximised(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    from desktop.engine import Engine
    from desktop.main_window import MainWindow

    from .conftest import FAST, unreachable_ledger
    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 1280, 772))   # 1280x800, a panel
    engine = Engine(unreachable_ledger(), "T1", tmp_path / "data", **FAST)
    window = MainWindow(engine)
    qtbot.addWidget(window)
    try:
        from desktop import app
        import inspect
        assert "show_on_screen" in inspect.getsource(app.main)       # the start uses it
        window.show_on_screen()
        qtbot.waitUntil(window.isVisible, timeout=3000)
        assert window.isMaximized()
    finally:
        engine.close()


# ---------------------------------------------------------------- item 18: printer choices translated

def test_printer_connection_choices_are_words_and_translated(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from desktop import i18n
    from desktop.receipts.printer_settings import PrinterSettingsDialog
    from desktop.receipts.service import ReceiptService
    q = QSettings(str(tmp_path / "t.ini"), QSettings.Format.IniFormat)
    service = ReceiptService("T1", settings=q)
    dialog = PrinterSettingsDialog(q, service)
    qtbot.addWidget(dialog)
    box = dialog.connection_box
    texts = {box.itemData(i): box.itemText(i) for i in range(box.count())}
    assert texts["none"] == "No printer" and texts["file"].startswith("Device file")
    assert box.findData("file") >= 0                              # the values stay the settings' own
    try:
        i18n.install("zh_CN")
        qtbot.waitUntil(lambda: box.itemText(box.findData("none")) != "No printer", timeout=3000)
        texts = {box.itemData(i): box.itemText(i) for i in range(box.count())}
        assert texts["none"] == "不使用打印机" and texts["serial"] == "串口" and texts["network"] == "网络（TCP）"
    finally:
        i18n.install("en")
