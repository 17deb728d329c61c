"""Cards at the till (issue 25 items 1-3), against the real Redis: a charge of a member
found by card carries the card, so a block made after the look-up declines it (in words,
no money moves); a string that is the card of one member and the account number of
another is never resolved to one: the till explains and shows both to pick from, and the
pick shows the member picked (the card goes with the charge only when the card's owner is
picked); the new words in zh_CN."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget

from .conftest import sign_in, visible_window
from .test_members_till import on_screen, type_and_look_up

ENTER = Qt.Key.Key_Return


def result_text(window) -> str:
    return window.findChild(object, "resultLabel").text()


def charge(qtbot, window, amount: str) -> None:
    page = window.sale_page
    page.amount_input.setText(amount)
    page.charge()
    qtbot.waitUntil(lambda: page.busy_txn is None and result_text(window) != "", timeout=5000)


def test_a_card_blocked_after_the_look_up_does_not_pay(qtbot, terminal, ledger):
    assert ledger.open_account("M-1", txn_id="o-1", initial_minor=5_000).applied
    assert ledger.issue_card("M-1", "C-1", txn_id="i-1").applied
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "C-1")
    qtbot.waitUntil(lambda: on_screen(terminal, "M-1"), timeout=5000)
    assert terminal.sale_page._account.card_no == "C-1"
    # reported stolen at the service desk while the customer stands at this till
    assert ledger.block_card("C-1", txn_id="stolen-1", reason="stolen").applied
    charge(qtbot, terminal, "12.00")
    assert "card is blocked" in result_text(terminal)
    assert ledger.balance("M-1") == 5_000
    [op] = [o for o in terminal.engine.outbox.ops_of_shift(terminal.sale_page.session.shift_id) if o.kind == "deduct"]
    assert op.card_no == "C-1" and op.status == "CARD_BLOCKED"


def test_a_member_typed_by_account_number_is_charged_without_a_card(qtbot, terminal, ledger):
    assert ledger.open_account("M-2", txn_id="o-2", initial_minor=5_000).applied
    assert ledger.issue_card("M-2", "C-2", txn_id="i-2").applied
    assert ledger.block_card("C-2", txn_id="b-2", reason="lost").applied
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "M-2")
    qtbot.waitUntil(lambda: on_screen(terminal, "M-2"), timeout=5000)
    charge(qtbot, terminal, "1.00")
    assert "Approved" in result_text(terminal) and ledger.balance("M-2") == 4_900


def test_an_ambiguous_string_is_explained_and_never_picked_by_the_till(qtbot, terminal, ledger):
    assert ledger.open_account("A1", txn_id="o-a1", initial_minor=5_000, holder_name="张三").applied
    # data from before the fix: card 100200 of A1, and an account 100200 of another member
    part = ledger.schema.partition_of("100200")
    ledger.client.hset(part.card("100200"), mapping={"a": "A1", "st": "active"})
    ledger.client.hset(part.cards, "100200", "A1")
    ledger.client.hset(part.account("100200"), mapping={"bal": "7000", "st": "active", "nm": "李四", "ct": "1"})
    ledger.client.sadd(part.accounts, "100200")
    ledger.rebuild_member_index()
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    type_and_look_up(qtbot, terminal, "100200")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    assert page._account is None                                     # nobody on screen meanwhile
    assert "2 members" in page.balance_label.text() and "ask the customer" in page.balance_label.text()
    dialog = visible_window("memberPickDialog")
    assert "different members" in dialog.title.text()
    rows = dialog.findChild(QListWidget, "memberPickList")
    texts = {rows.item(i).data(Qt.ItemDataRole.UserRole): rows.item(i).text() for i in range(rows.count())}
    assert set(texts) == {"A1", "100200"}
    assert "(its card)" in texts["A1"] and "(its account number)" in texts["100200"]
    row = next(i for i in range(rows.count()) if rows.item(i).data(Qt.ItemDataRole.UserRole) == "100200")
    rows.setCurrentRow(row)
    qtbot.keyClick(rows, ENTER)
    qtbot.waitUntil(lambda: on_screen(terminal, "100200"), timeout=5000)    # shown, not looked up again
    assert "李四" in page.balance_label.text() and page._account.card_no == ""
    charge(qtbot, terminal, "1.00")
    assert ledger.balance("100200") == 6_900 and ledger.balance("A1") == 5_000
    # the card's owner picked: the card goes with the charge
    type_and_look_up(qtbot, terminal, "100200")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    dialog = visible_window("memberPickDialog")
    rows = dialog.findChild(QListWidget, "memberPickList")
    rows.setCurrentRow(next(i for i in range(rows.count()) if rows.item(i).data(Qt.ItemDataRole.UserRole) == "A1"))
    qtbot.keyClick(rows, ENTER)
    qtbot.waitUntil(lambda: on_screen(terminal, "A1"), timeout=5000)
    assert page._account.card_no == "100200"
    charge(qtbot, terminal, "2.00")
    assert ledger.balance("A1") == 4_800


def test_the_new_words_are_translated(qapp):
    from PySide6.QtCore import QCoreApplication

    from desktop import i18n
    from desktop.texts import short_status, status_words
    try:
        i18n.install("zh_CN")
        assert status_words("CARD_BLOCKED", "deduct") == "已拒绝：此卡已停用（挂失或被盗），未收款"
        for status in ("CARD_NO_IS_PHONE", "CARD_NOT_THIS_ACCOUNT", "ACCOUNT_ID_TAKEN", "PHONE_TAKEN"):
            assert status_words(status).startswith(("未完成", "已拒绝")), status
            assert short_status(status, False) != "未执行", status
        assert "会员" in QCoreApplication.translate(
            "SalePage", "“%1” is the card, account number or phone of %2 members: ask the customer which one they are")
        assert QCoreApplication.translate("MemberPickDialog", "(its card)") == "（其卡号）"
    finally:
        i18n.install("en")
