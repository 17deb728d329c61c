"""Operations too old to re-send and the memory notice (issue 33 items 4 and 2), on a real
Redis with real widgets.

A pending outbox row older than the ledger's retention minus an hour is never re-sent on
its own (its record may have expired, and it would be applied twice): it goes to a
supervisor's dialog (desktop/stale_ops.py), who re-checks it (read-only: a record still in
Redis resolves it) or marks it abandoned (PIN; ABANDONED in the outbox, counted in the
shift report). A younger pending row is re-sent as always. The status bar shows a
supervisor notice while Redis is above 90 % of its maxmemory (CONFIG SET maxmemory on the
test's own Redis makes it nearly full)."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt

from core.keys import META_KEY
from desktop import i18n
from desktop.outbox import ABANDONED, Op, Outbox, now_ms

from .conftest import CASHIER, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in

DAY = 86400


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def select(dialog, txn_id: str) -> None:
    for i in range(dialog.rows.count()):
        if dialog.rows.item(i).data(Qt.ItemDataRole.UserRole) == txn_id:
            dialog.rows.setCurrentRow(i)
            return
    raise AssertionError(f"{txn_id} not listed")


def test_old_pending_rows_go_to_a_supervisor_instead_of_being_re_sent(make_terminal, redis_url, ledger,
                                                                       registry, qtbot, tmp_path):
    ledger.init(retention_s=DAY)                 # the shop's setting: records live one day
    for account in ("A-1", "A-2", "A-3"):
        open_account(ledger, account, 10_000)
    data = tmp_path / "till"
    box = Outbox(data / "outbox.sqlite3")        # what an earlier run left pending
    shift = box.open_shift("T1", CASHIER)
    old_ms = now_ms() - (DAY - 1800) * 1000      # 23.5 h ago: past the retention minus 1 h
    lost = Op("T1-d-lost", "deduct", "A-1", 250, "T1", CASHIER, shift.shift_id, old_ms)
    answered = Op("T1-d-answered", "deduct", "A-2", 300, "T1", CASHIER, shift.shift_id, old_ms + 1)
    young = Op("T1-d-young", "deduct", "A-3", 100, "T1", CASHIER, shift.shift_id,
               now_ms() - (DAY - 7200) * 1000)   # 22 h ago: still re-sent by itself
    for op in (lost, answered, young):
        box.add(op)
    box.close()
    # the second one did reach Redis before its answer was lost
    assert ledger.deduct("A-2", 300, txn_id="T1-d-answered", terminal_id="T1", cashier_id=CASHIER).applied

    window = make_terminal(redis_url, data_dir=data)
    engine = window.engine
    qtbot.waitUntil(lambda: len(engine.stale_ops()) == 2, timeout=5000)
    # the young row is re-sent with its cashier's session (the gateway takes an undecided
    # operation from a signed-in cashier only), so it waits for them
    assert engine.outbox.get("T1-d-young").pending
    sign_in(qtbot, window)
    qtbot.waitUntil(lambda: not engine.outbox.get("T1-d-young").pending, timeout=5000)
    assert engine.outbox.get("T1-d-young").applied and ledger.balance("A-3") == 9_900
    # the rest of the earlier run is reported although the old ones wait for a supervisor
    qtbot.waitUntil(lambda: "Resolved after a restart" in window.sale_page.notice_label.text(), timeout=3000)
    assert "A-3" in window.sale_page.notice_label.text() and "A-1" not in window.sale_page.notice_label.text()
    assert engine.resend_limit_s == DAY - 3600
    # never sent: no record of it in Redis, the balance untouched, still pending in the outbox
    assert not ledger.client.exists(ledger.schema.partition_of("A-1").txn("T1-d-lost"))
    assert ledger.balance("A-1") == 10_000 and ledger.balance("A-2") == 9_700
    assert engine.outbox.get("T1-d-lost").pending and engine.pending_count == 2
    assert window.stale_button.isVisible() and "2" in window.stale_button.text()

    window._stale_changed(engine.stale_ops())     # (the signal came before anyone signed in)
    assert "too old to send again" in window.sale_page.notice_label.text()
    from desktop.engine import Refused
    try:
        engine.check_can_start("A-1")
        raise AssertionError("a new operation started on an account with an undecided old one")
    except Refused as exc:
        assert exc.reason == "account_stale"
    assert window.close_shift() is None           # the shift cannot close with them undecided

    dialog = window.open_stale_ops()
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    assert dialog.rows.count() == 2 and "23 h ago" in dialog.rows.item(0).text()
    assert "older than 23 h" in dialog.explanation.text() and "24 h" in dialog.explanation.text()

    # re-check: Redis still has the record of the one that was done: resolved from it, not re-sent
    select(dialog, "T1-d-answered")
    click(qtbot, dialog.recheck_button)
    qtbot.waitUntil(lambda: "has its answer" in dialog.message.text(), timeout=5000)
    row = engine.outbox.get("T1-d-answered")
    assert row.applied and row.replayed and row.balance_after_minor == 9_700
    assert ledger.balance("A-2") == 9_700 and dialog.rows.count() == 1

    # re-check of the lost one: Redis has no record; it stays with the supervisor
    select(dialog, "T1-d-lost")
    click(qtbot, dialog.recheck_button)
    qtbot.waitUntil(lambda: "no record" in dialog.message.text(), timeout=5000)
    assert engine.outbox.get("T1-d-lost").pending and dialog.rows.count() == 1

    # abandon: a wrong PIN is refused, nothing changes
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText("0000")
    click(qtbot, dialog.confirm_button)
    qtbot.waitUntil(lambda: "wrong" in dialog.message.text(), timeout=5000)
    assert engine.outbox.get("T1-d-lost").pending
    dialog.supervisor_input.setText(SUPERVISOR)
    dialog.pin_input.setText(SUPERVISOR_PIN)
    click(qtbot, dialog.confirm_button)
    qtbot.waitUntil(lambda: "Marked abandoned by sup" in dialog.message.text(), timeout=5000)
    row = engine.outbox.get("T1-d-lost")
    assert not row.pending and row.status == ABANDONED and "supervisor sup" in row.last_error
    assert engine.pending_count == 0 and engine.stale_ops() == [] and dialog.rows.count() == 0
    qtbot.waitUntil(lambda: not window.stale_button.isVisible(), timeout=3000)
    assert ledger.balance("A-1") == 10_000
    assert not ledger.client.exists(ledger.schema.partition_of("A-1").txn("T1-d-lost"))
    engine.check_can_start("A-1")                 # the account takes operations again
    table = window.sale_page.history_table
    assert any("Abandoned" in (table.cell(r, c) or "")
               for r in range(table.rowCount()) for c in range(table.model().columnCount()))
    dialog.reject()

    # the shift report counts it, apart from the approved and the declined
    closing = window.close_shift()
    assert closing is not None
    report = closing.report
    assert report.abandoned.count == 1 and report.abandoned.sum_minor == 250
    assert report.by_kind["deduct"].count == 2 and report.declined_count == 0


def test_memory_notice_above_90_percent(make_terminal, gateways, redis_url, ledger, registry, qtbot):
    ledger.init()
    client = ledger.client
    assert client.exists(META_KEY)
    gateways.for_url(redis_url).gateway.settings.memory_check_interval_s = 0    # the gateway reads it at every ping
    window = make_terminal(redis_url)
    qtbot.waitUntil(lambda: window.engine.state == "online", timeout=5000)
    assert not window.memory_notice.isVisible()
    used = int(client.info("memory")["used_memory"])
    try:
        client.config_set("maxmemory", int(used / 0.5))        # half full: no notice
        qtbot.wait(600)
        assert not window.memory_notice.isVisible() and window.engine.memory_share < 0.9
        client.config_set("maxmemory", int(used / 0.95))       # nearly full
        qtbot.waitUntil(window.memory_notice.isVisible, timeout=5000)
        english = window.memory_notice.text()
        assert "tell a supervisor" in english and "% full" in english
        i18n.install("zh_CN")
        qtbot.waitUntil(lambda: window.memory_notice.text() != english, timeout=3000)
        assert QCoreApplication.translate(
            "MainWindow", "Central server memory %1 % full: tell a supervisor (at 100 % charges are refused)") \
            != "Central server memory %1 % full: tell a supervisor (at 100 % charges are refused)"
        i18n.install("en")
        client.config_set("maxmemory", 0)                     # no maxmemory: no percentage, no notice
        qtbot.waitUntil(lambda: not window.memory_notice.isVisible(), timeout=5000)
    finally:
        client.config_set("maxmemory", 0)
