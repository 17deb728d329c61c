"""Holds at the terminal against the real Redis: hold (pre-authorise), complete the
sale (full or smaller final amount, the rest released), release the hold, every
decline in words, the available balance on screen, holds in the history and the
shift report, holds carried into the next shift, a lost reply during a hold and a
capture (exactly one of each in the journal), and the outbox's schema migration."""
from __future__ import annotations

import csv
import os
import sqlite3

import pytest
from PySide6.QtCore import Qt

from core import Status
from desktop.outbox import SCHEMA_VERSION, Outbox, Op, now_ms
from desktop.texts import short_status, status_words

from .conftest import close_shift, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in
from .proxy import FaultProxy


def wait_idle(qtbot, window):
    qtbot.waitUntil(lambda: window.sale_page.busy_txn is None, timeout=5000)


def look_up(qtbot, window, account: str):
    page = window.sale_page
    page.account_input.setText(account)
    page.look_up()
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == account, timeout=5000)


def hold(qtbot, window, account: str, amount: str):
    page = window.sale_page
    look_up(qtbot, window, account)
    page.amount_input.setText(amount)
    qtbot.mouseClick(page.hold_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)


def ops_of_kind(window, kind):
    return [op for op in window.engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == kind]


def complete(qtbot, window, amount: str | None = None):
    page = window.sale_page
    qtbot.mouseClick(page.complete_button, Qt.MouseButton.LeftButton)
    dialog = window.complete_dialog
    assert dialog.isVisible()
    if amount is not None:
        dialog.amount_input.setText(amount)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, window)
    return dialog


def window_of(page):
    return page.window()


def release(qtbot, window):
    """Release hold, confirmed in its dialog (issue 13 item 8)."""
    qtbot.mouseClick(window.sale_page.release_button, Qt.MouseButton.LeftButton)
    dialog = window.sale_page.confirm_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    assert "Release the hold of" in dialog.text.text()
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)


def test_new_widgets_have_object_names(terminal):
    for name in ("holdButton", "completeSaleButton", "releaseHoldButton", "holdInfoLabel", "holdPanel"):
        assert terminal.findChild(object, name) is not None, name


def test_hold_then_complete_with_a_smaller_final_amount(qtbot, terminal, ledger):
    open_account(ledger, "HL-1", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    assert not page.complete_button.isEnabled() and page.hold_info.text() == "No open hold"
    hold(qtbot, terminal, "HL-1", "50.00")
    assert page.result_label.text().startswith("Held: ¥50.00 until ")
    assert "Available now ¥50.00" in page.result_label.text()
    assert (ledger.balance("HL-1"), ledger.available("HL-1")) == (10000, 5000)
    assert "Balance ¥100.00 · On hold ¥50.00 · Available ¥50.00" in page.balance_label.text()
    assert page.amount_input.text() == ""
    [held] = ops_of_kind(terminal, "hold")
    assert held.ttl_s == 30 * 60 and held.applied and held.txn_id.startswith("T1-h-")
    assert page.hold_info.text().startswith("Open hold: ¥50.00 until ") and page.hold_info.text().endswith("\nAccount HL-1")
    assert page.complete_button.isEnabled() and page.release_button.isEnabled()
    table = page.history_table
    assert [table.cell(0, c) for c in (1, 2, 3)] == ["Hold", "HL-1", "¥50.00"]
    assert table.cell(0, 4).startswith("Held until ")
    # the final amount typed on the sale screen is offered when it fits the hold
    page.amount_input.setText("42.00")
    qtbot.mouseClick(page.complete_button, Qt.MouseButton.LeftButton)
    dialog = terminal.complete_dialog
    assert dialog.amount_input.text() == "42.00"
    assert dialog.preview.text() == "Charge ¥42.00 · release ¥8.00"
    dialog.amount_input.setText("50.01")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Amount: at most ¥50.00 (the hold)"
    dialog.amount_input.setText("0")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Amount: must be more than zero"
    dialog.amount_input.setText("42.00")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    wait_idle(qtbot, terminal)
    assert page.result_label.text() == "Sale completed: ¥42.00 charged, ¥8.00 released\nNew balance ¥58.00"
    assert (ledger.balance("HL-1"), ledger.available("HL-1")) == (5800, 5800)
    qtbot.waitUntil(lambda: page.balance_label.text().endswith("Balance ¥58.00"), timeout=3000)
    [capture] = ops_of_kind(terminal, "capture")
    assert capture.original_txn_id == held.txn_id and capture.amount_minor == 4200
    assert [table.cell(0, c) for c in (1, 3, 4, 5)] == ["Sale completed", "-¥42.00", "Approved", "¥58.00"]
    assert table.cell(1, 4) == "Completed"              # the hold's row
    assert not page.complete_button.isEnabled() and page.hold_info.text() == "No open hold"
    assert [e.kind for e in ledger.journal("HL-1", count=5)] == ["capture", "hold", "open"]
    # a completed sale can be refunded like a charge
    table.selectRow(0)
    assert page.refund_button.isEnabled()


def test_complete_for_the_whole_hold_and_release_another(qtbot, terminal, ledger):
    open_account(ledger, "HL-2", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    hold(qtbot, terminal, "HL-2", "30.00")
    complete(qtbot, terminal)                                  # pre-filled with the whole hold
    assert page.result_label.text() == "Sale completed: ¥30.00 charged\nNew balance ¥70.00"
    hold(qtbot, terminal, "HL-2", "20.00")
    assert ledger.available("HL-2") == 5000
    release(qtbot, window_of(page))
    wait_idle(qtbot, terminal)
    assert page.result_label.text() == "Hold released: ¥20.00\nBalance ¥70.00"
    assert (ledger.balance("HL-2"), ledger.available("HL-2")) == (7000, 7000)
    qtbot.waitUntil(lambda: page.balance_label.text().endswith("Balance ¥70.00"), timeout=3000)
    assert [e.kind for e in ledger.journal("HL-2", count=10)] == ["void", "hold", "capture", "hold", "open"]
    # a released hold cannot be released or completed again from this terminal
    released = ops_of_kind(terminal, "hold")[-1]
    assert page.start_operation("void", "HL-2", 2000, original_txn_id=released.txn_id) is None
    assert page.result_label.text() == "This hold is already completed, released or expired."


def test_the_selected_hold_is_the_one_acted_on(qtbot, terminal, ledger):
    open_account(ledger, "HL-3", 10000)
    open_account(ledger, "HL-4", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    hold(qtbot, terminal, "HL-3", "10.00")
    hold(qtbot, terminal, "HL-4", "15.00")
    page.new_sale()
    assert not page.release_button.isEnabled()                 # no account, nothing selected
    first = ops_of_kind(terminal, "hold")[0]
    page.history_table.selectRow(page._rows[first.txn_id])
    assert page.target_hold().txn_id == first.txn_id and page.release_button.isEnabled()
    release(qtbot, window_of(page))
    wait_idle(qtbot, terminal)
    assert ledger.available("HL-3") == 10000 and ledger.available("HL-4") == 8500


def test_a_hold_counts_against_charges_and_other_holds(qtbot, terminal, ledger):
    open_account(ledger, "HL-5", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    hold(qtbot, terminal, "HL-5", "80.00")
    page.amount_input.setText("30.00")
    page.charge()
    wait_idle(qtbot, terminal)
    assert page.result_label.text() == "Declined: not enough money on the account"
    hold(qtbot, terminal, "HL-5", "30.00")
    assert page.result_label.text() == "Declined: not enough money on the account"
    assert ops_of_kind(terminal, "hold")[-1].status == "INSUFFICIENT_FUNDS"
    assert page.history_table.cell(0, 4) == "Not enough money"
    assert (ledger.balance("HL-5"), ledger.available("HL-5")) == (10000, 2000)


@pytest.mark.parametrize("setup, words", [
    ("frozen", "Declined: the account is frozen"),
    ("missing", "Declined: unknown account"),
    ("too_many", "Declined: this account has too many open holds"),
])
def test_hold_declines_in_words(qtbot, terminal, ledger, setup, words):
    if setup != "missing":
        open_account(ledger, "HD-1", 100000)
    if setup == "frozen":
        assert ledger.freeze("HD-1", txn_id="frz-HD-1").applied
    if setup == "too_many":
        for i in range(100):
            assert ledger.hold("HD-1", 1, txn_id=f"other-hold-{i}", ttl_s=600).applied
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("HD-1")
    page.amount_input.setText("5.00")
    page.hold()
    wait_idle(qtbot, terminal)
    assert page.result_label.text() == words
    assert page.result_label.property("tone") == "declined"
    assert page.amount_input.text() == "5.00"
    assert not page.complete_button.isEnabled()


@pytest.mark.parametrize("case, words, row", [
    ("captured_elsewhere", "Not completed: this hold was already completed", "Completed"),
    ("voided_elsewhere", "Not completed: this hold was already released", "Released"),
    ("expired", "Not completed: the hold has expired, the money is free again", "Expired"),
    ("exceeds", "Not completed: the final amount is more than the hold", None),
    ("not_found", "Not completed: the hold was not found (it may be too old)", None),
])
def test_capture_and_void_declines_in_words(qtbot, make_terminal, redis_url, ledger, registry, case, words, row):
    ledger.init()
    window = make_terminal(redis_url, hold_ttl_s=1 if case == "expired" else 600)
    open_account(ledger, "HC-1", 10000)
    sign_in(qtbot, window)
    page = window.sale_page
    hold(qtbot, window, "HC-1", "40.00")
    [held] = ops_of_kind(window, "hold")
    if case == "captured_elsewhere":        # e.g. completed on another till with the same hold id
        assert ledger.capture(held.txn_id, 4000, txn_id="other-cap", account_id="HC-1").applied
    elif case == "voided_elsewhere":
        assert ledger.void(held.txn_id, txn_id="other-void", account_id="HC-1").applied
    elif case == "expired":
        qtbot.waitUntil(lambda: ledger.available("HC-1") == 10000, timeout=5000)   # the ledger let it lapse
    if case == "exceeds":                   # the dialog refuses this; a script could send it
        page.start_operation("capture", "HC-1", 4001, original_txn_id=held.txn_id)
    elif case == "not_found":
        page.start_operation("capture", "HC-1", 100, original_txn_id="T1-h-" + "0" * 32)
    else:
        complete(qtbot, window)
    wait_idle(qtbot, window)
    assert page.result_label.text() == words
    assert page.result_label.property("tone") == "declined"
    if row is not None:                     # the hold's row says what became of it
        assert page.history_table.cell(page._rows[held.txn_id], 4) == row
        assert not page.complete_button.isEnabled()
    else:
        assert page.complete_button.isEnabled()   # the hold itself is still open
    expected_balance = 6000 if case == "captured_elsewhere" else 10000
    assert ledger.balance("HC-1") == expected_balance


def test_every_hold_status_has_words():
    for status in (Status.HOLD_NOT_FOUND, Status.HOLD_ALREADY_CAPTURED, Status.HOLD_ALREADY_VOIDED,
                   Status.HOLD_EXPIRED, Status.CAPTURE_EXCEEDS_HOLD, Status.INSUFFICIENT_FUNDS,
                   Status.TOO_MANY_HOLDS, Status.ACCOUNT_FROZEN, Status.ACCOUNT_NOT_FOUND):
        assert "unexpected" not in status_words(status.value), status
        assert short_status(status.value, False) != "Not made", status


def test_holds_in_the_shift_report_and_carried_into_the_next_shift(qtbot, terminal, ledger, tmp_path):
    open_account(ledger, "HR-1", 100000)
    open_account(ledger, "HR-2", 100000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    hold(qtbot, terminal, "HR-1", "20.00")
    complete(qtbot, terminal, "15.00")
    hold(qtbot, terminal, "HR-1", "5.00")
    release(qtbot, window_of(page))
    wait_idle(qtbot, terminal)
    hold(qtbot, terminal, "HR-2", "10.00")                    # left open at the close
    page.amount_input.setText("1.00")
    page.charge()
    wait_idle(qtbot, terminal)
    dialog = close_shift(qtbot, terminal)
    report = dialog.report
    tallies = {k: (t.count, t.sum_minor) for k, t in report.by_kind.items()}
    assert tallies == {"deduct": (1, 100), "capture": (1, 1500), "refund": (0, 0), "credit": (0, 0),
                       "offline": (0, 0), "sale": (0, 0), "tender_refund": (0, 0), "close": (0, 0), "hold": (3, 3500), "void": (1, 500)}
    assert report.net_minor == 1600
    assert (report.open_holds.count, report.open_holds.sum_minor) == (1, 1000)
    text = dialog.view.toPlainText()
    assert "Sale completed" in text and "Hold (reserved only)" in text
    assert "1 hold(s) of this shift still open (¥10.00)" in text
    dialog.save_csv(tmp_path / "shift.csv")
    rows = {(r["Cashier"], r["Kind"]): r for r in csv.DictReader(open(tmp_path / "shift.csv", encoding="utf-8-sig"))}
    everyone = "All cashiers"
    assert rows[(everyone, "Sale completed")]["Sum (fen)"] == "1500"
    assert rows[(everyone, "Hold")]["Count"] == "3"
    assert rows[(everyone, "Holds still open")]["Sum (yuan)"] == "10.00"
    assert rows[(everyone, "Net (charges and completed sales minus refunds)")]["Sum (fen)"] == "1600"
    # next shift: the open hold is listed and can be completed there
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)
    table = terminal.sale_page.history_table
    assert table.rowCount() == 1 and table.cell(0, 1) == "Hold"
    look_up(qtbot, terminal, "HR-2")
    assert "On hold ¥10.00" in terminal.sale_page.balance_label.text()
    complete(qtbot, terminal, "10.00")
    assert ledger.balance("HR-2") == 100000 - 100 - 1000
    assert ops_of_kind(terminal, "capture")[0].cashier_id == SUPERVISOR


def test_lost_replies_for_a_hold_and_its_capture_resolve_once(qtbot, make_terminal, redis_url, redis_db,
                                                              ledger, registry):
    ledger.init()
    open_account(ledger, "HF-1", 10000)
    open_account(ledger, "HF-0", 100)
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        page = window.sale_page
        page.account_input.setText("HF-0")          # warm up: the policy check is behind us
        page.amount_input.setText("0.01")
        page.charge()
        wait_idle(qtbot, window)
        for step in ("hold", "capture"):
            proxy.mode = "drop_replies"
            if step == "hold":
                page.account_input.setText("HF-1")
                page.amount_input.setText("60.00")
                page.hold()
            else:
                page.start_operation("capture", "HF-1", 2500, original_txn_id=ops_of_kind(window, "hold")[0].txn_id)
            qtbot.waitUntil(lambda: page.result_label.property("tone") == "checking", timeout=10000)
            assert "Do NOT charge again" in page.result_label.text()
            assert not page.complete_button.isEnabled()
            page.account_input.setText("HF-1")
            page.amount_input.setText("1.00")
            page.hold()                              # nothing new starts on this account meanwhile
            assert "still being checked" in page.result_label.text()
            assert window.engine.pending_count == 1
            proxy.mode = "pass"
            proxy.cut_connections()
            qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
            wait_idle(qtbot, window)
            op = ops_of_kind(window, step)[0]
            assert (op.status, op.replayed) == ("APPLIED", True), op
        assert (ledger.balance("HF-1"), ledger.available("HF-1")) == (7500, 7500)
        kinds = [e.kind for e in ledger.journal("HF-1", count=10)]
        assert kinds == ["capture", "hold", "open"]
    finally:
        proxy.close()


OLD_SCHEMA_V1 = """
CREATE TABLE shifts (shift_id INTEGER PRIMARY KEY AUTOINCREMENT, terminal_id TEXT NOT NULL,
    opened_ms INTEGER NOT NULL, opened_by TEXT NOT NULL, closed_ms INTEGER, closed_by TEXT);
CREATE TABLE ops (
    txn_id TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('deduct', 'refund', 'credit')),
    account_id TEXT NOT NULL, amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
    original_txn_id TEXT NOT NULL DEFAULT '', terminal_id TEXT NOT NULL, cashier_id TEXT NOT NULL,
    approved_by TEXT NOT NULL DEFAULT '', shift_id INTEGER, created_ms INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'resolved')),
    status TEXT NOT NULL DEFAULT '', balance_after_minor INTEGER, replayed INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '', resolved_ms INTEGER,
    recovered INTEGER NOT NULL DEFAULT 0);
CREATE INDEX ops_state ON ops (state, created_ms);
CREATE INDEX ops_shift ON ops (shift_id, created_ms);
CREATE INDEX ops_original ON ops (original_txn_id);
"""


def test_an_outbox_of_the_first_version_is_migrated_with_its_pending_rows(tmp_path):
    path = tmp_path / "outbox.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA_V1)
        db.execute("INSERT INTO shifts (terminal_id, opened_ms, opened_by) VALUES ('T1', 1, 'c1')")
        db.execute("INSERT INTO ops (txn_id, kind, account_id, amount_minor, terminal_id, cashier_id, shift_id, "
                   "created_ms) VALUES ('T1-d-1', 'deduct', 'A', 1250, 'T1', 'c1', 1, 5)")
    db.close()
    outbox = Outbox(path)
    try:
        [pending] = outbox.pending()
        assert (pending.txn_id, pending.amount_minor, pending.ttl_s, pending.shift_id) == ("T1-d-1", 1250, 0, 1)
        assert outbox.current_shift().opened_by == "c1"
        outbox.add(Op("T1-h-2", "hold", "A", 500, "T1", "c1", 1, now_ms(), ttl_s=60))
        assert outbox.get("T1-h-2").ttl_s == 60
    finally:
        outbox.close()
    again = Outbox(path)                      # opening again changes nothing
    try:
        assert [op.txn_id for op in again.pending()] == ["T1-d-1", "T1-h-2"]
    finally:
        again.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    db.close()


def test_hold_time_is_capped_by_the_ledger_retention(make_terminal, redis_url, ledger):
    ledger.init()
    window = make_terminal(redis_url, hold_ttl_s=10**9)
    assert window.engine.hold_ttl_s == window.engine.ledger.retention_s
