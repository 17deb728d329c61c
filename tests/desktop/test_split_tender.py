"""Split tender at the till (issue 31 items 1, 2, 5): the card pays part of the bill and
the rest is paid in cash (F1) or by WeChat Pay (Insert), one ledger record of both; the
cash handed over and the change shown large; a declined card leg records nothing and the
screen says the customer still owes the whole bill; the sale survives an unknown outcome
(re-sent with the same txn id, applied once)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from .conftest import open_account, sign_in
from .test_holds import look_up, wait_idle
from .test_terminal import _select_row_of
from core.journal_codec import read_range


def split(qtbot, window, account: str, bill: str, method: str = "cash"):
    page = window.sale_page
    look_up(qtbot, window, account)
    page.amount_input.setText(bill)
    (page.f1 if method == "cash" else page.ins).activated.emit()
    dialog = window.split_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    return dialog


def pay(qtbot, window, dialog):
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, window)
    [op] = [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == "sale"][-1:]
    return op


def sales_journal(ledger):
    return [e for p in ledger.partitions for _, e in read_range(ledger.client, p.journal) if e["kind"] == "sale"]


def test_rest_in_cash_with_change(qtbot, terminal, ledger):
    open_account(ledger, "SP-1", 3850)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-1", "52.00")
    assert dialog.card_input.text() == "38.50" and dialog.tendered_input.text() == "13.50"
    assert "13.50" in dialog.rest_label.text() and "0.00" in dialog.change_label.text()
    # large as shown on screen (the style sheet's size, not only a font the code set)
    for big in (dialog.change_label, dialog.rest_label, dialog.tendered_input):
        assert big.fontInfo().pixelSize() >= 2 * dialog.summary.fontInfo().pixelSize(), big.objectName()
    dialog.tendered_input.setText("20.00")
    dialog.tendered_input.textEdited.emit("20.00")
    assert "6.50" in dialog.change_label.text()
    op = pay(qtbot, terminal, dialog)
    assert op.applied and op.amount_minor == 3850 and op.balance_after_minor == 0
    assert op.details == {"tenders": {"cash": 1350}, "total_minor": 5200, "change_minor": 650}
    [e] = sales_journal(ledger)
    assert (e["amt"], e["tn"], e["tot"], e["chg"], e["term"]) == ("-3850", "cash:1350", "5200", "650", "T1")
    panel = terminal.sale_page.result_label.text()
    assert "Paid" in panel and "Change" in panel and "6.50" in panel


def test_rest_by_wechat_is_one_key_and_enter(qtbot, terminal, ledger):
    open_account(ledger, "SP-2", 1000)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-2", "30.00", "wechat")
    assert not dialog.tendered_input.isVisible() and dialog.method() == "wechat"
    op = pay(qtbot, terminal, dialog)
    assert op.applied and op.details["tenders"] == {"wechat": 2000} and ledger.balance("SP-2") == 0
    assert [e["tn"] for e in sales_journal(ledger)] == ["wechat:2000"]


@pytest.mark.parametrize("method", ["alipay", "bank_card", "other"])
def test_the_other_methods_are_one_tap_away(qtbot, terminal, ledger, method):
    open_account(ledger, "SP-3", 500)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-3", "8.00", "wechat")
    qtbot.mouseClick(dialog.method_buttons[method], Qt.MouseButton.LeftButton)
    op = pay(qtbot, terminal, dialog)
    assert op.applied and op.details["tenders"] == {method: 300}


def test_a_declined_card_leg_records_nothing_and_says_what_is_owed(qtbot, terminal, ledger):
    open_account(ledger, "SP-4", 1000)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-4", "52.00")
    ledger.deduct("SP-4", 900, txn_id="elsewhere-1")         # the balance drops after the look-up
    op = pay(qtbot, terminal, dialog)
    assert op.status == "INSUFFICIENT_FUNDS" and not op.applied
    assert sales_journal(ledger) == [] and ledger.balance("SP-4") == 100
    panel = terminal.sale_page.result_label.text()
    assert "still owes" in panel and "52.00" in panel


def test_the_card_part_is_checked_before_sending(qtbot, terminal, ledger):
    open_account(ledger, "SP-5", 10_000)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-5", "52.00")
    assert dialog.card_input.text() == "51.99"              # the card could pay it all: Charge does that
    dialog.card_input.setText("52.00")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "less than the bill" in dialog.message.text()
    dialog.card_input.setText("40.00")
    dialog.card_input.textEdited.emit("40.00")
    dialog.tendered_input.setText("5.00")
    dialog.tendered_input.textEdited.emit("5.00")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "at least the rest" in dialog.message.text()
    assert sales_journal(ledger) == []


def test_the_receipt_shows_every_tender_and_the_change(qtbot, terminal, ledger):
    from desktop.receipts.model import ReceiptContext, plain_text, receipt_for_op
    open_account(ledger, "SP-6", 3850)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-6", "52.00")
    dialog.tendered_input.setText("20.00")
    dialog.tendered_input.textEdited.emit("20.00")
    op = pay(qtbot, terminal, dialog)
    slip = plain_text(receipt_for_op(op, ReceiptContext(language="en")), 32)
    lines = [" ".join(row.split()) for row in slip.splitlines()]
    for line in ("Total ¥52.00", "Card ¥38.50", "Cash ¥13.50", "cash handed over ¥20.00", "Change ¥6.50"):
        assert line in lines, slip
    zh = plain_text(receipt_for_op(op, ReceiptContext(language="zh_CN")), 32)
    assert "消费小票（组合支付）" in zh and "找零" in zh and "储值卡" in zh


def refund_selected(qtbot, window, amount: str | None = None):
    from .conftest import SUPERVISOR, SUPERVISOR_PIN
    page = window.sale_page
    _select_row_of(window, dialog_sale_txn(window))
    assert page.refund_button.isEnabled()
    qtbot.mouseClick(page.refund_button, Qt.MouseButton.LeftButton)
    dialog = window.refund_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    if amount is not None:
        dialog.amount_input.setText(amount)
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, window)
    return [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == "tender_refund"][-1]


def test_refunds_of_a_split_sale_each_tender_back_partial_then_full(qtbot, terminal, ledger):
    open_account(ledger, "SP-7", 3000)
    sign_in(qtbot, terminal)
    dialog = split(qtbot, terminal, "SP-7", "40.00", "wechat")
    assert pay(qtbot, terminal, dialog).applied                    # card 30.00 + WeChat 10.00
    partial = refund_selected(qtbot, terminal, "20.00")            # half: in proportion
    assert partial.applied and partial.details == {"card_minor": 1500, "tenders": {"wechat": 500}}
    assert ledger.balance("SP-7") == 1500
    rest = refund_selected(qtbot, terminal)                        # the rest, as the dialog offers it
    assert rest.applied and rest.details == {"card_minor": 1500, "tenders": {"wechat": 500}}
    assert ledger.balance("SP-7") == 3000
    assert ledger.sale_tenders("SP-7", dialog_sale_txn(terminal)) == {"card": 0, "wechat": 0}
    journal = [e for p in ledger.partitions for _, e in read_range(ledger.client, p.journal)]
    assert [(e["kind"], e.get("m"), e.get("ta")) for e in journal if e["kind"] == "tender_refund"] == [
        ("tender_refund", "wechat", "500"), ("tender_refund", "wechat", "500")]


def dialog_sale_txn(window):
    return [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == "sale"][-1].txn_id


def test_an_earlier_split_sale_is_refunded_by_its_receipt_number(qtbot, make_terminal, redis_url, ledger, registry):
    from .conftest import SUPERVISOR, SUPERVISOR_PIN
    from .test_refund_earlier import open_earlier, scan
    ledger.init()
    open_account(ledger, "SP-8", 5_000)
    sale_txn = "T1-s-" + "a" * 32
    assert ledger.sale("SP-8", 4_000, {"cash": 1_000, "alipay": 1_000}, txn_id=sale_txn, total_minor=6_000,
                       terminal_id="T1").applied
    assert ledger.tender_refund("SP-8", 400, txn_id="T1-t-x", original_txn_id=sale_txn, method="cash").applied
    t2 = make_terminal(redis_url, "T2")
    sign_in(qtbot, t2)
    dialog = open_earlier(qtbot, t2)
    scan(qtbot, dialog.number_input, sale_txn)
    qtbot.waitUntil(lambda: dialog.loaded is not None, timeout=5000)
    assert dialog.loaded.kind == "sale" and dialog.loaded.tenders == "cash:600;alipay:1000"
    qtbot.mouseClick(dialog.refund_button, Qt.MouseButton.LeftButton)
    refund = dialog.refund_dialog
    assert refund.split_left == {"card": 4_000, "cash": 600, "alipay": 1_000}
    assert refund.amount_input.text() == "56.00"
    refund.supervisor_input.setText(SUPERVISOR)
    refund.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: t2.sale_page.busy_txn is None, timeout=5000)
    [op] = [op for op in t2.engine.outbox.ops_of_shift(t2.shift.shift_id) if op.kind == "tender_refund"]
    assert op.applied and op.details == {"card_minor": 4_000, "tenders": {"cash": 600, "alipay": 1_000}}
    assert ledger.balance("SP-8") == 5_000
    assert ledger.sale_tenders("SP-8", sale_txn) == {"card": 0, "cash": 0, "alipay": 0}


@pytest.mark.parametrize("balance, status", [(5_000, "APPLIED"), (1_000, "INSUFFICIENT_FUNDS")])
def test_an_unknown_outcome_is_re_sent_with_the_same_txn_id_then_applied_or_declined(
        qtbot, make_terminal, redis_url, redis_db, ledger, registry, balance, status):
    import os
    from .proxy import FaultProxy
    ledger.init()
    open_account(ledger, "SP-9", 5_000)
    open_account(ledger, "SP-0", 100)
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        page = window.sale_page
        page.account_input.setText("SP-0")              # warm up: the policy check is behind us
        page.amount_input.setText("0.01")
        page.charge()
        wait_idle(qtbot, window)
        dialog = split(qtbot, window, "SP-9", "60.00")   # the card shows 50.00 available
        if balance < 5_000:
            ledger.deduct("SP-9", 5_000 - balance, txn_id="elsewhere-2")    # spent elsewhere meanwhile
        proxy.mode = "drop_replies"
        qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.result_label.property("tone") == "checking", timeout=10000)
        assert "Do NOT charge again" in page.result_label.text()
        proxy.mode = "pass"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
        wait_idle(qtbot, window)
        [op] = [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == "sale"]
        assert (op.status, op.replayed) == (status, True)
        sales = sales_journal(ledger)
        if status == "APPLIED":
            assert [e["txn"] for e in sales] == [op.txn_id] and ledger.balance("SP-9") == 0
        else:
            assert sales == [] and ledger.balance("SP-9") == 1_000
            assert "still owes" in page.result_label.text() and "60.00" in page.result_label.text()
    finally:
        proxy.close()
