"""Issue 31 items 6-8 at the till: a charge answered CONFIRMATION_REQUIRED opens the
member's PIN dialog (the customer display shows the amount to confirm); the PIN typed
there re-sends the SAME txn id and the charge is applied once; a wrong PIN says how many
attempts are left and the fifth locks it (the dialog says a supervisor can reset it);
a member code scanned into the account field finds the member and confirms the next
charge with no PIN asked; the PIN is in no outbox row. Real Redis and gateway, the
terminal offscreen."""
from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt

from core.member_codes import MemberCodes, member_code_text, secret_of_uri
from core.member_pins import MemberPins

from .conftest import FAST, open_account, sign_in, visible_window
from .test_members_till import look_up_member

THRESHOLD = 5_000
PIN, WRONG = "246810", "135791"


def _member(ledger, account_id: str, *, pin: str | None = PIN) -> None:
    open_account(ledger, account_id, 50_000)
    assert ledger.set_member_pin_threshold(THRESHOLD, txn_id=f"adm-mpin-{account_id}").applied
    if pin:
        MemberPins(ledger.client).set_pin(account_id, pin, pin)


def _charge(qtbot, window, account_id: str, amount: str) -> None:
    page = window.sale_page
    look_up_member(qtbot, window, account_id, account_id)
    page.amount_input.setFocus()
    page.amount_input.setText(amount)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)


def _pin_dialog(qtbot, window):
    qtbot.waitUntil(lambda: visible_window("memberPinDialog") is not None, timeout=5000)
    return visible_window("memberPinDialog")


def _type_pin(qtbot, dialog, pin: str) -> None:
    for digit in pin:                                     # on the dialog's own keypad
        qtbot.mouseClick(dialog.keypad.buttons[digit], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)


def _outbox_text(window) -> str:
    db = sqlite3.connect(window.engine.outbox.path)
    try:
        return repr(db.execute("SELECT * FROM ops").fetchall())
    finally:
        db.close()


def test_the_pin_is_asked_and_the_same_charge_applied_once(qtbot, terminal, ledger):
    _member(ledger, "P-1")
    sign_in(qtbot, terminal)
    _charge(qtbot, terminal, "P-1", "60")
    dialog = _pin_dialog(qtbot, terminal)
    assert "¥60.00" in dialog.amount_label.text() and dialog.pin_input.echoMode() == dialog.pin_input.EchoMode.Password
    assert ledger.balance("P-1") == 50_000                     # nothing applied without it
    asked = [op for op in terminal.engine.outbox.ops_of_shift(terminal.sale_page.shift_id) if op.kind == "deduct"]
    assert [op.status for op in asked] == ["CONFIRMATION_REQUIRED"]
    txn = asked[0].txn_id
    _type_pin(qtbot, dialog, PIN)
    qtbot.waitUntil(lambda: ledger.balance("P-1") == 44_000, timeout=5000)
    qtbot.waitUntil(lambda: terminal.sale_page.busy_txn is None, timeout=5000)
    op = terminal.engine.outbox.get(txn)
    assert op.applied and op.status == "APPLIED"                # the same txn id, decided once
    assert [e.txn_id for e in ledger.journal("P-1", count=10) if e.kind == "deduct"] == [txn]
    assert "Paid" in terminal.sale_page.result_label.text() or "¥60.00" in terminal.sale_page.result_label.text()
    assert PIN not in _outbox_text(terminal)                    # never stored
    # below the threshold: no PIN asked
    _charge(qtbot, terminal, "P-1", "10")
    qtbot.waitUntil(lambda: ledger.balance("P-1") == 43_000, timeout=5000)
    assert visible_window("memberPinDialog") is None


def test_wrong_pins_say_the_attempts_left_then_locked(qtbot, terminal, ledger):
    _member(ledger, "P-2")
    sign_in(qtbot, terminal)
    _charge(qtbot, terminal, "P-2", "80")
    words = []
    for _ in range(5):
        dialog = _pin_dialog(qtbot, terminal)
        _type_pin(qtbot, dialog, WRONG)
        qtbot.waitUntil(lambda: visible_window("memberPinDialog") not in (None, dialog), timeout=5000)
        words.append(visible_window("memberPinDialog").message.text())
    assert words[:4] == [f"Wrong PIN: {n} tries left before a lock." for n in (4, 3, 2, 1)]
    locked = visible_window("memberPinDialog")
    assert locked.locked and not locked.confirm_button.isEnabled() and "supervisor" in locked.about.text()
    assert ledger.balance("P-2") == 50_000
    qtbot.mouseClick(locked.cancel_button, Qt.MouseButton.LeftButton)
    assert visible_window("memberPinDialog") is None
    assert MemberPins(ledger.client).locked("P-2")
    # a supervisor resets it at the till (Member… F7): PIN removed, lock lifted
    from .conftest import SUPERVISOR, SUPERVISOR_PIN
    from .test_members_till import open_member_action
    dialog = open_member_action(qtbot, terminal, "pin_reset_button")
    assert dialog.objectName() == "memberPinResetDialog"
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert not MemberPins(ledger.client).locked("P-2") and not MemberPins(ledger.client).has_pin("P-2")


def test_a_scanned_member_code_confirms_the_charge_with_no_pin_asked(qtbot, terminal, ledger):
    _member(ledger, "P-3")
    secret = secret_of_uri(MemberCodes(ledger.client).enrol("P-3"))
    sign_in(qtbot, terminal)
    terminal.sale_page.take_scan(member_code_text(secret, "P-3"))       # the scanner's code
    qtbot.waitUntil(lambda: terminal.sale_page.account_input.text() == "P-3", timeout=3000)
    qtbot.waitUntil(lambda: terminal.sale_page._account is not None
                    and terminal.sale_page._account.account_id == "P-3", timeout=5000)
    page = terminal.sale_page
    page.amount_input.setText("70")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ledger.balance("P-3") == 43_000, timeout=5000)
    assert visible_window("memberPinDialog") is None
    # the code went with that one charge: the next one above the threshold asks again
    _charge(qtbot, terminal, "P-3", "70")
    dialog = _pin_dialog(qtbot, terminal)
    # a code scanned into the dialog confirms it too; the one already used is refused
    dialog.pin_input.setText(member_code_text(secret, "P-3"))
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: visible_window("memberPinDialog") not in (None, dialog), timeout=5000)
    assert "used already" in visible_window("memberPinDialog").message.text()
    assert ledger.balance("P-3") == 43_000


def test_the_customer_display_shows_the_amount_to_confirm(qtbot, terminal_with_display, ledger):
    window = terminal_with_display
    display = window.customer_display
    _member(ledger, "P-4")
    sign_in(qtbot, window)
    _charge(qtbot, window, "P-4", "66.50")
    dialog = _pin_dialog(qtbot, window)
    assert display.state == "confirm"
    assert (display.title_label.text(), display.amount_label.text()) == ("待确认金额", "¥66.50")
    assert "支付密码" in display.balance_label.text()
    _type_pin(qtbot, dialog, PIN)
    qtbot.waitUntil(lambda: display.state == "result", timeout=5000)
    assert display.title_label.text() == "支付成功" and ledger.balance("P-4") == 50_000 - 6_650


def test_the_member_sets_the_pin_twice_at_the_till_then_it_is_asked(qtbot, terminal, ledger):
    from .test_members_till import open_member_action
    _member(ledger, "P-5", pin=None)
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "P-5", "P-5")
    dialog = open_member_action(qtbot, terminal, "pin_button")
    assert dialog.objectName() == "memberPinSetDialog"
    dialog.new_input.setText(PIN)
    dialog.again_input.setText(WRONG)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert "differ" in dialog.message.text() and dialog.isVisible()
    assert not MemberPins(ledger.client).has_pin("P-5")
    dialog.new_input.setText(PIN)
    dialog.again_input.setText(PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    assert MemberPins(ledger.client).verify("P-5", PIN).ok
    assert PIN not in (dialog.new_input.text() + dialog.again_input.text())          # no widget keeps it
    # changing it needs the current one
    dialog = open_member_action(qtbot, terminal, "pin_button")
    dialog.new_input.setText(WRONG)
    dialog.again_input.setText(WRONG)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "current one" in dialog.message.text(), timeout=5000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    _charge(qtbot, terminal, "P-5", "90")
    _type_pin(qtbot, _pin_dialog(qtbot, terminal), PIN)
    qtbot.waitUntil(lambda: ledger.balance("P-5") == 41_000, timeout=5000)


def test_a_supervisor_enrols_the_member_code_and_its_qr_is_shown_once(qtbot, terminal, ledger):
    from core.member_codes import code_key

    from .conftest import SUPERVISOR, SUPERVISOR_PIN
    from .test_members_till import open_member_action
    _member(ledger, "P-6", pin=None)
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "P-6", "P-6")
    dialog = open_member_action(qtbot, terminal, "code_button")
    assert dialog.objectName() == "memberCodeEnrolDialog" and not dialog.qr_label.isVisible()
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText("0000")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in dialog.message.text(), timeout=5000)
    assert not ledger.client.exists(code_key("P-6"))
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.qr_label.isVisible(), timeout=5000)
    assert not dialog.qr_label.pixmap().isNull() and "shown this once" in dialog.about.text()
    secret = ledger.client.hget(code_key("P-6"), "secret")
    assert secret and secret not in _outbox_text(terminal)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)              # Done
    assert not dialog.isVisible() and dialog.qr_label.pixmap().isNull()
    # the code now confirms a charge above the threshold; without it, the dialog asks
    _charge(qtbot, terminal, "P-6", "60")
    pin_dialog = _pin_dialog(qtbot, terminal)
    pin_dialog.pin_input.setText(member_code_text(secret, "P-6"))
    qtbot.mouseClick(pin_dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ledger.balance("P-6") == 44_000, timeout=5000)


def test_the_confirmed_charge_whose_reply_was_lost_is_replayed_without_a_second_pin(
        qtbot, tmp_path, gateways, redis_url, ledger, registry):
    """The PIN send reaches the gateway, which applies the charge, but its reply is lost:
    the engine re-sends the row with the same txn id and no PIN (the PIN went with that
    one send only) and the gateway answers the first decision: applied once, no second
    PIN asked."""
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from gateway.client import GatewayLedger
    from tests.properties.workload import RobustProxy
    ledger.init()
    _member(ledger, "P-7")
    gateway = gateways.for_url(redis_url)
    proxy = RobustProxy(gateway.port, seed=5).start()
    engine = Engine(GatewayLedger([f"http://127.0.0.1:{proxy.port}"], gateway.enroll("T1"), timeout_s=2.0),
                    "T1", tmp_path / "data", **FAST)
    window = MainWindow(engine, None)
    qtbot.addWidget(window)
    window.show()
    engine.start()
    try:
        sign_in(qtbot, window)
        _charge(qtbot, window, "P-7", "75")
        dialog = _pin_dialog(qtbot, window)
        asked = []
        window.member_confirmation.asked.connect(asked.append)
        proxy.drop_reply_probability = 1.0              # the gateway decides; the till never hears
        _type_pin(qtbot, dialog, PIN)
        qtbot.waitUntil(lambda: ledger.balance("P-7") == 42_500, timeout=5000)
        qtbot.waitUntil(lambda: window.sale_page.result_label.property("tone") == "checking", timeout=10000)
        proxy.drop_reply_probability = 0.0
        qtbot.waitUntil(lambda: engine.pending_count == 0, timeout=15000)
        op = [o for o in engine.outbox.ops_of_shift(window.sale_page.shift_id) if o.kind == "deduct"][-1]
        assert op.applied and op.replayed                 # the first decision, replayed
        assert [e.txn_id for e in ledger.journal("P-7", count=10) if e.kind == "deduct"] == [op.txn_id]
        assert ledger.balance("P-7") == 42_500 and not asked and visible_window("memberPinDialog") is None
        assert proxy.dropped_replies >= 1 and not engine._confirmations      # the PIN is held nowhere now
    finally:
        engine.close()
        proxy.close()
