"""Members at the till (issue 14) and the shift's Z record (issue 16), against the real
Redis: look-up by phone, name and pinyin with the pick list (keys and taps), stale
answers dropped, a blocked card refused, a top-up with its method and bonus, a card
replaced (the balance stays, the old card is refused), an account closed with its payout
and ACCOUNT_CLOSED after, a member opened with a card, the shift report's totals by
method and bucket, and the shift close journaled (queued while Redis is away, sent
once it is back). Every assertion on money reads Redis itself."""
from __future__ import annotations

import json
import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QListWidget, QPushButton

from core import Status
from core.shifts import shift_txn_id

from .conftest import CASHIER, SUPERVISOR, SUPERVISOR_PIN, close_shift, sign_in, visible_window
from .proxy import FaultProxy
from core.journal_codec import read_range

ENTER = Qt.Key.Key_Return


def member(ledger, account_id, holder, phone=None, *, principal_minor=0, bonus_minor=0, card=None):
    assert ledger.open_account(account_id, txn_id=f"open-{account_id}", holder_name=holder, phone=phone).applied
    if principal_minor:
        assert ledger.credit(account_id, principal_minor, txn_id=f"fund-{account_id}",
                             bonus_minor=bonus_minor).applied
    if card:
        assert ledger.issue_card(account_id, card, txn_id=f"card-{card}").applied


def type_and_look_up(qtbot, window, text: str) -> None:
    page = window.sale_page
    page.account_input.setFocus()
    page.account_input.setText(text)
    qtbot.keyClick(page.account_input, ENTER)


def on_screen(window, account_id: str) -> bool:
    page = window.sale_page
    return page._account is not None and page._account.account_id == account_id and \
        page.account_input.text() == account_id


def look_up_member(qtbot, window, text: str, account_id: str) -> None:
    """Type a phone, card or id and wait until that member's account is on screen."""
    type_and_look_up(qtbot, window, text)
    qtbot.waitUntil(lambda: on_screen(window, account_id), timeout=5000)


def wait_idle(qtbot, window):
    qtbot.waitUntil(lambda: window.sale_page.busy_txn is None, timeout=5000)


def journal_entries(ledger, kind: str) -> list[dict]:
    out = []
    for part in ledger.partitions:
        out += [f for _, f in read_range(ledger.client, part.journal) if f.get("kind") == kind]
    return out


# ---------------------------------------------------------------- look-up

def test_look_up_by_phone_shows_the_member_with_principal_and_bonus(qtbot, terminal, ledger):
    member(ledger, "M-100", "张三", "138 0013 8000", principal_minor=10000, bonus_minor=2000)
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "13800138000", "M-100")
    text = terminal.sale_page.balance_label.text()
    assert "张三" in text and "Balance ¥120.00" in text
    assert "principal ¥100.00 + bonus ¥20.00" in text


def test_look_up_by_name_with_several_matches_picks_with_the_keys(qtbot, terminal, ledger):
    member(ledger, "M-201", "张三", "13900000001")
    member(ledger, "M-202", "张三丰", "13900000002", principal_minor=500, bonus_minor=200)
    member(ledger, "M-203", "李四", "13900000003")
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "张三")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    dialog = visible_window("memberPickDialog")
    rows = dialog.findChild(QListWidget, "memberPickList")
    ids = [rows.item(i).data(Qt.ItemDataRole.UserRole) for i in range(rows.count())]
    assert sorted(ids) == ["M-201", "M-202"]                  # 李四 is not offered
    texts = {rows.item(i).data(Qt.ItemDataRole.UserRole): rows.item(i).text() for i in range(rows.count())}
    assert "bonus" in texts["M-202"] and "2.00" in texts["M-202"] and "bonus" not in texts["M-201"]
    qtbot.keyClick(rows, Qt.Key.Key_Down)
    wanted = rows.currentItem().data(Qt.ItemDataRole.UserRole)
    qtbot.keyClick(rows, ENTER)
    qtbot.waitUntil(lambda: on_screen(terminal, wanted), timeout=5000)
    assert not dialog.isVisible()


def test_look_up_by_pinyin_initials_picks_with_a_tap(qtbot, terminal, ledger):
    member(ledger, "M-301", "张三", "13700000001", principal_minor=100)
    member(ledger, "M-302", "赵四", "13700000002", principal_minor=200)      # zs as well
    member(ledger, "M-303", "王五", "13700000003")
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "zs")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    rows = visible_window("memberPickDialog").findChild(QListWidget, "memberPickList")
    assert rows.count() == 2
    item = next(rows.item(i) for i in range(rows.count()) if rows.item(i).data(Qt.ItemDataRole.UserRole) == "M-302")
    qtbot.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton, pos=rows.visualItemRect(item).center())
    qtbot.waitUntil(lambda: on_screen(terminal, "M-302"), timeout=5000)
    assert "赵四" in terminal.sale_page.balance_label.text()


def test_a_slow_answer_after_the_cashier_moved_on_is_dropped(qtbot, terminal, ledger):
    member(ledger, "M-401", "张三", "13600000001")
    member(ledger, "M-402", "张三丰", "13600000002")
    member(ledger, "M-403", "钱七", "13600000003", card="C-403")
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("zs")
    page.look_up()                               # its answer is queued to the UI thread ...
    qtbot.keyClicks(page.account_input, "x")     # ... and the cashier types on before it arrives
    terminal.engine.reads.wait()
    QApplication.processEvents()                 # deliver what the workers answered (queued before wait returned)
    assert visible_window("memberPickDialog") is None and page._account is None
    # a pick list answered after another card came on screen changes nothing
    page.account_input.setText("张三")
    page.look_up()
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    dialog = visible_window("memberPickDialog")
    page.take_scan("C-403")                      # another customer's card meanwhile
    qtbot.waitUntil(lambda: on_screen(terminal, "M-403"), timeout=5000)
    dialog.confirm()
    terminal.engine.reads.wait()
    QApplication.processEvents()
    assert on_screen(terminal, "M-403")


def test_a_blocked_card_is_refused_in_words(qtbot, terminal, ledger):
    member(ledger, "M-501", "孙八", "13500000001", principal_minor=3000, card="C-501")
    assert ledger.block_card("C-501", txn_id="block-C-501", reason="lost").applied
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "C-501")
    page = terminal.sale_page
    qtbot.waitUntil(lambda: "blocked" in page.account_error.text(), timeout=5000)
    assert "Card C-501 is blocked (reported lost)" in page.account_error.text()
    assert page._account is None
    page.amount_input.setText("1.00")
    page.charge()                                # the field still holds the card: no account of that id
    wait_idle(qtbot, terminal)
    assert ledger.balance("M-501") == 3000


# ---------------------------------------------------------------- top-up

def test_top_up_with_method_and_bonus(qtbot, terminal, ledger):
    member(ledger, "M-601", "周九", "13400000001", principal_minor=1000, card="C-601")
    assert ledger.add_promotion(10000, 2000, txn_id="promo-100-20").applied
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)          # may top up
    look_up_member(qtbot, terminal, "C-601", "M-601")
    page = terminal.sale_page
    qtbot.mouseClick(page.top_up_button, Qt.MouseButton.LeftButton)
    dialog = terminal.top_up_dialog
    assert dialog.account_input.text() == "M-601"
    qtbot.waitUntil(lambda: dialog.promotions is not None, timeout=5000)
    dialog.amount_input.setText("50")
    assert dialog.bonus_label.text() == "No promotion for this amount."
    dialog.amount_input.setText("100")
    assert "Bonus ¥20.00" in dialog.bonus_label.text() and "¥120.00" in dialog.bonus_label.text()
    qtbot.mouseClick(dialog.method_buttons["wechat"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, terminal)
    assert "Topped up: ¥100.00 (WeChat Pay) + bonus ¥20.00" in page.result_label.text()
    info = ledger.account("M-601")
    assert (info.principal_minor, info.bonus_minor, info.balance_minor) == (11000, 2000, 13000)
    [entry] = [e for e in journal_entries(ledger, "credit") if e["txn"].startswith("T1-c-")]
    assert entry["m"] == "wechat" and entry["amt"] == "12000"
    op = terminal.engine.outbox.get(entry["txn"])
    assert (op.method, op.bonus_minor, op.amount_minor) == ("wechat", 2000, 10000)
    qtbot.waitUntil(lambda: "bonus ¥20.00" in page.balance_label.text(), timeout=5000)


def test_a_bonus_not_yet_shown_needs_a_second_top_up(qtbot, terminal, ledger):
    member(ledger, "M-602", "吴十", "13400000002")
    assert ledger.add_promotion(5000, 500, txn_id="promo-50-5").applied
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    terminal.sale_page.account_input.setText("M-602")
    terminal.open_top_up("M-602")
    dialog = terminal.top_up_dialog
    qtbot.waitUntil(lambda: dialog.promotions is not None, timeout=5000)
    dialog._bonus_shown = None                  # as if Top up came before the bonus was on screen
    dialog.amount_input.blockSignals(True)
    dialog.amount_input.setText("60")
    dialog.amount_input.blockSignals(False)
    dialog.confirm()
    assert dialog.isVisible() and "bonus of ¥5.00" in dialog.message.text()
    assert ledger.balance("M-602") == 0
    dialog.confirm()
    wait_idle(qtbot, terminal)
    info = ledger.account("M-602")
    assert (info.principal_minor, info.bonus_minor) == (6000, 500)


# ---------------------------------------------------------------- cards, open, close

def open_member_action(qtbot, window, button: str):
    qtbot.mouseClick(window.sale_page.members_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: visible_window("membersDialog") is not None, timeout=3000)
    dialog = window.members_dialog
    qtbot.mouseClick(getattr(dialog, button), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.member_dialog is not None and window.member_dialog.isVisible(), timeout=3000)
    return window.member_dialog


def approve(qtbot, dialog, supervisor=SUPERVISOR, pin=SUPERVISOR_PIN):
    dialog.supervisor_input.setText(supervisor)
    dialog.pin_input.setText(pin)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)


def outcome(qtbot, window) -> str:
    qtbot.waitUntil(lambda: visible_window("outcomeDialog") is not None, timeout=5000)
    dialog = visible_window("outcomeDialog")
    text = dialog.findChild(QLabel, "outcomeText").text()
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    return text


def test_card_replacement_keeps_the_balance_and_refuses_the_old_card(qtbot, terminal, ledger):
    member(ledger, "M-701", "郑一", "13300000001", principal_minor=8000, bonus_minor=1000, card="C-701")
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "C-701", "M-701")
    dialog = open_member_action(qtbot, terminal, "card_button")
    assert dialog.old_input.text() == "C-701"               # the card it was found by
    dialog.new_input.setText("C-702")
    qtbot.mouseClick(dialog.reason_buttons["damaged"], Qt.MouseButton.LeftButton)
    approve(qtbot, dialog, CASHIER, "1234")                  # the signed-in cashier: never their own approver
    qtbot.waitUntil(lambda: "approves their own operation" in dialog.message.text(), timeout=5000)
    assert ledger.resolve_card("C-701").active
    approve(qtbot, dialog)
    text = outcome(qtbot, terminal)
    assert "Card C-701 blocked" in text and "New card C-702 issued to account M-701" in text
    old = ledger.resolve_card("C-701")
    assert (old.status, old.reason, old.account_id) == (Status.CARD_BLOCKED, "damaged", "M-701")
    new = ledger.resolve_card("C-702")
    assert new.active and new.account_id == "M-701"
    info = ledger.account("M-701")
    assert (info.principal_minor, info.bonus_minor) == (8000, 1000)
    op = terminal.engine.outbox.get(dialog_op_txn(terminal, "card_replace"))
    assert op.approved_by == SUPERVISOR and op.applied
    type_and_look_up(qtbot, terminal, "C-701")
    qtbot.waitUntil(lambda: "blocked" in terminal.sale_page.account_error.text(), timeout=5000)
    look_up_member(qtbot, terminal, "C-702", "M-701")


def dialog_op_txn(window, kind: str) -> str:
    ops = [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == kind]
    assert ops, kind
    return ops[-1].txn_id


def test_someone_elses_card_is_never_blocked(qtbot, terminal, ledger):
    member(ledger, "M-711", "冯二", "13300000011", card="C-711")
    member(ledger, "M-712", "陈三", "13300000012", card="C-712")
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "C-711", "M-711")
    dialog = open_member_action(qtbot, terminal, "card_button")
    dialog.old_input.setText("C-712")                       # a typo: another member's card
    approve(qtbot, dialog)
    assert "not one of this account's cards" in outcome(qtbot, terminal)
    assert ledger.resolve_card("C-712").active


def test_close_at_the_till_shows_the_payout_then_account_closed(qtbot, terminal, ledger):
    member(ledger, "M-801", "褚四", "13200000001", principal_minor=8000, bonus_minor=2000, card="C-801")
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "C-801", "M-801")
    dialog = open_member_action(qtbot, terminal, "close_button")
    assert "Pay out in cash: ¥80.00" in dialog.payout.text()
    assert "Bonus forfeited: ¥20.00" in dialog.payout.text()
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setFocus()
    for key in SUPERVISOR_PIN:                              # a touch-only till: the keypad
        qtbot.mouseClick(dialog.findChild(QPushButton, f"key_{key}"), Qt.MouseButton.LeftButton)
    assert dialog.pin_input.text() == SUPERVISOR_PIN
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    text = outcome(qtbot, terminal)
    assert "Pay out ¥80.00 in cash" in text and "Bonus forfeited: ¥20.00" in text
    assert ledger.account("M-801").status == "closed"
    op = terminal.engine.outbox.get(dialog_op_txn(terminal, "close"))
    assert (op.amount_minor, op.principal_delta_minor, op.bonus_delta_minor) == (8000, -8000, -2000)
    page = terminal.sale_page
    page.account_input.setText("M-801")
    page.amount_input.setText("1.00")
    page.charge()
    wait_idle(qtbot, terminal)
    assert "the account is closed" in page.result_label.text()
    assert ledger.deduct("M-801", 100, txn_id="after-close").status is Status.ACCOUNT_CLOSED


def test_a_supervisor_cannot_approve_the_close_at_their_own_till(qtbot, terminal, ledger):
    member(ledger, "M-811", "卫五", "13200000011", principal_minor=100)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    look_up_member(qtbot, terminal, "M-811", "M-811")
    dialog = open_member_action(qtbot, terminal, "close_button")
    approve(qtbot, dialog)
    assert "another supervisor" in dialog.message.text() and dialog.isVisible()
    assert ledger.account("M-811").status == "active"


def test_open_a_member_with_a_card_at_the_till(qtbot, terminal, ledger):
    sign_in(qtbot, terminal)                                 # c1 may not top up: a supervisor approves
    dialog = open_member_action(qtbot, terminal, "new_button")
    dialog.holder_input.setText("蒋六")
    dialog.phone_input.setText("131-0000-0001")
    dialog.card_input.setText("C-901")
    approve(qtbot, dialog)
    text = outcome(qtbot, terminal)
    account_id = dialog.account_id
    assert f"Member account {account_id} opened" in text and "Card C-901 issued" in text
    assert ledger.resolve_card("C-901").account_id == account_id
    [match] = ledger.find_members("13100000001")
    assert (match.account_id, match.holder_name) == (account_id, "蒋六")
    qtbot.waitUntil(lambda: on_screen(terminal, account_id), timeout=5000)


def test_opening_with_a_card_in_use_says_the_account_opened_without_it(qtbot, terminal, ledger):
    member(ledger, "M-911", "沈七", card="C-911")
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)     # allowed alone
    dialog = open_member_action(qtbot, terminal, "new_button")
    assert not dialog.supervisor_input.isVisibleTo(dialog)
    dialog.holder_input.setText("韩八")
    dialog.card_input.setText("C-911")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    text = outcome(qtbot, terminal)
    assert "opened, but the card was not issued" in text and "already in use" in text
    assert ledger.account(dialog.account_id).holder_name == "韩八"
    assert ledger.resolve_card("C-911").account_id == "M-911"


# ---------------------------------------------------------------- shift report and Z record

def test_shift_report_totals_by_method_and_bucket_and_the_z_record(qtbot, terminal, ledger):
    member(ledger, "M-1001", "杨九", "13000000001", principal_minor=5000, bonus_minor=1000)
    member(ledger, "M-1002", "朱十", "13000000002", principal_minor=3000)
    assert ledger.add_promotion(10000, 2000, txn_id="promo-r").applied
    assert ledger.set_spend_order("bonus_first", txn_id="order-bonus-first").applied
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    page, engine = terminal.sale_page, terminal.engine
    for account, amount, method in (("M-1002", "100", "cash"), ("M-1002", "30", "alipay"), ("M-1001", "20", "cash")):
        terminal.sale_page.account_input.setText(account)
        terminal.open_top_up(account)
        dialog = terminal.top_up_dialog
        qtbot.waitUntil(lambda: dialog.promotions is not None, timeout=5000)
        dialog.amount_input.setText(amount)
        dialog.method_buttons[method].setChecked(True)
        dialog.confirm()
        wait_idle(qtbot, terminal)
    page.account_input.setText("M-1001")
    page.amount_input.setText("15.00")                       # bonus first: ¥10.00 bonus + ¥5.00 principal
    page.charge()
    wait_idle(qtbot, terminal)
    charge = [op for op in engine.outbox.ops_of_shift(terminal.shift.shift_id) if op.kind == "deduct"][-1]
    assert charge.applied
    qtbot.waitUntil(lambda: engine.outbox.get(charge.txn_id).bonus_delta_minor is not None, timeout=5000)
    assert (engine.outbox.get(charge.txn_id).principal_delta_minor,
            engine.outbox.get(charge.txn_id).bonus_delta_minor) == (-500, -1000)
    shift = terminal.shift
    report = close_shift(qtbot, terminal).report
    methods = {m: (t.count, t.sum_minor) for m, t in report.topups_by_method.items() if t.count}
    assert methods == {"cash": (2, 12000), "alipay": (1, 3000)}
    assert report.bonus_granted_minor == 2000
    assert (report.spent_principal_minor, report.spent_bonus_minor) == (500, 1000)
    assert report.cash_expected_minor == 12000
    text = terminal.report_dialog.view.toPlainText()
    assert "Top-ups by Alipay" in text and "Cash expected in the drawer" in text
    # the Z record in the central journal, with the same totals
    txn = shift_txn_id("T1", shift.shift_id, opened_ms=shift.opened_ms)
    qtbot.waitUntil(lambda: engine.outbox.get(txn) is not None and engine.outbox.get(txn).applied, timeout=5000)
    [z] = [e for e in journal_entries(ledger, "shift_close") if e["txn"] == txn]
    totals = json.loads(z["z"])
    assert (z["term"], z["shift"], z["by"]) == ("T1", str(shift.shift_id), SUPERVISOR)
    assert totals["topups_minor"] == 15000 and totals["topups_cash_minor"] == 12000
    assert totals["topups_alipay_minor"] == 3000 and totals["bonus_granted_minor"] == 2000
    assert totals["sales_count"] == 1 and totals["sales_minor"] == 1500
    assert (totals["spent_principal_minor"], totals["spent_bonus_minor"]) == (500, 1000)
    assert totals["cash_expected_minor"] == 12000


def test_a_shift_closed_while_redis_is_away_is_journaled_once_it_is_back(qtbot, make_terminal, redis_url,
                                                                          redis_db, ledger, registry):
    ledger.init()
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        shift = window.shift
        proxy.mode = "blackhole"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state == "offline", timeout=10000)
        close_shift(qtbot, window)                           # the close itself never waits for Redis
        txn = shift_txn_id("T1", shift.shift_id, opened_ms=shift.opened_ms)
        # the outbox row is written by the engine's worker thread (before anything is sent)
        qtbot.waitUntil(lambda: window.engine.outbox.get(txn) is not None, timeout=5000)
        op = window.engine.outbox.get(txn)
        assert op.kind == "shift_close" and op.pending
        assert not [e for e in journal_entries(ledger, "shift_close")]
        proxy.mode = "pass"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.outbox.get(txn).applied, timeout=15000)
        [z] = journal_entries(ledger, "shift_close")
        assert (z["txn"], z["by"], z["cash"]) == (txn, CASHIER, CASHIER)
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=5000)   # the status bar too
    finally:
        proxy.close()


def test_a_reinstalled_till_gets_a_z_record_of_its_own_for_shift_1(qtbot, make_terminal, redis_url, ledger,
                                                                    registry, tmp_path):
    """A reinstalled till (new local outbox, same terminal id) numbers its shifts from 1
    again; its shift 1 must not be taken for the old shift 1 (a TxnConflict, no record)."""
    ledger.init()
    records = []
    for install in ("first", "reinstalled"):
        window = make_terminal(redis_url, data_dir=tmp_path / install)
        sign_in(qtbot, window)
        shift = window.shift
        assert shift.shift_id == 1
        close_shift(qtbot, window)
        txn = shift_txn_id("T1", 1, opened_ms=shift.opened_ms)
        qtbot.waitUntil(lambda: window.engine.outbox.get(txn) is not None
                        and window.engine.outbox.get(txn).applied, timeout=5000)
        records.append(txn)
        window.engine.close()
        qtbot.wait(5)      # opened_ms of the next install's shift 1 differs
    z = [e for e in journal_entries(ledger, "shift_close")]
    assert sorted(e["txn"] for e in z) == sorted(records) and len(set(records)) == 2
    assert [e["shift"] for e in z] == ["1", "1"]


def test_an_outbox_of_version_2_is_migrated_with_its_pending_rows(tmp_path):
    import sqlite3

    from desktop.outbox import SCHEMA_VERSION, Op, Outbox, now_ms
    path = tmp_path / "outbox.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OUTBOX_V2)
        db.execute("INSERT INTO ops (txn_id, kind, account_id, amount_minor, terminal_id, cashier_id, shift_id, "
                   "created_ms, ttl_s) VALUES ('T1-h-1', 'hold', 'A', 700, 'T1', 'c1', 1, 5, 60)")
        db.execute("PRAGMA user_version = 2")
    db.close()
    outbox = Outbox(path)
    try:
        [pending] = outbox.pending()
        assert (pending.txn_id, pending.ttl_s, pending.method, pending.principal_delta_minor) == ("T1-h-1", 60, "", None)
        outbox.add(Op("T1-x-2", "close", "A", 0, "T1", "c1", 1, now_ms()))        # amount 0: a close
        closed = outbox.resolve("T1-x-2", "APPLIED", 0, split=(-500, -100), amount_minor=500)
        assert (closed.amount_minor, closed.principal_delta_minor, closed.bonus_delta_minor) == (500, -500, -100)
    finally:
        outbox.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    db.close()


OUTBOX_V2 = """
CREATE TABLE shifts (shift_id INTEGER PRIMARY KEY AUTOINCREMENT, terminal_id TEXT NOT NULL,
    opened_ms INTEGER NOT NULL, opened_by TEXT NOT NULL, closed_ms INTEGER, closed_by TEXT);
CREATE TABLE ops (
    txn_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('deduct', 'refund', 'credit', 'hold', 'capture', 'void')),
    account_id TEXT NOT NULL, amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    original_txn_id TEXT NOT NULL DEFAULT '', terminal_id TEXT NOT NULL, cashier_id TEXT NOT NULL,
    approved_by TEXT NOT NULL DEFAULT '', shift_id INTEGER, created_ms INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'resolved')),
    status TEXT NOT NULL DEFAULT '', balance_after_minor INTEGER, replayed INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '', resolved_ms INTEGER,
    recovered INTEGER NOT NULL DEFAULT 0, ttl_s INTEGER NOT NULL DEFAULT 0);
CREATE INDEX ops_state ON ops (state, created_ms);
CREATE INDEX ops_shift ON ops (shift_id, created_ms);
CREATE INDEX ops_original ON ops (original_txn_id);
CREATE INDEX ops_kind ON ops (kind, account_id, created_ms);
"""


def test_the_member_screens_in_chinese(qtbot, terminal, ledger):
    import re

    from PySide6.QtWidgets import QAbstractButton
    member(ledger, "M-1101", "张三", "13000001101", principal_minor=5000, bonus_minor=500)
    member(ledger, "M-1102", "张三丰", "13000001102")
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    terminal.set_language("zh_CN")
    page = terminal.sale_page
    qtbot.waitUntil(lambda: page.members_button.text() == "会员…  (F7)", timeout=3000)
    allowed = {"F7", "PIN", "Wang", "Wei", "T1", "sup"}

    def english(widget) -> set[str]:
        texts = [w.text() for w in widget.findChildren(QLabel) + widget.findChildren(QAbstractButton)
                 if w.isVisibleTo(widget) and w.text()]
        texts.append(widget.windowTitle())
        return {word for t in texts for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}", t)} - allowed

    type_and_look_up(qtbot, terminal, "张三")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    assert not english(visible_window("memberPickDialog"))
    qtbot.keyClick(visible_window("memberPickDialog").list, ENTER)
    qtbot.waitUntil(lambda: on_screen(terminal, "M-1101"), timeout=5000)
    assert "本金 ¥50.00 + 赠送 ¥5.00" in page.balance_label.text()
    terminal.open_top_up("M-1101")
    qtbot.waitUntil(lambda: terminal.top_up_dialog.promotions is not None, timeout=5000)
    terminal.top_up_dialog.amount_input.setText("10")
    assert not english(terminal.top_up_dialog) and terminal.top_up_dialog.method_buttons["wechat"].text() == "微信支付"
    terminal.top_up_dialog.reject()
    for button in ("new_button", "card_button", "close_button"):
        dialog = open_member_action(qtbot, terminal, button)
        assert not english(dialog), button
        dialog.reject()
    terminal.set_language("en")


def test_a_new_look_up_closes_a_pick_list_left_open(qtbot, terminal, ledger):
    member(ledger, "M-1201", "张三", "13000001201")
    member(ledger, "M-1202", "张三丰", "13000001202")
    member(ledger, "M-1203", "李四", "13000001203", card="C-1203")
    sign_in(qtbot, terminal)
    type_and_look_up(qtbot, terminal, "张三")
    qtbot.waitUntil(lambda: visible_window("memberPickDialog") is not None, timeout=5000)
    dialog = visible_window("memberPickDialog")
    terminal.sale_page.take_scan("C-1203")      # the next customer's card
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: on_screen(terminal, "M-1203"), timeout=5000)
