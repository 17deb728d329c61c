"""Issue 24 item 6: a till takes a list of gateway URLs and moves to the next on failure.
Two real gateways (tests/support/gateway.py) in front of one Redis; the till charges,
the first gateway stops, the till charges again through the second without a restart,
and nothing is doubled: each txn id is journaled once."""
from __future__ import annotations

from gateway.client import GatewayLedger
from tests.support.gateway import InProcessGateway

from .conftest import FAST, TILL_TIMEOUT_S, open_account, sign_in


def charge(qtbot, window, account: str, amount: str):
    page = window.sale_page
    page.new_sale()
    page.account_input.setText(account)
    page.look_up()
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == account, timeout=5000)
    page.amount_input.setText(amount)
    page.charge()
    qtbot.waitUntil(lambda: page.busy_txn is None and window.engine.pending_count == 0, timeout=10000)
    return window.engine.outbox.ops_of_shift(window.shift.shift_id)[-1]


def test_the_till_moves_to_the_second_gateway_when_the_first_stops(qtbot, redis_url, ledger, registry, tmp_path):
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    ledger.init()
    open_account(ledger, "HA-1", 10_000)
    first = InProcessGateway(redis_url).start()
    second = InProcessGateway(redis_url).start()
    second.tokens["T1"] = first.enroll("T1")          # one credential, valid at every gateway of the shop
    till = GatewayLedger([first.url, second.url], first.tokens["T1"], timeout_s=TILL_TIMEOUT_S)
    engine = Engine(till, "T1", tmp_path / "till", **FAST)
    window = MainWindow(engine)
    qtbot.addWidget(window)
    window.show()
    engine.start()
    try:
        sign_in(qtbot, window)
        before = charge(qtbot, window, "HA-1", "10.00")
        assert before.applied and not before.replayed
        first.stop()                                     # the first server PC goes away
        after = charge(qtbot, window, "HA-1", "2.50")
        assert after.applied and not after.replayed, after
        assert engine.state == "online"
        assert ledger.balance("HA-1") == 10_000 - 1000 - 250
        txns = [e.txn_id for e in ledger.journal("HA-1", count=20) if e.kind == "deduct"]
        assert sorted(txns) == sorted([before.txn_id, after.txn_id])
    finally:
        engine.close()
        first.stop()
        second.stop()
