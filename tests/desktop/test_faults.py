"""Faults that must never lose or double a charge: Redis stopped during a charge,
the reply lost after the script ran, and the terminal process killed with a charge
pending. Each ends with exactly one deduction in Redis's journal."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core import Ledger
from core.cashiers import CashierRegistry
from core.connection import connect
from tests.support.servers import RedisServer, redis_server_available

from .conftest import CASHIER, CASHIER_PIN, open_account, sign_in, stays_true
from .proxy import FaultProxy

ROOT = Path(__file__).resolve().parents[2]


def deductions(ledger: Ledger, account: str) -> list:
    return [e for e in ledger.journal(account, count=50) if e.kind == "deduct"]


@pytest.fixture
def proxy(redis_db):
    p = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    yield p
    p.close()


def test_reply_lost_after_script_ran_resolves_to_one_deduction(qtbot, make_terminal, redis_url, redis_db,
                                                                ledger, registry, proxy):
    ledger.init()
    open_account(ledger, "R-1", 10000)
    open_account(ledger, "R-0", 100)
    window = make_terminal(proxy.url(redis_db))
    sign_in(qtbot, window)
    page = window.sale_page
    # A first sale, answered: the ledger has checked Redis's eviction policy (done every
    # 300 s), so the next request on the wire is the charge's script itself.
    page.account_input.setText("R-0")
    page.amount_input.setText("0.01")
    page.charge()
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    assert ledger.balance("R-0") == 99
    proxy.mode = "drop_replies"          # Redis runs the script; the terminal never hears
    page.account_input.setText("R-1")
    page.amount_input.setText("25.00")
    started = time.monotonic()
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page.result_label.property("tone") == "checking", timeout=10000)
    assert "Being checked" in page.result_label.text() and "Do NOT charge again" in page.result_label.text()
    assert ledger.balance("R-1") == 7500                  # it did run
    qtbot.waitUntil(lambda: window.findChild(object, "pendingStatus").text() == "Being checked: 1", timeout=3000)
    # the cashier tries again: nothing starts (only this account waits; the till is free for others)
    qtbot.keyClick(page.amount_input, Qt.Key.Key_F12)
    page.charge()
    assert "still being checked" in page.result_label.text()
    assert window.engine.pending_count == 1
    # moving on to the next customer does not allow charging this account again
    page.new_sale()
    qtbot.waitUntil(lambda: window.engine.state == "online", timeout=5000)   # pings still get through
    page.account_input.setText("R-1")
    page.amount_input.setText("25.00")
    page.charge()
    assert "still being checked" in page.result_label.text()
    assert window.engine.pending_count == 1
    proxy.mode = "pass"
    proxy.cut_connections()
    qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
    resolved_s = time.monotonic() - started
    op = window.engine.outbox.ops_of_shift(window.shift.shift_id)[-1]
    assert (op.status, op.replayed, op.balance_after_minor) == ("APPLIED", True, 7500)
    assert ledger.balance("R-1") == 7500
    assert [e.txn_id for e in deductions(ledger, "R-1")] == [op.txn_id]
    qtbot.waitUntil(lambda: "Connected" in window.findChild(object, "connectionStatus").text(), timeout=5000)
    print(f"reply lost -> resolved in {resolved_s:.2f} s")


@pytest.mark.skipif(not redis_server_available(), reason="needs redis-server")
def test_redis_stopped_during_a_charge_then_back(qtbot, make_terminal, tmp_path):
    server = RedisServer("--appendonly", "yes", "--appendfsync", "always").start()
    try:
        url = server.url
        ledger = Ledger.from_url(url)
        ledger.init()
        open_account(ledger, "S-1", 5000)
        client = connect(url)
        CashierRegistry(client).add(CASHIER, "Li Na", CASHIER_PIN)
        window = make_terminal(url)
        sign_in(qtbot, window)
        page = window.sale_page
        server.proc.send_signal(signal.SIGSTOP)           # Redis stops answering mid-sale
        page.account_input.setText("S-1")
        page.amount_input.setText("12.00")
        page.charge()
        qtbot.waitUntil(lambda: page.result_label.property("tone") == "checking", timeout=10000)
        qtbot.waitUntil(lambda: "No connection" in window.connection_status.text(), timeout=10000)
        # the window stays responsive while Redis is gone
        page.new_sale()
        page.account_input.setText("S-2")
        page.amount_input.setText("1.00")
        page.charge()
        assert page.result_label.text() == "No connection to the central server: charges are refused until it is back."
        server.kill()                                     # and then dies; its AOF is on disk
        assert window.engine.pending_count == 1
        server.start()                                    # same port, same AOF: it comes back
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=15000)
        qtbot.waitUntil(lambda: "Connected" in window.connection_status.text(), timeout=5000)
        ledger = Ledger.from_url(url)
        assert ledger.balance("S-1") == 3800
        assert len(deductions(ledger, "S-1")) == 1
        op = window.engine.outbox.ops_of_shift(window.shift.shift_id)[0]
        assert (op.status, op.balance_after_minor) == ("APPLIED", 3800)
        ledger.close()
        client.close()
    finally:
        server.cleanup()


@pytest.mark.parametrize("mode, replayed, kind", [("drop_replies", True, "deduct"), ("blackhole", False, "deduct"),
                                                  ("drop_replies", True, "hold")])
def test_terminal_killed_with_charge_pending_resolves_once_at_next_start(
        qtbot, make_terminal, gateways, redis_url, redis_db, ledger, registry, proxy, tmp_path, mode, replayed, kind):
    """drop_replies: the charge (or hold) ran before the crash; blackhole: it never reached Redis."""
    ledger.init()
    open_account(ledger, "K-1", 9000)
    open_account(ledger, "K-0", 100)
    data_dir = tmp_path / "crashed-terminal"
    data_dir.mkdir()
    gateway = gateways.for_url(proxy.url(redis_db))        # the till's gateway reaches Redis through the proxy
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT),
           "CASHIER_TERMINAL_TOKEN": gateway.enroll("T9")}
    proc = subprocess.Popen([sys.executable, "-m", "tests.desktop.crash_helper", gateway.url,
                             str(data_dir), "K-1", "40.00", kind], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        proxy.mode = mode
        (data_dir / "go").touch()
        line = proc.stdout.readline().strip()
        assert line.startswith("PENDING "), line + proc.stderr.read()
        txn_id = line.split()[1]
        proc.send_signal(signal.SIGKILL)                  # crash / power cut with the charge pending
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
    with sqlite3.connect(data_dir / "outbox.sqlite3") as db:
        assert db.execute("SELECT state FROM ops WHERE txn_id = ?", (txn_id,)).fetchall() == [("pending",)]
    taken = 4000 if replayed else 0
    if kind == "hold":
        assert (ledger.balance("K-1"), ledger.available("K-1")) == (9000, 9000 - taken)
    else:
        assert ledger.balance("K-1") == 9000 - taken
    assert ledger.balance("K-0") == 99
    proxy.mode = "pass"
    # Next start, straight to Redis, same data directory.
    window = make_terminal(redis_url, terminal_id="T9", data_dir=data_dir)
    if not replayed:
        # never decided: the gateway takes it only with its cashier's session, so it waits
        # (still being checked, its account blocked) until that cashier signs in again
        stays_true(qtbot, lambda: window.engine.pending_count == 1, window_ms=800)
        sign_in(qtbot, window)
    qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
    op = window.engine.outbox.get(txn_id)
    assert (op.state, op.status, op.replayed, op.recovered, op.kind) == ("resolved", "APPLIED", replayed, True, kind)
    if kind == "hold":
        assert op.ttl_s == window.engine.hold_ttl_s                # the same request as before the crash
        assert (ledger.balance("K-1"), ledger.available("K-1")) == (9000, 5000)
        assert [e.txn_id for e in ledger.journal("K-1", count=10) if e.kind == "hold"] == [txn_id]
        # the recovered hold is open on the next start and can be completed there
        assert [h.txn_id for h in window.engine.outbox.open_holds("K-1")] == [txn_id]
    else:
        assert ledger.balance("K-1") == 5000
        assert [e.txn_id for e in deductions(ledger, "K-1")] == [txn_id]
    qtbot.waitUntil(lambda: "Resolved after a restart" in window.sale_page.notice_label.text(), timeout=3000)
    assert "¥40.00" in window.sale_page.notice_label.text()
    # a third start finds nothing left to do and charges nothing more
    window.engine.close()
    window2 = make_terminal(redis_url, terminal_id="T9", data_dir=data_dir)
    qtbot.waitUntil(lambda: window2.engine.state == "online", timeout=5000)
    journal_length = len(ledger.journal("K-1", count=50))
    # nothing is re-sent: no second charge or hold over a window of several retry and ping rounds
    stays_true(qtbot, lambda: window2.engine.pending_count == 0 and ledger.available("K-1") == 5000
               and len(ledger.journal("K-1", count=50)) == journal_length, window_ms=1000)
