"""Issue 27, the outage: three tills (three engines, their own data dirs) in front of two
ledger gateways; both gateways become unreachable for a simulated ten minutes (the tills'
clock is a test clock, advanced per sale, never slept); about a thousand charges are made
offline, the same members at several tills past their balance and a card blocked at the
ledger during the outage (the tills' block list is older). Then the gateways answer again:
every offline charge is applied exactly once, in the order made, with its cashier; each
member's offline debt equals exactly what the tills took beyond the balance; the loss on a
member never exceeds the stated bound (offline_member_limit x tills); and the book (after
`run --once`) agrees with Redis (`verify`), debts included."""
from __future__ import annotations

import random
import time
from collections import Counter, defaultdict

import pytest
from sqlalchemy import create_engine

from core import Ledger
from core.cashiers import CashierRegistry
from desktop.engine import ONLINE, Engine, Refused
from reconcile_service.reports.book import open_debts
from reconcile_service.verify import verify
from tests.reconcile.conftest import run_cli
from tests.support.gateway import InProcessGateway
from tests.support.postgres import fresh_database
from core.journal_codec import read_range

pytestmark = pytest.mark.slow

TILLS = ("T1", "T2", "T3")
MEMBERS = 40
MEMBER_LIMIT, TILL_BUDGET, MAX_DURATION_S = 10_000, 400_000, 7_200
OUTAGE_MS = 10 * 60 * 1000
CHARGES = 1_150                      # attempts; most are made, some refused by the limits
DOWN = ["http://127.0.0.1:1", "http://127.0.0.1:2"]     # both gateways unreachable
CASHIERS = {"T1": "c1", "T2": "c2", "T3": "c3"}


class Clock:
    def __init__(self, start_ms: int):
        self.ms = start_ms

    def __call__(self) -> int:
        return self.ms


def wait(qtbot, condition, timeout_s: float) -> None:
    qtbot.waitUntil(condition, timeout=int(timeout_s * 1000))


def test_three_tills_sell_through_a_ten_minute_outage_and_settle_exactly_once(qtbot, redis_url, tmp_path):
    rnd = random.Random(27)
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    registry = CashierRegistry(ledger.client)
    for c in CASHIERS.values():
        registry.add(c, f"cashier {c}", "1234")
    before = {}
    for i in range(MEMBERS):
        before[f"M-{i:03d}"] = rnd.choice([3_000, 6_000, 9_000, 20_000, 40_000])
        assert ledger.open_account(f"M-{i:03d}", txn_id=f"open-{i}", initial_minor=before[f"M-{i:03d}"]).applied
    assert ledger.issue_card("M-000", "CARD-LOST", txn_id="card-1").applied
    ledger.set_offline_limits(txn_id="lim-1", member_limit_minor=MEMBER_LIMIT, till_budget_minor=TILL_BUDGET,
                              max_duration_s=MAX_DURATION_S)
    first, second = InProcessGateway(redis_url).start(), InProcessGateway(redis_url).start()
    clock = Clock(int(time.time() * 1000) - OUTAGE_MS - 120_000)     # the outage ends in the past
    engines: dict[str, Engine] = {}
    try:
        for till in TILLS:
            from gateway.client import GatewayLedger
            token = first.enroll(till)
            second.tokens[till] = token
            engine = Engine(GatewayLedger([first.url, second.url], token, timeout_s=2.0), till,
                            tmp_path / till, ping_interval_ms=200, retry_interval_ms=250, offline_after_s=5)
            engine.clock = clock
            engine.start()
            engines[till] = engine
        wait(qtbot, lambda: all(e.state == ONLINE and e.offline_store.facts is not None for e in engines.values()), 10)
        answers = []
        for till, engine in engines.items():
            engine.sign_in(CASHIERS[till], "1234", answers.append, answers.append)
        wait(qtbot, lambda: len(answers) == len(TILLS), 10)
        for engine in engines.values():           # every till saw every member's balance
            for account in before:
                engine.lookup(account, answers.append, answers.append)
        wait(qtbot, lambda: len(answers) == len(TILLS) * (1 + MEMBERS), 30)

        # the outage: no gateway answers any till
        real = {till: list(e.ledger.urls) for till, e in engines.items()}
        for engine in engines.values():
            engine.ledger.urls = list(DOWN)
        wait(qtbot, lambda: all(e.state == "offline" for e in engines.values()), 10)
        assert ledger.block_card("CARD-LOST", txn_id="block-1", reason="stolen").applied   # the tills' list is older
        clock.ms += 6_000
        made: dict[str, list] = defaultdict(list)
        refused = Counter()
        step_ms = (OUTAGE_MS - 6_000) // CHARGES
        # the same member at two tills past their balance, first of all
        for till in ("T1", "T2"):
            made[till].append(engines[till].submit("deduct", "M-001", min(before["M-001"], MEMBER_LIMIT),
                                                   CASHIERS[till], shift_id=None))
            clock.ms += step_ms
        for n in range(CHARGES):
            till = TILLS[n % len(TILLS)]
            account = f"M-{rnd.randrange(MEMBERS):03d}"
            card = "CARD-LOST" if account == "M-000" else ""
            try:
                made[till].append(engines[till].submit("deduct", account, rnd.randrange(100, 1_200), CASHIERS[till],
                                                       shift_id=None, card_no=card))
            except Refused as exc:
                refused[exc.reason] += 1
            clock.ms += step_ms
        total_made = sum(len(v) for v in made.values())
        assert total_made >= 950, (total_made, refused)      # about a thousand
        assert set(refused) <= {"offline_over_balance", "offline_member_limit"}, refused
        assert any(op.card_no == "CARD-LOST" for ops in made.values() for op in ops)
        for till, engine in engines.items():
            use = engine.offline_use()
            assert use.used_minor == sum(op.amount_minor for op in made[till]) <= TILL_BUDGET

        # the gateways answer again: settle
        for till, engine in engines.items():
            engine.ledger.urls = real[till]
        wait(qtbot, lambda: all(e.state == ONLINE and e.pending_count == 0 for e in engines.values()), 240)

        # every offline charge applied exactly once, with its till and cashier
        ops = {op.txn_id: op for ops in made.values() for op in ops}
        rows = {t: engines[op.terminal_id].outbox.get(t) for t, op in ops.items()}
        assert Counter(r.status for r in rows.values()) == Counter({"APPLIED": len(ops)})
        journal = [f for p in ledger.partitions for _, f in read_range(ledger.client, p.journal)
                   if f["kind"] in ("offline", "offline_debt")]
        assert Counter(f["txn"] for f in journal) == Counter({t: 1 for t in ops})
        for f in journal:
            op = ops[f["txn"]]
            assert (f["term"], f["cash"], f["om"]) == (op.terminal_id, op.cashier_id, str(op.created_ms))
        # debts = exactly the overdraw; the loss on a member within the bound
        taken = defaultdict(int)
        for op in ops.values():
            taken[op.account_id] += op.amount_minor
        overdrawn = 0
        for account, start in before.items():
            debt = ledger.offline_debt(account)
            assert debt == max(0, taken[account] - start), account
            assert ledger.balance(account) == max(0, start - taken[account]), account
            assert debt <= MEMBER_LIMIT * len(TILLS), account        # the stated bound
            overdrawn += debt > 0
        assert overdrawn >= 5 and ledger.offline_debt("M-001") > 0
        assert sum(rows[t].debt_minor for t in ops) == sum(ledger.offline_debt(a) for a in before)
        blocked = [e for e in read_range(ledger.client, ledger.partitions[0].journal) if e[1].get("cb") == "1"]
        assert blocked and all(e[1]["acct"] == "M-000" for e in blocked)

        # the book agrees with Redis, debts included
        with fresh_database() as pg_url:
            assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
            db = create_engine(pg_url)
            report = verify(ledger, db)
            assert report.ok, report.violations[:5]
            assert {d["account_id"]: d["open_minor"] for d in open_debts(db)} == \
                {a: ledger.offline_debt(a) for a in before if ledger.offline_debt(a)}
            db.dispose()
        print(f"offline charges made {total_made}, refused {dict(refused)}, members overdrawn {overdrawn}, "
              f"debts {sum(ledger.offline_debt(a) for a in before)} minor")
    finally:
        for engine in engines.values():
            engine.close()
        first.stop()
        second.stop()
        ledger.close()
