"""The customer display: off by default; turned on in the terminal's settings it shows
the shop's name when idle, the amount while the cashier types it, then the result and
the balance after, in the customer's language (not the cashier's). Real Redis, real
terminal offscreen."""
from __future__ import annotations

from PySide6.QtCore import Qt

from .conftest import open_account, sign_in


def test_off_by_default(terminal):
    assert terminal.customer_display is None


def test_shows_the_amount_then_the_result_and_balance(qtbot, terminal_with_display, ledger):
    window = terminal_with_display
    display = window.customer_display
    assert display is not None and display.isVisible()          # one screen here: a window, placed
    assert (display.shop_label.text(), display.title_label.text()) == ("星光便利店", "欢迎光临")
    open_account(ledger, "D-1", 5000)
    sign_in(qtbot, window)
    page = window.sale_page
    page.account_input.setText("D-1")
    page.amount_input.setFocus()
    qtbot.keyClicks(page.amount_input, "12.5")
    assert (display.title_label.text(), display.amount_label.text()) == ("应付金额", "¥12.50")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: display.state == "result", timeout=5000)
    assert display.title_label.text() == "支付成功"
    assert display.amount_label.text() == "¥12.50" and display.balance_label.text() == "余额 ¥37.50"
    assert ledger.balance("D-1") == 3750
    # a decline: in words the customer understands, and the balance is not shown as paid
    page.account_input.setText("D-1")
    qtbot.keyClicks(page.amount_input, "100")
    assert display.amount_label.text() == "¥100.00"
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: display.title_label.text() == "支付未成功", timeout=5000)
    assert display.balance_label.text() == "余额不足"
    display.show_idle()
    assert display.title_label.text() == "欢迎光临" and display.amount_label.text() == ""


def test_customer_language_is_its_own(qtbot, terminal_with_display, ledger):
    """The cashier works in English; the customer reads Chinese (the setting)."""
    window = terminal_with_display
    assert window.sale_page.charge_button.text().startswith("Charge")
    open_account(ledger, "D-2", 1000)
    sign_in(qtbot, window)
    window.sale_page.start_operation("refund", "D-2", 100, original_txn_id="nothing-here")
    qtbot.waitUntil(lambda: window.sale_page.busy_txn is None, timeout=5000)
    assert window.customer_display.title_label.text() == "退款未成功"     # declined: ORIGINAL_NOT_FOUND
    assert window.customer_display.balance_label.text() == "请咨询收银员"
