"""Principal and bonus buckets against real Redis and the 3-master Cluster: top-ups with
a bonus and a payment method, every spending order, partial refunds in proportion and
exact in integers, captures, closing; replays and conflicts; and a hypothesis run of
random top-ups, deductions, holds/captures and partial refunds for each spending order,
through a proxy that drops replies after Redis ran them (retried with the same txn
ids), checked against an exact integer model of the buckets."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import InvalidRequest, Ledger, Status, TxnConflict
from tests.support.flaky_ledger import faulty_fixture, until_answered
from core.journal_codec import read_range

ORDERS = ("principal_first", "bonus_first", "proportional")


def buckets(ledger: Ledger, account: str) -> tuple[int, int]:
    info = ledger.account(account)
    assert info.principal_minor + info.bonus_minor == info.balance_minor
    return info.principal_minor, info.bonus_minor


def entry(ledger: Ledger, journal_id: str) -> dict:
    for part in ledger.partitions:
        found = read_range(ledger.client, part.journal, journal_id, journal_id)
        if found:
            return found[0][1]
    raise AssertionError(journal_id)


def test_top_up_with_bonus_and_method_is_one_entry(ledger):
    ledger.open_account("M-1", txn_id="o-1", initial_minor=1_000)
    r = ledger.credit("M-1", 10_000, txn_id="t-1", method="wechat", bonus_minor=2_000, cashier_id="c1")
    assert (r.status, r.balance_minor, r.amount_minor) == (Status.APPLIED, 13_000, 10_000)
    assert buckets(ledger, "M-1") == (11_000, 2_000)
    f = entry(ledger, r.journal_id)
    assert (f["amt"], f["pd"], f["bd"], f["m"]) == ("12000", "10000", "2000", "wechat")
    assert ledger.credit("M-1", 10_000, txn_id="t-1", method="wechat", bonus_minor=2_000).replayed
    for change in (dict(method="alipay", bonus_minor=2_000), dict(method="wechat", bonus_minor=0),
                   dict(method="wechat", bonus_minor=2_001)):
        with pytest.raises(TxnConflict):
            ledger.credit("M-1", 10_000, txn_id="t-1", **change)
    plain = ledger.credit("M-1", 500, txn_id="t-2")
    f = entry(ledger, plain.journal_id)
    assert f["m"] == "cash" and "pd" not in f and "bd" not in f     # absent: pd = amt, bd = 0
    assert buckets(ledger, "M-1") == (11_500, 2_000)


@pytest.mark.parametrize("call, field", [
    (lambda l: l.credit("M-1", 100, txn_id="x", method="card"), "method"),
    (lambda l: l.credit("M-1", 100, txn_id="x", method=None), "method"),
    (lambda l: l.credit("M-1", 100, txn_id="x", bonus_minor=-1), "bonus_minor"),
    (lambda l: l.credit("M-1", 100, txn_id="x", bonus_minor=1.5), "bonus_minor"),
    (lambda l: l.credit("M-1", 100, txn_id="x", bonus_minor=True), "bonus_minor"),
    (lambda l: l.credit("M-1", 100, txn_id="x", bonus_minor=10 ** 12), "bonus_minor"),
    (lambda l: l.restore_account("M-2", 100, txn_id="x", bonus_minor=-5), "bonus_minor"),
])
def test_bad_bucket_input_is_refused_and_nothing_changes(ledger, call, field):
    ledger.open_account("M-1", txn_id="o-1", initial_minor=1_000)
    before = ledger.client.dbsize(), ledger.client.xlen(ledger.partitions[0].journal)
    with pytest.raises(InvalidRequest) as info:
        call(ledger)
    assert info.value.field == field
    assert (ledger.client.dbsize(), ledger.client.xlen(ledger.partitions[0].journal)) == before


@pytest.mark.parametrize("order, taken", [
    ("principal_first", (3_000, 0)), ("bonus_first", (1_000, 2_000)), ("proportional", (2_250, 750)),
])
def test_spending_orders_and_refunds_give_back_what_was_taken(ledger, order, taken):
    ledger.init()
    ledger.set_spend_order(order, txn_id="order")
    ledger.open_account("M-1", txn_id="o-1")
    ledger.credit("M-1", 6_000, txn_id="t-1", bonus_minor=2_000)         # 6000 principal, 2000 bonus
    d = ledger.deduct("M-1", 3_000, txn_id="d-1")
    assert buckets(ledger, "M-1") == (6_000 - taken[0], 2_000 - taken[1])
    f = entry(ledger, d.journal_id)
    assert (int(f.get("pd", f["amt"])), int(f.get("bd", 0))) == (-taken[0], -taken[1])
    parts = [ledger.refund("M-1", x, txn_id=f"r-{x}", original_txn_id="d-1") for x in (1_000, 1, 1_999)]
    assert all(p.applied for p in parts)
    assert buckets(ledger, "M-1") == (6_000, 2_000)                      # everything back where it came from
    assert ledger.refund("M-1", 1, txn_id="r-more", original_txn_id="d-1").status is Status.REFUND_EXCEEDS_ORIGINAL


def test_capture_takes_in_the_spending_order_and_close_pays_the_principal_only(ledger):
    ledger.init()
    ledger.set_spend_order("bonus_first", txn_id="order")
    ledger.open_account("M-1", txn_id="o-1")
    ledger.credit("M-1", 10_000, txn_id="t-1", bonus_minor=2_000)
    ledger.hold("M-1", 5_000, txn_id="h-1", ttl_s=600)
    c = ledger.capture("h-1", 2_500, txn_id="c-1")
    assert c.applied and buckets(ledger, "M-1") == (9_500, 0)
    assert ledger.refund("M-1", 500, txn_id="r-1", original_txn_id="c-1").applied
    assert buckets(ledger, "M-1") == (9_600, 400)                       # 2000 of 2500 came from the bonus
    closed = ledger.close_account("M-1", txn_id="x-1")
    assert (closed.payout_minor, closed.bonus_forfeited_minor) == (9_600, 400)
    f = entry(ledger, closed.journal_id)
    assert (f["amt"], f["pd"], f["bd"]) == ("-10000", "-9600", "-400")


def test_balance_cap_declines_a_top_up_that_would_pass_it(ledger):
    ledger.init()
    ledger.open_account("M-1", txn_id="o-1", initial_minor=40_000)
    ledger.set_balance_cap(50_000, txn_id="cap")
    assert ledger.credit("M-1", 8_000, txn_id="t-1", bonus_minor=2_000).applied       # exactly the cap
    r = ledger.credit("M-1", 1, txn_id="t-2")
    assert (r.status, r.balance_minor) == (Status.BALANCE_CAP_EXCEEDED, 50_000)
    assert ledger.credit("M-1", 1, txn_id="t-2").replayed
    ledger.deduct("M-1", 100, txn_id="d-1")
    assert ledger.refund("M-1", 100, txn_id="r-1", original_txn_id="d-1").applied      # refunds are not top-ups
    ledger.set_balance_cap(None, txn_id="cap-off")
    assert ledger.credit("M-1", 1, txn_id="t-3").applied


def test_proportional_split_is_exact_for_large_balances(ledger):
    ledger.init()
    ledger.set_spend_order("proportional", txn_id="order")
    big = 99_999_999_999
    ledger.open_account("M-1", txn_id="o-1")
    for i in range(9):
        ledger.credit("M-1", big, txn_id=f"t-{i}", bonus_minor=big // 7)
    principal, bonus = buckets(ledger, "M-1")
    amount = 77_777_777_777
    ledger.deduct("M-1", amount, txn_id="d-1")
    taken_b = amount * bonus // (principal + bonus)                   # Python's exact integers
    assert buckets(ledger, "M-1") == (principal - (amount - taken_b), bonus - taken_b)
    ledger.refund("M-1", 33_333_333_333, txn_id="r-1", original_txn_id="d-1")
    back_b = 33_333_333_333 * taken_b // amount
    assert buckets(ledger, "M-1") == (principal - (amount - taken_b) + 33_333_333_333 - back_b,
                                      bonus - taken_b + back_b)


def test_buckets_on_the_cluster(cluster_ledger):
    ledger = cluster_ledger
    ledger.init()
    ledger.set_spend_order("proportional", txn_id="order")
    accounts = [f"B-{i}" for i in range(12)]
    for a in accounts:
        ledger.open_account(a, txn_id=f"o-{a}")
        ledger.credit(a, 9_000, txn_id=f"t-{a}", method="alipay", bonus_minor=3_000)
    from core import DeductRequest
    results = ledger.deduct_many([DeductRequest(a, 1_000, f"d-{a}") for a in accounts])
    assert all(r.applied for r in results)
    for a in accounts:
        assert buckets(ledger, a) == (8_250, 2_750)
        ledger.refund(a, 400, txn_id=f"r-{a}", original_txn_id=f"d-{a}")
        assert buckets(ledger, a) == (8_550, 2_850)
    assert ledger.close_account(accounts[0], txn_id="x-0").payout_minor == 8_550


# ---------------------------------------------------------------- property: every order, faults, retries

@st.composite
def scenarios(draw):
    order = draw(st.sampled_from(ORDERS))
    ops = draw(st.lists(st.one_of(
        st.tuples(st.just("credit"), st.integers(1, 50_000), st.integers(0, 20_000)),
        st.tuples(st.just("deduct"), st.integers(1, 40_000)),
        st.tuples(st.just("hold"), st.integers(1, 30_000), st.integers(0, 100)),
        st.tuples(st.just("refund"), st.integers(0, 30), st.integers(1, 40_000)),
    ), min_size=4, max_size=30))
    return order, ops


faulty = faulty_fixture(drop_reply_probability=0.25, seed=11)


def _take(order: str, amount: int, principal: int, bonus: int) -> int:
    """The model: bonus taken by a deduction of `amount`."""
    if bonus == 0:
        return 0
    if order == "bonus_first":
        return min(amount, bonus)
    if order == "proportional":
        return amount * bonus // (principal + bonus)
    return max(0, amount - principal)


@pytest.mark.slow    # ~40 s: fault injection (lost replies); not in the fast lane
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_bucket_arithmetic_under_lost_replies_matches_an_exact_model(ledger, faulty, scenario):
    order, ops = scenario
    flaky, proxy = faulty
    ledger.client.flushdb()
    ledger.init()
    ledger.set_spend_order(order, txn_id="order")
    ledger.open_account("M-1", txn_id="open")
    principal = bonus = 0
    spends: list[dict] = []        # applied deductions / captures: amount, taken bonus, refunded
    for n, op in enumerate(ops):
        txn = f"p-{n}"
        if op[0] == "credit":
            call = lambda: flaky.credit("M-1", op[1], txn_id=txn, method="cash", bonus_minor=op[2])
            r = until_answered(call)
            assert r.applied
            principal, bonus = principal + op[1], bonus + op[2]
        elif op[0] == "deduct":
            call = lambda: flaky.deduct("M-1", op[1], txn_id=txn)
            r = until_answered(call)
            if op[1] <= principal + bonus:
                tb = _take(order, op[1], principal, bonus)
                principal, bonus = principal - (op[1] - tb), bonus - tb
                spends.append(dict(txn=txn, amount=op[1], tb=tb, refunded=0))
                assert r.applied
            else:
                assert r.status is Status.INSUFFICIENT_FUNDS
        elif op[0] == "hold":
            held = until_answered(lambda: flaky.hold("M-1", op[1], txn_id=txn + "-h", ttl_s=600))
            if not held.applied:
                assert op[1] > principal + bonus
                continue
            captured = op[1] * op[2] // 100
            if captured == 0:
                assert until_answered(lambda: flaky.void(txn + "-h", txn_id=txn, account_id="M-1")).applied
                continue
            call = lambda: flaky.capture(txn + "-h", captured, txn_id=txn, account_id="M-1")
            r = until_answered(call)
            assert r.applied
            tb = _take(order, captured, principal, bonus)
            principal, bonus = principal - (captured - tb), bonus - tb
            spends.append(dict(txn=txn, amount=captured, tb=tb, refunded=0))
        else:
            if not spends:
                continue
            s = spends[op[1] % len(spends)]
            amount = min(op[2], s["amount"] - s["refunded"]) or 1
            call = lambda: flaky.refund("M-1", amount, txn_id=txn, original_txn_id=s["txn"])
            r = until_answered(call)
            if s["refunded"] + amount > s["amount"]:
                assert r.status is Status.REFUND_EXCEEDS_ORIGINAL
            else:
                assert r.applied
                back_b = (s["refunded"] + amount) * s["tb"] // s["amount"] - s["refunded"] * s["tb"] // s["amount"]
                principal, bonus = principal + amount - back_b, bonus + back_b
                s["refunded"] += amount
        again = until_answered(call)
        assert again.replayed and (again.status, again.journal_id) == (r.status, r.journal_id)
        assert buckets(ledger, "M-1") == (principal, bonus)
        assert principal >= 0 and bonus >= 0
    # the journal's bucket deltas add up to each bucket, and every entry is there once
    fields = [f for _, f in read_range(ledger.client, ledger.partitions[0].journal) if f["acct"] == "M-1"]
    assert len({f["txn"] for f in fields}) == len(fields)
    assert sum(int(f.get("pd", f["amt"])) for f in fields) == principal
    assert sum(int(f.get("bd", 0)) for f in fields) == bonus
    assert all(int(f.get("pd", f["amt"])) + int(f.get("bd", 0)) == int(f["amt"]) for f in fields)
    for s in spends:        # never more back to the bonus than the original took from it
        assert s["refunded"] * s["tb"] // s["amount"] <= s["tb"]


# ---------------------------------------------------------------- property on the Cluster: connection kills

def _kill_clients(cluster) -> int:
    """Every client connection of every node dropped (the ledger's included): its next
    call fails, and the ledger retries it with the same txn id. Answers how many died."""
    import redis
    killed = 0
    for node in cluster.nodes:
        admin = redis.Redis(port=node.port)
        try:
            killed += int(admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
        finally:
            admin.close()
    return killed


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.sampled_from(ORDERS),
       ops=st.lists(st.tuples(st.sampled_from(["credit", "deduct", "refund"]), st.integers(0, 3),
                              st.integers(1, 20_000), st.integers(0, 8_000), st.booleans()),
                    min_size=4, max_size=16))
def test_bucket_arithmetic_on_the_cluster_with_connection_kills(redis_cluster, cluster_ledger, order, ops):
    ledger = cluster_ledger
    redis_cluster.flush()
    ledger._schema = None
    ledger.init()
    ledger.set_spend_order(order, txn_id="order")
    accounts = [f"K-{i}" for i in range(4)]           # in different slots of the 16 partitions
    model = {a: [0, 0] for a in accounts}
    spends: dict[str, list[dict]] = {a: [] for a in accounts}
    for a in accounts:
        ledger.open_account(a, txn_id=f"open-{a}")
    kills = 0
    for n, (kind, i, amount, bonus, kill) in enumerate(ops):
        a, txn = accounts[i], f"k-{n}"
        if kill:
            kills += _kill_clients(redis_cluster)
        p, b = model[a]
        if kind == "credit":
            call = lambda: ledger.credit(a, amount, txn_id=txn, method="bank_card", bonus_minor=bonus)
            r = call()
            assert r.applied
            model[a] = [p + amount, b + bonus]
        elif kind == "deduct":
            call = lambda: ledger.deduct(a, amount, txn_id=txn)
            r = call()
            if amount <= p + b:
                tb = _take(order, amount, p, b)
                model[a] = [p - (amount - tb), b - tb]
                spends[a].append(dict(txn=txn, amount=amount, tb=tb, refunded=0))
                assert r.applied
            else:
                assert r.status is Status.INSUFFICIENT_FUNDS
        else:
            if not spends[a]:
                continue
            s = spends[a][amount % len(spends[a])]
            x = min(bonus + 1, s["amount"] - s["refunded"]) or 1
            call = lambda: ledger.refund(a, x, txn_id=txn, original_txn_id=s["txn"])
            r = call()
            if s["refunded"] + x > s["amount"]:
                assert r.status is Status.REFUND_EXCEEDS_ORIGINAL
            else:
                back = (s["refunded"] + x) * s["tb"] // s["amount"] - s["refunded"] * s["tb"] // s["amount"]
                model[a] = [p + x - back, b + back]
                s["refunded"] += x
        again = call()                                   # the retry of a terminal that lost the reply
        assert again.replayed and (again.status, again.journal_id) == (r.status, r.journal_id)
    for a in accounts:
        assert buckets(ledger, a) == tuple(model[a])
    assert kills > 0 or not any(op[4] for op in ops)          # the fault really happened
