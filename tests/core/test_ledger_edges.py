"""The ledger at its edges (issue 12), on a real Redis: numbers at and near the limits are
written exactly everywhere (journal, records, replies), internal txn ids live in a
namespace no client id can enter, capture/void without account_id never gives two
decisions for one txn id, and Redis out of memory reaches callers as the contract's
types only (a private redis-server with a small maxmemory and noeviction)."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.exceptions import RedisError, ResponseError

from core import (MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR, DeductRequest, InvalidRequest, Ledger,
                  LedgerError, LedgerUnavailable, Result, Status)
from core.resources import lua_dir
from core.scripts import _expand
from reconcile_service.reconcile import compensation_txn_id
from reconcile_service.restore import restore_txn_id
from tests.support.servers import RedisServer, wait_for
from core.journal_codec import read_range

DIGITS = re.compile(r"-?(0|[1-9][0-9]*)")
NUMERIC_FIELDS = ("amt", "bal", "ts", "held", "exp")
MAX_EXACT = 2 ** 53 - 1


def _restore(ledger: Ledger, account_id: str, balance_minor: int) -> Result:
    """A big balance in one step, the way the reconcile service's restore makes one."""
    return ledger.restore_account(account_id, balance_minor,
                                  txn_id=restore_txn_id(account_id, balance_minor, "active", "0"))


def _entries(ledger: Ledger) -> list[dict]:
    return [f for _, f in read_range(ledger.client, ledger.partitions[0].journal)]


def _record(ledger: Ledger, txn_id: str) -> dict:
    return ledger.client.hgetall(ledger.partitions[0].txn(txn_id))


# ----------------------------------------------------------------- defect 1: exact numbers

def _int_str_script(ledger: Ledger) -> str:
    body = _expand("--@include common\n"
                   "local ok, value = pcall(int_str, tonumber(ARGV[1]))\n"
                   "if ok then return {'ok', value} end\n"
                   "return {'error', ''}\n", lua_dir() / "includes")
    return ledger.client.script_load(body)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(-MAX_EXACT, MAX_EXACT) | st.sampled_from(
    [0, 1, -1, MAX_EXACT, -MAX_EXACT, MAX_BALANCE_MINOR, 10 ** 14, 123456789012345, MAX_AMOUNT_MINOR]))
def test_int_str_prints_every_integer_up_to_2_53_exactly(ledger, n):
    sha = _int_str_script(ledger)
    assert ledger.client.evalsha(sha, 0, str(n)) == ["ok", str(n)]


@pytest.mark.parametrize("bad", ["9007199254740992", "1.5", "-9007199254740993", "1e300"])
def test_int_str_refuses_what_it_cannot_print_exactly(ledger, bad):
    sha = _int_str_script(ledger)
    assert ledger.client.evalsha(sha, 0, bad)[0] == "error"


def test_balances_at_the_limit_are_exact_in_journal_records_and_answers(ledger):
    """987654321098765 has 15 significant digits: Lua's tostring wrote 9.8765432109877e+14."""
    big = 987_654_321_098_765
    assert _restore(ledger, "BIG", big).balance_minor == big
    r = ledger.deduct("BIG", MAX_AMOUNT_MINOR, txn_id="d-max")
    assert r.applied and r.balance_minor == big - MAX_AMOUNT_MINOR
    h = ledger.hold("BIG", MAX_AMOUNT_MINOR - 1, txn_id="h-max", ttl_s=600)
    assert h.applied and h.balance_minor == big - 2 * MAX_AMOUNT_MINOR + 1
    c = ledger.capture("h-max", MAX_AMOUNT_MINOR - 1, txn_id="c-max", account_id="BIG")
    assert c.applied and c.balance_minor == big - 2 * MAX_AMOUNT_MINOR + 1
    f = ledger.refund("BIG", MAX_AMOUNT_MINOR, txn_id="r-max", original_txn_id="d-max")
    assert f.balance_minor == big - MAX_AMOUNT_MINOR + 1
    # top up to exactly MAX_BALANCE_MINOR, then one more minor unit is declined
    missing = MAX_BALANCE_MINOR - ledger.balance("BIG")
    i = 0
    while missing:
        step = min(missing, MAX_AMOUNT_MINOR)
        assert ledger.credit("BIG", step, txn_id=f"up-{i}").applied
        missing -= step
        i += 1
    assert ledger.balance("BIG") == ledger.available("BIG") == MAX_BALANCE_MINOR
    over = ledger.credit("BIG", 1, txn_id="over")
    assert over.status is Status.BALANCE_LIMIT_EXCEEDED and over.balance_minor == MAX_BALANCE_MINOR
    assert ledger.credit("BIG", 1, txn_id="over") == Result(Status.BALANCE_LIMIT_EXCEEDED, MAX_BALANCE_MINOR,
                                                             True, "over", "BIG", "credit", 1, "")
    replayed = ledger.deduct("BIG", MAX_AMOUNT_MINOR, txn_id="d-max")
    assert replayed.replayed and replayed.balance_minor == r.balance_minor

    entries = _entries(ledger)
    for fields in entries:
        for name in NUMERIC_FIELDS:
            if name in fields:
                assert DIGITS.fullmatch(fields[name]), (name, fields)
    by_txn = {f["txn"]: f for f in entries}
    assert by_txn[restore_txn_id("BIG", big, "active", "0")]["bal"] == str(big)
    assert by_txn["d-max"]["amt"] == str(-MAX_AMOUNT_MINOR) and by_txn["d-max"]["bal"] == str(big - MAX_AMOUNT_MINOR)
    assert by_txn["h-max"]["held"] == str(MAX_AMOUNT_MINOR - 1)
    assert by_txn[f"up-{i - 1}"]["bal"] == str(MAX_BALANCE_MINOR)
    # what the journal says adds up to the balance, exactly
    assert sum(int(f["amt"]) for f in entries) + big == MAX_BALANCE_MINOR
    for txn in ("d-max", "h-max", "c-max", "r-max", "over", f"up-{i - 1}"):
        rec = _record(ledger, txn)
        assert DIGITS.fullmatch(rec["b"]), rec
        for name in ("r", "ha", "hx", "hc"):
            if name in rec:
                assert DIGITS.fullmatch(rec[name]), rec
    acct = ledger.client.hgetall(ledger.partitions[0].account("BIG"))
    assert acct["bal"] == str(MAX_BALANCE_MINOR) and DIGITS.fullmatch(acct["ct"])


# ----------------------------------------------------------------- defect 4: reserved txn ids

def _internal_ids_made_by_the_ledger(ledger: Ledger) -> list[str]:
    """Every kind of id the ledger makes itself, made for real."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1000)
    ledger.hold("A-1", 10, txn_id="h-1", ttl_s=1)
    part = ledger.partitions[0]
    wait_for(lambda: ledger.expire_holds("A-1") == 1, what="the hold's expiry to be journaled")
    expiry = next(f["txn"] for f in _entries(ledger) if f["kind"] == "hold_expire")
    compensation = compensation_txn_id(part.index, "1764547200000-0")
    restore = restore_txn_id("A-9", 5, "active", "0")
    return [expiry, compensation, restore]


def test_no_client_txn_id_can_equal_an_internal_id(ledger):
    internal = _internal_ids_made_by_the_ledger(ledger)
    before = ledger.balance("A-1"), len(_entries(ledger))
    for txn in internal:
        for call in (lambda: ledger.deduct("A-1", 1, txn_id=txn),
                     lambda: ledger.credit("A-1", 1, txn_id=txn),
                     lambda: ledger.hold("A-1", 1, txn_id=txn, ttl_s=60),
                     lambda: ledger.refund("A-1", 1, txn_id=txn, original_txn_id="x-1"),
                     lambda: ledger.freeze("A-1", txn_id=txn),
                     lambda: ledger.open_account("A-2", txn_id=txn),
                     lambda: ledger.void("h-1", txn_id=txn, account_id="A-1"),
                     lambda: ledger.capture("h-1", 1, txn_id=txn, account_id="A-1")):
            with pytest.raises(InvalidRequest) as err:
                call()
            assert err.value.field == "txn_id", txn
        [item] = ledger.deduct_many([DeductRequest("A-1", 1, txn)])
        assert isinstance(item, InvalidRequest) and item.field == "txn_id"
    assert (ledger.balance("A-1"), len(_entries(ledger))) == before


def test_every_script_refuses_an_internal_txn_id_from_a_client(ledger):
    """The Lua side of the namespace: a client that bypasses Python gets INVALID."""
    [expiry, compensation, _] = _internal_ids_made_by_the_ledger(ledger)
    part = ledger.partitions[0]
    before = ledger.balance("A-1"), len(_entries(ledger))
    for txn in (expiry, compensation):
        base = [part.account("A-1"), part.txn(txn), part.journal]
        holds = [part.holds("A-1"), part.hold_expiries("A-1")]
        calls = {
            "deduct": (base + holds, [txn, "A-1", "1", "3600", "", ""]),
            "credit": (base, [txn, "A-1", "1", "3600", "", "", "credit", ""]),
            "hold": (base + holds, [txn, "A-1", "1", "3600", "", "", "60"]),
            "refund": (base + [part.txn("x-1")], [txn, "A-1", "1", "3600", "", "", "x-1"]),
            "freeze": (base, [txn, "A-1", "0", "3600", "", ""]),
            "unfreeze": (base, [txn, "A-1", "0", "3600", "", ""]),
            "open_account": (base + [part.accounts], [txn, "A-1", "0", "3600", "", "", ""]),
            "capture": (base + holds + [part.txn("h-1")], [txn, "A-1", "1", "3600", "", "", "h-1"]),
            "void": (base + holds + [part.txn("h-1")], [txn, "A-1", "0", "3600", "", "", "h-1"]),
        }
        for name, (keys, args) in calls.items():
            reply = ledger.scripts.call(ledger.client, name, keys, args)
            assert reply[0] == "INVALID" and reply[3].startswith("txn_id"), (name, reply)
    assert (ledger.balance("A-1"), len(_entries(ledger))) == before


def test_internal_operations_take_internal_ids_only(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1000)
    assert ledger.deduct("A-1", 100, txn_id="cmp:0:1-0").applied     # an old-style id is a client's now
    with pytest.raises(InvalidRequest):
        ledger.compensate("A-1", 100, txn_id="cmp:0:1-0", original_txn_id="cmp:0:1-0")
    with pytest.raises(InvalidRequest):
        ledger.restore_account("A-7", 5, txn_id="rst:abc")
    part = ledger.partitions[0]
    reply = ledger.scripts.call(ledger.client, "credit", [part.account("A-1"), part.txn("plain"), part.journal],
                                ["plain", "A-1", "100", "3600", "", "", "compensate", "cmp:0:1-0"])
    assert reply[0] == "INVALID" and reply[3].startswith("txn_id")
    cmp = compensation_txn_id(0, "1-0")
    assert ledger.compensate("A-1", 100, txn_id=cmp, original_txn_id="cmp:0:1-0").applied
    assert ledger.balance("A-1") == 1000


# ----------------------------------------------------------------- defect 10: capture/void without account

@pytest.mark.parametrize("op", ["capture", "void"])
def test_resolving_an_unknown_hold_without_account_decides_nothing(ledger, op):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1000)

    def resolve(account_id=None):
        if op == "capture":
            return ledger.capture("h-late", 300, txn_id="r-1", account_id=account_id)
        return ledger.void("h-late", txn_id="r-1", account_id=account_id)

    with pytest.raises(InvalidRequest) as err:      # no decision that a later retry could contradict
        resolve()
    assert err.value.field == "hold_txn_id"
    assert ledger.hold("A-1", 500, txn_id="h-late", ttl_s=600).applied
    first = resolve()
    assert first.applied and not first.replayed
    again = resolve()
    assert again.replayed and (again.status, again.balance_minor) == (first.status, first.balance_minor)
    # the hold's record gone (as after its retention) while this txn's is not: still the same answer
    ledger.client.delete(ledger.partitions[0].txn("h-late"))
    late = resolve()
    assert late.replayed and (late.status, late.balance_minor) == (first.status, first.balance_minor)
    expected = 700 if op == "capture" else 1000
    assert ledger.balance("A-1") == expected and ledger.available("A-1") == expected


def test_hold_not_found_with_an_account_is_stored_like_any_decline(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1000)
    first = ledger.capture("h-later", 300, txn_id="c-1", account_id="A-1")
    assert first.status is Status.HOLD_NOT_FOUND
    ledger.hold("A-1", 500, txn_id="h-later", ttl_s=600)
    for account_id in ("A-1", None):
        again = ledger.capture("h-later", 300, txn_id="c-1", account_id=account_id)
        assert again.status is Status.HOLD_NOT_FOUND and again.replayed
    assert ledger.balance("A-1") == 1000


# ----------------------------------------------------------------- defect 7: out of memory

@pytest.fixture
def small_redis():
    server = RedisServer("--maxmemory-policy", "noeviction").start()
    yield server
    server.cleanup()


def _limit_memory(client, headroom_bytes: int) -> None:
    used = client.info("memory")["used_memory"]
    client.config_set("maxmemory", used + headroom_bytes)


def test_deduct_many_under_oom_answers_per_item_and_retries_exactly(small_redis):
    ledger = Ledger.from_url(small_redis.url)
    accounts = [f"A-{i}" for i in range(20)]
    for a in accounts:
        ledger.open_account(a, txn_id=f"open-{a}", initial_minor=MAX_AMOUNT_MINOR)
    admin = small_redis.client()
    _limit_memory(admin, 600_000)
    batches: list[list[DeductRequest]] = []
    answers: list[list] = []
    partial = False
    for b in range(200):
        reqs = [DeductRequest(accounts[(b + k) % 20], 1 + k, f"b{b}-{k}") for k in range(200)]
        items = ledger.deduct_many(reqs)
        batches.append(reqs)
        answers.append(items)
        for item in items:
            assert isinstance(item, (Result, LedgerError)) and not isinstance(item, RedisError), item
        refused = [i for i in items if isinstance(i, LedgerUnavailable)]
        partial |= bool(refused) and len(refused) < len(items)
        if refused and len(refused) == len(items):
            break
    assert partial, "no batch crossed the memory limit part-way"
    assert all(isinstance(i, LedgerUnavailable) and "out of memory" in str(i) and i.txn_id
               for items in answers for i in items if not isinstance(i, Result))

    applied = {r.txn_id: r for items in answers for r in items if isinstance(r, Result)}
    spent = {a: 0 for a in accounts}
    for reqs in batches:
        for req in reqs:
            if req.txn_id in applied and applied[req.txn_id].applied:
                spent[req.account_id] += req.amount_minor
    admin.config_set("maxmemory", 0)
    assert {a: MAX_AMOUNT_MINOR - ledger.balance(a) for a in accounts} == spent   # refused ones changed nothing
    for reqs in batches:                         # the same batches again, same txn ids
        for req, item in zip(reqs, ledger.deduct_many(reqs)):
            assert isinstance(item, Result) and item.applied
            if req.txn_id in applied:
                assert item.replayed and item.balance_minor == applied[req.txn_id].balance_minor
            else:
                assert not item.replayed          # first decision now: it was never decided before
    total = sum(req.amount_minor for reqs in batches for req in reqs)
    assert sum(MAX_AMOUNT_MINOR - ledger.balance(a) for a in accounts) == total
    ledger.close()


def test_every_writing_call_under_oom_raises_only_ledger_errors(small_redis):
    ledger = Ledger.from_url(small_redis.url)
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=10_000)
    ledger.hold("A-1", 100, txn_id="h-0", ttl_s=600)
    admin = small_redis.client()
    admin.config_set("maxmemory", 1)            # below what is used: every write is refused
    calls = {
        "open_account": lambda: ledger.open_account("A-2", txn_id="o-2"),
        "deduct": lambda: ledger.deduct("A-1", 1, txn_id="d-1"),
        "credit": lambda: ledger.credit("A-1", 1, txn_id="c-1"),
        "hold": lambda: ledger.hold("A-1", 1, txn_id="h-1", ttl_s=60),
        "void": lambda: ledger.void("h-9", txn_id="v-1", account_id="A-1"),
        # a function without allow-oom is refused before it starts, even one whose first
        # write is a delete (which a plain script could still make under OOM)
        "capture": lambda: ledger.capture("h-0", 1, txn_id="k-1"),
        "refund": lambda: ledger.refund("A-1", 1, txn_id="r-1", original_txn_id="d-0"),
        "freeze": lambda: ledger.freeze("A-1", txn_id="f-1"),
        "unfreeze": lambda: ledger.unfreeze("A-1", txn_id="u-1"),
        "compensate": lambda: ledger.compensate("A-1", 1, txn_id=compensation_txn_id(0, "1-0"),
                                                original_txn_id="d-0"),
        "restore_account": lambda: _restore(ledger, "A-3", 5),
        "init": lambda: Ledger.from_url(small_redis.url).init(),
    }
    for name, call in calls.items():
        with pytest.raises(LedgerUnavailable) as err:
            call()
        assert not isinstance(err.value, ResponseError), name
        assert "out of memory" in str(err.value), name
    # reads still answer, and nothing changed
    assert ledger.balance("A-1") == 10_000 and ledger.available("A-1") == 9_900
    assert list(ledger.account_ids(ledger.partitions[0])) == ["A-1"]
    admin.config_set("maxmemory", 0)
    captured = ledger.capture("h-0", 1, txn_id="k-1")        # refused under OOM: decided only now
    assert captured.applied and not captured.replayed and ledger.capture("h-0", 1, txn_id="k-1").replayed
    first = ledger.deduct("A-1", 1, txn_id="d-1")
    assert first.applied and not first.replayed and first.balance_minor == 9_998
    ledger.close()


def test_the_scripts_bound_amount_and_retention_at_their_limits_exactly(ledger):
    """checks.lua's one-pattern path decides the bounds by digit count below the limits and
    by value at them: 1e11 and 400 days pass, one more does not (a client bypassing Python)."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=MAX_AMOUNT_MINOR)
    ledger.credit("A-1", 10, txn_id="c-1")
    part = ledger.schema.partition_of("A-1")
    max_ttl = str(400 * 86400)

    def deduct(txn, amount, ttl):
        keys = [part.account("A-1"), part.txn(txn), part.journal, part.holds("A-1"), part.hold_expiries("A-1")]
        reply = ledger.scripts.call(ledger.client, "deduct", keys, [txn, "A-1", amount, ttl, "", ""])
        return reply.split("|") if isinstance(reply, str) else reply

    for txn, amount, ttl in (("d-2", str(MAX_AMOUNT_MINOR + 1), "3600"), ("d-3", "1", str(int(max_ttl) + 1)),
                             ("d-4", "1" + "0" * 16, "3600"), ("d-5", "1", "1" + "0" * 9)):
        reply = deduct(txn, amount, ttl)
        assert reply[0] == "INVALID", (txn, reply)
        assert reply[3].startswith("amount_minor" if txn in ("d-2", "d-4") else "retention_s"), reply
    assert deduct("d-6", "9", "99")[0] == "APPLIED"                               # fewer digits
    assert deduct("d-7", "1", max_ttl)[0] == "APPLIED"                            # the retention limit
    assert deduct("d-1", str(MAX_AMOUNT_MINOR), "3600")[0] == "APPLIED"           # 12 digits, by value
    assert ledger.balance("A-1") == 0


def test_a_zero_amount_goes_through_the_one_pattern_check_and_bad_fields_are_still_named(ledger):
    """check_request(allow_zero): '0' is checked with the rest in one pattern (void, freeze,
    open...); '00', a bad id or a bad retention beside it still gets INVALID naming the field."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=100)
    ledger.hold("A-1", 10, txn_id="h-1", ttl_s=600)
    part = ledger.schema.partition_of("A-1")

    def void(txn, amount="0", ttl="3600", term="T1", cash="c1"):
        keys = [part.account("A-1"), part.txn(txn), part.journal, part.holds("A-1"), part.hold_expiries("A-1"),
                part.txn("h-1")]
        reply = ledger.scripts.call(ledger.client, "void", keys, [txn, "A-1", amount, ttl, term, cash, "h-1"])
        return reply.split("|") if isinstance(reply, str) else reply

    for txn, kw, field in (("v-1", {"amount": "00"}, "amount_minor"), ("v-2", {"amount": ""}, "amount_minor"),
                           ("v-3", {"ttl": "0"}, "retention_s"), ("v-4", {"term": "T 1"}, "terminal_id"),
                           ("v-5", {"cash": "c|1"}, "cashier_id"), ("v-6", {"amount": "1"}, "amount_minor")):
        reply = void(txn, **kw)
        assert reply[0] == "INVALID" and reply[3].startswith(field), (txn, reply)
    assert void("v-7")[0] == "APPLIED" and ledger.available("A-1") == 100
    freeze = ledger.scripts.call(ledger.client, "freeze", [part.account("A-1"), part.txn("f-1"), part.journal],
                                 ["f-1", "A-1", "0", "3600", "", ""])
    assert (freeze.split("|") if isinstance(freeze, str) else freeze)[0] == "APPLIED"
