"""The till's offline sales, engine side (issue 27): once no gateway answers, a charge within
the shop's offline limits is saved as an 'offline' row before anything else, refused with
its reason otherwise; on reconnect every offline sale is settled once, in the order made,
with the cashier who made it, the uncovered part as an offline debt."""
from __future__ import annotations

import pytest

from core import Status
from desktop.engine import ONLINE, Engine, Refused

from .conftest import CASHIER, CASHIER_PIN, FAST, SUPERVISOR, SUPERVISOR_PIN, open_account

DOWN = ["http://127.0.0.1:1"]          # nothing listens: every request is refused at once


class Clock:
    def __init__(self, start_ms: int):
        self.ms = start_ms

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def till(qtbot, redis_url, ledger, registry, till_ledger, tmp_path):
    ledger.init()
    open_account(ledger, "OF-1", 5_000)
    open_account(ledger, "OF-2", 50_000)
    ledger.set_offline_limits(txn_id="lim-1", member_limit_minor=10_000, till_budget_minor=12_000,
                              max_duration_s=600)
    ledger.issue_card("OF-2", "CARD-OF2", txn_id="card-1")
    engine = Engine(till_ledger(redis_url, "T1"), "T1", tmp_path / "till", offline_after_s=5, **FAST)
    engine.start()
    qtbot.waitUntil(lambda: engine.state == ONLINE, timeout=5000)
    qtbot.waitUntil(lambda: engine.offline_store.facts is not None, timeout=5000)
    answers = []
    engine.sign_in(CASHIER, CASHIER_PIN, answers.append, answers.append)
    qtbot.waitUntil(lambda: len(answers) == 1, timeout=5000)
    for account in ("OF-1", "OF-2"):         # the balances the till saw (kept for offline sales)
        engine.lookup(account, answers.append, answers.append)
    qtbot.waitUntil(lambda: len(answers) == 3, timeout=5000)
    assert sorted(a.account_id for a in answers[1:]) == ["OF-1", "OF-2"], answers
    yield engine
    engine.close()


def go_offline(qtbot, engine, urls):
    engine.ledger.urls = DOWN
    qtbot.waitUntil(lambda: engine.state == "offline", timeout=5000)


def test_offline_sales_are_kept_and_settled_once_in_order(qtbot, till, ledger):
    engine, urls = till, list(till.ledger.urls)
    go_offline(qtbot, engine, urls)
    clock = Clock(engine.offline_store.offline_since_ms + 1_000)
    engine.clock = clock
    # not yet: a few seconds without a gateway may be a slow answer
    with pytest.raises(Refused) as e:
        engine.submit("deduct", "OF-1", 100, CASHIER, shift_id=None)
    assert e.value.reason == "offline"
    clock.ms += 5_000
    sales = []
    engine.offlineSale.connect(sales.append)
    first = engine.submit("deduct", "OF-1", 3_000, CASHIER, shift_id=None)
    clock.ms += 10
    second = engine.submit("deduct", "OF-1", 2_000, CASHIER, shift_id=None)
    assert [s.txn_id for s in sales] == [first.txn_id, second.txn_id] and first.offline
    assert "-f-" in first.txn_id and engine.outbox.get(first.txn_id).pending
    assert engine.offline_use().used_minor == 5_000 and engine.offline_use().budget_minor == 12_000
    # the balance the till saw is used up; top-ups, refunds and holds are refused offline
    for kind, reason in (("deduct", "offline_over_balance"), ("credit", "offline"), ("hold", "offline")):
        with pytest.raises(Refused) as e:
            engine.submit(kind, "OF-1", 1, CASHIER, shift_id=None)
        assert e.value.reason == reason, kind
    # back: settled in the order made, with the cashier who made them
    engine.ledger.urls = urls
    qtbot.waitUntil(lambda: engine.state == ONLINE and engine.pending_count == 0, timeout=10000)
    rows = [engine.outbox.get(t) for t in (first.txn_id, second.txn_id)]
    assert [r.status for r in rows] == ["APPLIED", "APPLIED"] and [r.debt_minor for r in rows] == [0, 0]
    assert ledger.balance("OF-1") == 0 and ledger.offline_debt("OF-1") == 0
    entries = [e for e in ledger.journal("OF-1", count=10) if e.kind.startswith("offline")]
    assert sorted((e.txn_id, e.cashier_id, e.terminal_id) for e in entries) == \
        sorted([(first.txn_id, CASHIER, "T1"), (second.txn_id, CASHIER, "T1")])
    assert engine.offline_use() is None


def test_offline_refusals_limit_budget_blocked_card_duration(qtbot, till, ledger):
    engine, urls = till, list(till.ledger.urls)
    ledger.block_card("CARD-OF2", txn_id="blk-1", reason="lost")      # after the till's list was read
    go_offline(qtbot, engine, urls)
    clock = Clock(engine.offline_store.offline_since_ms + 6_000)
    engine.clock = clock

    def refused(account, amount, card=""):
        with pytest.raises(Refused) as e:
            engine.submit("deduct", account, amount, CASHIER, shift_id=None, card_no=card)
        return e.value.reason

    assert refused("OF-2", 10_001) == "offline_member_limit"
    assert engine.submit("deduct", "OF-2", 10_000, CASHIER, shift_id=None).offline
    assert refused("OF-2", 1) == "offline_member_limit"
    assert refused("OF-1", 2_001) == "offline_budget"          # 10,000 of 12,000 used
    assert refused("NEVER-SEEN", 1) == "offline_balance_unknown"
    engine.offline_store.note_facts({**vars(engine.offline_store.facts), "blocked_cards": ["CARD-X"]})
    assert refused("OF-1", 1, card="CARD-X") == "offline_card_blocked"
    clock.ms = engine.offline_store.offline_since_ms + 600_001
    assert refused("OF-1", 1) == "offline_duration_over"
    engine.ledger.urls = urls
    qtbot.waitUntil(lambda: engine.state == ONLINE and engine.pending_count == 0, timeout=10000)
    assert ledger.balance("OF-2") == 40_000


def test_an_offline_sale_past_the_balance_becomes_a_debt_that_a_top_up_pays(qtbot, till, ledger):
    engine, urls = till, list(till.ledger.urls)
    go_offline(qtbot, engine, urls)
    engine.clock = Clock(engine.offline_store.offline_since_ms + 6_000)
    sale = engine.submit("deduct", "OF-1", 4_000, CASHIER, shift_id=None)
    ledger.deduct("OF-1", 3_000, txn_id="elsewhere-1")        # another till, online meanwhile
    engine.ledger.urls = urls
    qtbot.waitUntil(lambda: engine.state == ONLINE and engine.pending_count == 0, timeout=10000)
    row = engine.outbox.get(sale.txn_id)
    assert row.applied and row.debt_minor == 2_000 and row.balance_after_minor == 0
    assert ledger.offline_debt("OF-1") == 2_000
    engine.clock = Clock(engine.clock() + 1)
    done = []
    engine.opResolved.connect(done.append)
    charge = engine.submit("deduct", "OF-1", 1, CASHIER, shift_id=None)
    qtbot.waitUntil(lambda: any(o.txn_id == charge.txn_id for o in done), timeout=5000)
    assert engine.outbox.get(charge.txn_id).status == Status.DEBT_OPEN.value
    signed = []
    engine.sign_in(SUPERVISOR, SUPERVISOR_PIN, signed.append, signed.append)     # may top up
    qtbot.waitUntil(lambda: bool(signed), timeout=5000)
    top_up = engine.submit("credit", "OF-1", 5_000, SUPERVISOR, shift_id=None)
    qtbot.waitUntil(lambda: any(o.txn_id == top_up.txn_id for o in done), timeout=5000)
    row = engine.outbox.get(top_up.txn_id)
    assert row.applied and row.debt_minor == 2_000 and row.balance_after_minor == 3_000


def test_the_till_offers_a_refund_only_for_an_offline_sale_without_debt():
    """The till's refund key follows refund.lua: a settled offline sale is refundable unless
    it left a debt (desktop.sale_session.SaleSession.refundable)."""
    from dataclasses import replace

    from desktop.outbox import RESOLVED, Op
    from desktop.sale_session import SaleSession
    settled = Op("T1-f-1", "offline", "A-1", 2_000, "T1", "C1", 1, 0, state=RESOLVED, status="APPLIED")
    assert SaleSession.refundable(settled) is settled
    assert SaleSession.refundable(replace(settled, debt_minor=500)) is None
