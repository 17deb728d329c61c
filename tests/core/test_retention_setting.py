"""The idempotency retention as a shop setting (issue 33 item 4): `retention_s` in cs:meta,
written by `Ledger.init(retention_s=)` / `cashierctl init --retention-s N` (1 day to 400
days), read by every ledger with the key schema and passed to the scripts in ARGV, so a
txn record's TTL is the shop's setting. Bad values name the field and change nothing;
`doctor` and `capacity` show the setting.

The hypothesis test runs random sequences of settings (good and bad), operations, replays
and faults (cs:meta edited by hand to something the setting does not allow, a process
that read the old setting) on a real Redis, and checks the invariants after every step."""
from __future__ import annotations

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from admin.cashierctl import main
from core import InvalidRequest, Ledger
from core.keys import META_KEY
from core.ledger import DEFAULT_RETENTION_S
from core.validation import MAX_RETENTION_S, MIN_SHOP_RETENTION_S, check_shop_retention

DAY = 86400
TTL_SLACK_S = 5          # a record's TTL read back right after it was written


def snapshot(client) -> dict:
    """Every key with its type and value (what 'nothing changed' compares)."""
    out = {}
    for key in sorted(client.keys("*")):
        kind = client.type(key)
        if kind == "hash":
            out[key] = ("hash", tuple(sorted(client.hgetall(key).items())))
        elif kind == "stream":
            out[key] = ("stream", client.xlen(key))
        elif kind == "set":
            out[key] = ("set", tuple(sorted(client.smembers(key))))
        else:
            out[key] = (kind,)
    return out


def record_ttl(ledger: Ledger, account_id: str, txn_id: str) -> int:
    return ledger.client.ttl(ledger.schema.partition_of(account_id).txn(txn_id))


def test_init_stores_the_retention_and_the_scripts_use_it(redis_url):
    ledger = Ledger.from_url(redis_url, auto_init=False)
    ledger.init(retention_s=2 * DAY)
    assert ledger.client.hget(META_KEY, "retention_s") == str(2 * DAY)
    other = Ledger.from_url(redis_url, auto_init=False)        # another process: reads the setting
    assert other.retention_s == 2 * DAY
    assert other.open_account("A-1", txn_id="o-1", initial_minor=500).applied
    assert other.deduct("A-1", 100, txn_id="d-1").applied
    for txn in ("o-1", "d-1"):
        assert 2 * DAY - TTL_SLACK_S <= record_ttl(other, "A-1", txn) <= 2 * DAY
    ledger.init()                                           # no retention given: the stored one stays
    assert Ledger.from_url(redis_url, auto_init=False).retention_s == 2 * DAY
    ledger.init(retention_s=30 * DAY)                       # changed: new records get the new TTL
    fresh = Ledger.from_url(redis_url, auto_init=False)
    assert fresh.deduct("A-1", 100, txn_id="d-2").applied
    assert 30 * DAY - TTL_SLACK_S <= record_ttl(fresh, "A-1", "d-2") <= 30 * DAY
    assert record_ttl(fresh, "A-1", "d-1") <= 2 * DAY       # records written before keep theirs
    assert fresh.load_retention() == 30 * DAY


def test_a_new_ledger_stores_the_default_and_an_old_one_without_it_uses_the_default(redis_url):
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    assert ledger.client.hget(META_KEY, "retention_s") == str(DEFAULT_RETENTION_S)
    ledger.client.hdel(META_KEY, "retention_s")              # a ledger made before the setting
    old = Ledger.from_url(redis_url, auto_init=False)
    assert old.retention_s == DEFAULT_RETENTION_S and old.stored_retention_s() is None
    # an explicit retention (tests, tools) overrides the shop's setting for that process
    assert Ledger.from_url(redis_url, retention_s=60).retention_s == 60


@pytest.mark.parametrize("bad", [0, 1, DAY - 1, MAX_RETENTION_S + 1, -DAY, True, 1.5 * DAY, "86400", None])
def test_bad_retention_is_refused_naming_the_field_and_nothing_changes(redis_url, bad):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    ledger = Ledger.from_url(redis_url, auto_init=False)
    if bad is None:          # the hand-edited cs:meta of a running shop
        ledger.init(retention_s=3 * DAY)
        client.hset(META_KEY, "retention_s", "3600")
        before = snapshot(client)
        fresh = Ledger.from_url(redis_url, auto_init=False)
        with pytest.raises(InvalidRequest) as refused:
            fresh.open_account("A-1", txn_id="o-1", initial_minor=5)
        assert refused.value.field == "retention_s"
        assert snapshot(client) == before
        return
    before = snapshot(client)
    with pytest.raises(InvalidRequest) as refused:
        ledger.init(retention_s=bad)
    assert refused.value.field == "retention_s" and "86400" in refused.value.reason
    assert snapshot(client) == before == {}                 # not even the ledger was made


def test_cashierctl_init_retention_doctor_and_capacity(redis_url, capsys):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    for bad in ("3600", "abc", "1.5", str(MAX_RETENTION_S + 1)):
        with pytest.raises(SystemExit) as exited:
            main(["--redis-url", redis_url, "init", "--retention-s", bad])
        assert exited.value.code == 2
        assert "retention_s" in capsys.readouterr().err
        assert client.keys("*") == []                        # nothing created
    assert main(["--redis-url", redis_url, "init", "--retention-s", str(2 * DAY)]) == 0
    assert "idempotency retention 172800 s (2 days)" in capsys.readouterr().out
    assert client.hget(META_KEY, "retention_s") == str(2 * DAY)
    with pytest.raises(SystemExit):
        main(["--redis-url", redis_url, "init", "--retention-s", "10"])
    assert client.hget(META_KEY, "retention_s") == str(2 * DAY)      # unchanged
    main(["--redis-url", redis_url, "doctor"])
    out = capsys.readouterr().out
    assert "retention    txn records kept 172800 s (2 days, the shop's setting)" in out
    assert "younger than 169200 s" in out
    assert main(["--json", "--redis-url", redis_url, "capacity", "--ops-per-s", "1"]) in (0, 1)
    import json
    est = json.loads(capsys.readouterr().out)
    assert est["retention_s"] == 2 * DAY and est["records_held"] == 2 * DAY
    assert est["retention_from"] == "the shop's setting"


# ---------------------------------------------------------------- hypothesis

GOOD = st.integers(MIN_SHOP_RETENTION_S, MAX_RETENTION_S)
BAD = st.one_of(st.integers(max_value=MIN_SHOP_RETENTION_S - 1), st.integers(min_value=MAX_RETENTION_S + 1),
                st.booleans(), st.floats(allow_nan=True), st.text(max_size=8))
STEPS = st.lists(st.one_of(
    st.tuples(st.just("init"), st.one_of(GOOD, BAD, st.none())),
    st.tuples(st.just("deduct"), st.integers(0, 5)),       # txn id t<n>: repeats are replays
    st.tuples(st.just("hand_edit"), st.sampled_from(["3600", "abc", "", "-1", str(MAX_RETENTION_S + 1)])),
    st.tuples(st.just("stale_process"), st.none()),         # a process that read the setting earlier
), min_size=1, max_size=12)


def valid(value) -> bool:
    try:
        check_shop_retention(value)
        return True
    except InvalidRequest:
        return False


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_retention_setting_invariants(redis_url, steps):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    admin = Ledger.from_url(redis_url, auto_init=False)
    admin.init(retention_s=DAY * 7)
    admin.open_account("A-1", txn_id="open-A-1", initial_minor=10 ** 9)
    setting = 7 * DAY            # the model: what cs:meta should hold (None: hand-edited garbage)
    decided: dict[str, tuple[int, int]] = {}                 # txn -> (balance after, ttl written with)
    early = Ledger.from_url(redis_url, auto_init=False)
    early.schema                                             # noqa: B018 (reads the setting now)
    early_setting = setting
    for step, arg in steps:
        before = snapshot(client)
        if step == "init":
            if arg is not None and not valid(arg):
                with pytest.raises(InvalidRequest) as refused:
                    Ledger.from_url(redis_url, auto_init=False).init(retention_s=arg)
                assert refused.value.field == "retention_s"
                assert snapshot(client) == before, "a refused setting changed Redis"
                continue
            if arg is None and setting is None:
                # init without a value keeps what is there, and refuses what it cannot use
                with pytest.raises(InvalidRequest) as refused:
                    Ledger.from_url(redis_url, auto_init=False).init()
                assert refused.value.field == "retention_s" and snapshot(client) == before
                continue
            Ledger.from_url(redis_url, auto_init=False).init(retention_s=arg)
            if arg is not None:
                setting = arg                                # a valid value repairs a hand edit too
            again = snapshot(client)
            Ledger.from_url(redis_url, auto_init=False).init(retention_s=arg)
            assert snapshot(client) == again, "init is not idempotent"
        elif step == "hand_edit":
            client.hset(META_KEY, "retention_s", arg)
            setting = None
        elif step == "stale_process":
            early, early_setting = Ledger.from_url(redis_url, auto_init=False), setting
            if setting is not None:
                early.schema                                 # noqa: B018
        else:
            txn = f"t{arg}"
            ledger = Ledger.from_url(redis_url, auto_init=False)
            if setting is None:           # refused before anything is read or written (a replay too)
                with pytest.raises(InvalidRequest) as refused:
                    ledger.deduct("A-1", 1, txn_id=txn)
                assert refused.value.field == "retention_s"
                assert snapshot(client) == before, "a refused retention wrote something"
                continue
            r = ledger.deduct("A-1", 1, txn_id=txn)
            assert r.applied
            if txn in decided:                               # a replay answers the first decision
                assert r.replayed and r.balance_minor == decided[txn][0]
                assert record_ttl(ledger, "A-1", txn) <= decided[txn][1]
            else:
                decided[txn] = (r.balance_minor, setting)
                assert setting - TTL_SLACK_S <= record_ttl(ledger, "A-1", txn) <= setting
        # invariants after every step
        stored = client.hget(META_KEY, "retention_s")
        if setting is not None:
            assert stored == str(setting) and valid(int(stored))
            assert Ledger.from_url(redis_url, auto_init=False).retention_s == setting
        balance = int(client.hget(admin.schema.partition_of("A-1").account("A-1"), "bal"))
        assert balance == 10 ** 9 - len(decided), "a txn id applied twice or not at all"
        if early_setting is not None:
            # a process that read the setting before keeps using it until it reads again
            assert early.retention_s == early_setting
    client.close()
