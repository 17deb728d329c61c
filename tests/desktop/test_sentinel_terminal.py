"""A terminal on a Redis Sentinel deployment rides through a failover: the primary is
killed with SIGKILL, the status bar shows "reconnecting" while the sentinels promote a
replica, a charge sent during the switch is settled with its txn id, and new charges go
through again, all without restarting the terminal."""
from __future__ import annotations

import signal

import pytest

from core import Ledger
from core.cashiers import CashierRegistry
from core.connection import connect
from tests.support.servers import RedisSentinelServers, redis_server_available

from .conftest import CASHIER, CASHIER_PIN, open_account, sign_in

pytestmark = pytest.mark.skipif(not redis_server_available(), reason="needs redis-server")


def test_terminal_shows_reconnecting_during_a_failover_and_charges_after_it(qtbot, make_terminal):
    with RedisSentinelServers(replicas=2) as deploy:
        url = deploy.url(query="wait_replicas=1")     # what a shop's tills are given
        ledger = Ledger.from_url(url)
        ledger.init()
        open_account(ledger, "F-1", 5000)
        client = connect(url)
        CashierRegistry(client).add(CASHIER, "Li Na", CASHIER_PIN)
        window = make_terminal(url)
        sign_in(qtbot, window)
        page, status = window.sale_page, window.connection_status
        page.account_input.setText("F-1")
        page.amount_input.setText("10.00")
        page.charge()
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
        assert ledger.balance("F-1") == 4000
        old = deploy.primary()
        old.kill(signal.SIGKILL)
        page.new_sale()
        page.account_input.setText("F-1")
        page.amount_input.setText("2.50")
        page.charge()                                   # in flight while the primary is gone
        qtbot.waitUntil(lambda: "reconnecting" in status.text(), timeout=15000)
        assert status.property("tone") == "checking"
        # while switching, a new charge is refused with the reason, and nothing is sent (the
        # state changes only in the event loop, which does not run between these lines)
        page.new_sale()
        page.account_input.setText("F-2")
        page.amount_input.setText("1.00")
        page.charge()
        assert "switching over" in page.result_label.text()
        deploy.wait_for_failover(old.port)
        qtbot.waitUntil(lambda: "Connected" in status.text(), timeout=15000)
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=15000)
        page.new_sale()
        page.account_input.setText("F-1")
        page.amount_input.setText("3.00")
        page.charge()                                   # the same terminal, no restart
        qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=10000)
        ledger = Ledger.from_url(url)
        deducts = [e for e in ledger.journal("F-1", count=50) if e.kind == "deduct"]
        amounts = sorted(-e.amount_minor for e in deducts)
        # 10.00 before, 2.50 settled through the switch, 3.00 after; each once
        assert amounts == [250, 300, 1000]
        assert ledger.balance("F-1") == 5000 - sum(amounts)
        assert len({e.txn_id for e in deducts}) == len(deducts)
        ledger.close()
        client.close()
