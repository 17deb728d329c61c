"""The till's offline screen (issue 27), pytest-qt: once no gateway answers, the status bar
says "Offline: ¥X of ¥Y budget used"; a charge within the limits is made offline (the panel
says so, its receipt is marked OFFLINE); the limit reached, a blocked card and the maximum
duration over are refused in words; on reconnect the sale is settled once."""
from __future__ import annotations

from desktop.receipts.model import plain_text

from .conftest import open_account, sign_in

DOWN = ["http://127.0.0.1:1"]


class Clock:
    def __init__(self, start_ms: int):
        self.ms = start_ms

    def __call__(self) -> int:
        return self.ms


def look_up(qtbot, window, query: str, account: str):
    page = window.sale_page
    page.new_sale()
    page.account_input.setText(query)
    page.look_up()
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == account, timeout=5000)


def charge(window, amount: str) -> str:
    page = window.sale_page
    page.amount_input.setText(amount)
    page.charge()
    return page.result_label.text()


def test_offline_screen_states_and_the_receipts_mark(qtbot, make_terminal, redis_url, ledger, registry):
    ledger.init()
    open_account(ledger, "OS-1", 20_000)
    open_account(ledger, "OS-2", 5_000)
    ledger.issue_card("OS-2", "CARD-OS2", txn_id="card-1")
    ledger.set_offline_limits(txn_id="lim-1", member_limit_minor=3_000, till_budget_minor=5_000,
                              max_duration_s=600)
    window = make_terminal(redis_url, offline_after_s=0)
    engine, page = window.engine, window.sale_page
    qtbot.waitUntil(lambda: engine.offline_store.facts is not None, timeout=5000)
    sign_in(qtbot, window)
    look_up(qtbot, window, "CARD-OS2", "OS-2")          # seen online, found by its card
    look_up(qtbot, window, "OS-1", "OS-1")
    urls = list(engine.ledger.urls)
    engine.ledger.urls = DOWN                           # no gateway answers
    qtbot.waitUntil(lambda: engine.selling_offline, timeout=5000)
    clock = Clock(engine.offline_store.offline_since_ms + 1_000)
    engine.clock = clock
    window._update_status()
    assert "Offline: ¥0.00 of ¥50.00 budget used" in window.connection_status.text()
    assert page.charge_button.isEnabled() and not page.hold_button.isEnabled()

    # budget: a charge made offline, said on the panel and the status bar; its slip marked OFFLINE
    text = charge(window, "20.00")
    assert "Charged OFFLINE" in text and "¥20.00" in text
    qtbot.waitUntil(lambda: "¥20.00 of ¥50.00" in window.connection_status.text(), timeout=3000)
    receipt = window.receipts.last
    assert receipt.kind == "offline" and "*** OFFLINE ***" in plain_text(receipt, 32)
    assert receipt.balance_after_minor is None
    sale = engine.outbox.ops_of_shift(window.shift.shift_id)[-1]
    assert sale.offline and sale.pending and sale.cashier_id == "c1"

    # limit reached: 20 + 15 > 30 for this member at this till
    assert "Offline limit reached for this member" in charge(window, "15.00")

    # blocked card: on the till's block list (the list's age is shown in the status)
    engine.offline_store.note_facts({**vars(engine.offline_store.facts), "blocked_cards": ["CARD-OS2"]})
    look_up(qtbot, window, "CARD-OS2", "OS-2")          # answered from what the till saw online
    assert "block list" in charge(window, "5.00")

    # duration over
    look_up(qtbot, window, "OS-1", "OS-1")
    clock.ms += 600_001
    assert "maximum offline time is over" in charge(window, "1.00")

    # back online: the offline sale is settled once, the status says connected
    engine.ledger.urls = urls
    qtbot.waitUntil(lambda: engine.state == "online" and engine.pending_count == 0, timeout=10000)
    assert engine.outbox.get(sale.txn_id).applied and ledger.balance("OS-1") == 18_000
    window._update_status()
    assert "Offline" not in window.connection_status.text()
    assert sum(1 for e in ledger.journal("OS-1", count=20) if e.txn_id == sale.txn_id) == 1
