"""Card numbers, account ids and phones share the till's one look-up (issue 25 items 1-3),
against real Redis (standalone, several partitions on one server, and the 3-master Cluster):
none may be another member's (ACCOUNT_ID_TAKEN, PHONE_TAKEN, CARD_NO_IS_PHONE, decided
in the scripts), a string that already is two members' (data from before) answers
LOOKUP_AMBIGUOUS instead of one of them, a charge presented by card is checked with the
balance (CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT), `rebuild_member_index` rebuilds the
identities of old data; and a property-based run of interleaved open / issue / block /
charge operations with lost replies and re-sent txn ids, checked by invariants: no
identity string stands for two members, no charge is applied through a blocked card."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import AccountNotFound, Ledger, Status, TxnConflict
from core.keys import KeySchema
from tests.support.flaky_ledger import flaky_ledger, until_answered


def open_member(led: Ledger, account: str, phone: str | None = None, initial: int = 10_000, txn: str = ""):
    return led.open_account(account, txn_id=txn or f"open-{account}", initial_minor=initial, phone=phone)


# ---------------------------------------------------------------- items 1 and 2: kept apart

def test_a_card_number_cannot_become_another_members_account(ledger):
    assert open_member(ledger, "A1").applied
    assert ledger.issue_card("A1", "100200", txn_id="i-1").applied
    r = open_member(ledger, "100200")                                   # B's account: the card's number
    assert r.status is Status.ACCOUNT_ID_TAKEN and not r.applied
    assert ledger.client.exists(ledger.schema.partition_of("100200").account("100200")) == 0
    assert ledger.resolve_card("100200").account_id == "A1"
    assert open_member(ledger, "100200").status is Status.ACCOUNT_ID_TAKEN   # a retry: the same answer
    assert open_member(ledger, "100200").replayed


def test_a_card_number_cannot_be_another_members_phone_and_back(ledger):
    assert open_member(ledger, "B", phone="13800138000").applied
    assert open_member(ledger, "A").applied
    assert ledger.issue_card("A", "13800138000", txn_id="i-1").status is Status.CARD_NO_IS_PHONE
    assert ledger.resolve_card("13800138000").status is Status.CARD_NOT_FOUND       # B is found by phone
    assert ledger.issue_card("B", "13800138000", txn_id="i-2").applied            # B's own phone: B's card
    assert ledger.issue_card("A", "13900139000", txn_id="i-3").applied
    assert open_member(ledger, "C", phone="13900139000").status is Status.PHONE_TAKEN   # A's card
    with pytest.raises(AccountNotFound):
        ledger.account("C")                                                         # not opened


def test_phones_and_account_ids_are_kept_apart(ledger):
    assert open_member(ledger, "13700137000").applied                               # an id of digits
    assert open_member(ledger, "D", phone="13700137000").status is Status.PHONE_TAKEN
    assert open_member(ledger, "E", phone="13600136000").applied
    assert open_member(ledger, "F", phone="136-0013-6000").status is Status.PHONE_TAKEN   # the same phone
    assert open_member(ledger, "13600136000").status is Status.ACCOUNT_ID_TAKEN     # E's phone as an id
    assert open_member(ledger, "13500135000", phone="13500135000").applied          # its own id: one member
    assert ledger.resolve_card("13500135000").account_id == "13500135000"
    assert ledger.find_members("13600136000")[0].account_id == "E"
    # a declined open does not keep the phone: another member can have it
    assert open_member(ledger, "E", phone="13400134000", txn="again").status is Status.ACCOUNT_EXISTS
    assert open_member(ledger, "G", phone="13400134000").applied


def test_an_account_id_used_as_a_card_stays_its_own(ledger):
    assert open_member(ledger, "0012345").applied
    assert ledger.issue_card("0012345", "0012345", txn_id="i-1").applied           # explicit: its own id
    assert open_member(ledger, "X").applied
    assert ledger.issue_card("X", "0012345", txn_id="i-2").status is Status.CARD_IN_USE


# ---------------------------------------------------------------- ambiguous data from before

def old_data(led: Ledger) -> None:
    """What today's main let happen: card 100200 of A1, then an account 100200 (B), and a
    card 13800138000 of A1 that is also C's phone. Written as main's scripts left it (no
    identity entries), since the scripts now refuse it."""
    assert open_member(led, "A1").applied
    assert open_member(led, "C").applied
    part = led.schema.partition_of("100200")
    led.client.hset(part.card("100200"), mapping={"a": "A1", "st": "active"})
    led.client.hset(part.cards, "100200", "A1")
    led.client.hset(part.account("100200"), mapping={"bal": "1000", "st": "active", "ct": "1"})
    led.client.sadd(part.accounts, "100200")
    phone_part = led.schema.partition_of("13800138000")
    led.client.hset(phone_part.card("13800138000"), mapping={"a": "A1", "st": "active"})
    led.client.hset(phone_part.cards, "13800138000", "A1")
    c = led.schema.partition_of("C")
    led.client.hset(c.account("C"), "ph", "13800138000")
    led.client.zadd(c.member_index, {"p:13800138000\x00C": 0})


def test_a_string_that_is_two_members_is_never_resolved_to_one(ledger):
    old_data(ledger)
    card = ledger.resolve_card("100200")
    assert card.status is Status.LOOKUP_AMBIGUOUS and card.account_id == ""
    assert set(card.candidates) == {"card:A1", "account:100200"}
    card = ledger.resolve_card("13800138000")
    assert card.status is Status.LOOKUP_AMBIGUOUS and set(card.candidates) == {"card:A1", "phone:C"}
    counts = ledger.rebuild_member_index()
    assert counts["phones"] == 1 and counts["cards"] == 2
    assert ledger.resolve_card("13800138000").status is Status.LOOKUP_AMBIGUOUS      # still: never picked
    assert open_member(ledger, "Z", phone="13800138000").status is Status.PHONE_TAKEN


# ---------------------------------------------------------------- item 3: charges by card

def test_a_blocked_card_does_not_pay_even_for_a_charge_already_on_its_way(ledger):
    assert open_member(ledger, "A", initial=10_000).applied
    assert open_member(ledger, "B", initial=10_000).applied
    assert ledger.issue_card("A", "CARD-A", txn_id="i-a").applied
    assert ledger.issue_card("B", "CARD-B", txn_id="i-b").applied
    found = ledger.resolve_card("CARD-A")                      # the till looks the card up ...
    assert found.active and found.account_id == "A"
    assert ledger.block_card("CARD-A", txn_id="stolen", reason="stolen").applied     # ... it is reported stolen
    r = ledger.deduct(found.account_id, 2_500, txn_id="sale-1", card_no="CARD-A")    # ... the charge arrives
    assert r.status is Status.CARD_BLOCKED and ledger.balance("A") == 10_000
    assert ledger.deduct("A", 2_500, txn_id="sale-1", card_no="CARD-A").replayed
    h = ledger.hold("A", 1_000, txn_id="hold-1", ttl_s=60, card_no="CARD-A")
    assert h.status is Status.CARD_BLOCKED and ledger.available("A") == 10_000
    other = ledger.deduct("A", 100, txn_id="sale-2", card_no="CARD-B")              # B's card for A
    assert other.status is Status.CARD_NOT_THIS_ACCOUNT and ledger.balance("A") == 10_000
    assert ledger.deduct("A", 100, txn_id="sale-3", card_no="NO-SUCH").status is Status.CARD_NOT_THIS_ACCOUNT
    assert ledger.issue_card("A", "CARD-A2", txn_id="i-a2").applied                 # 补卡
    assert ledger.deduct("A", 100, txn_id="sale-4", card_no="CARD-A2").applied
    assert ledger.deduct("A", 100, txn_id="sale-5", card_no="A").applied            # its own id
    assert ledger.hold("B", 100, txn_id="hold-2", ttl_s=60, card_no="CARD-B").applied
    assert ledger.deduct("A", 100, txn_id="sale-6").applied                         # typed: no card
    with pytest.raises(TxnConflict):
        ledger.deduct("A", 100, txn_id="sale-4", card_no="CARD-B")                  # another card, same id
    assert ledger.balance("A") == 9_700


def test_an_account_id_used_as_a_card_and_blocked_does_not_pay(ledger):
    assert open_member(ledger, "0012345").applied
    assert ledger.block_card("0012345", txn_id="b-1", reason="lost").applied
    assert ledger.deduct("0012345", 1, txn_id="s-1", card_no="0012345").status is Status.CARD_BLOCKED


def test_deduct_many_carries_the_card(ledger):
    from core import DeductRequest
    assert open_member(ledger, "A").applied
    assert ledger.issue_card("A", "CARD-A", txn_id="i-a").applied
    assert ledger.block_card("CARD-A", txn_id="b-a", reason="lost").applied
    out = ledger.deduct_many([DeductRequest("A", 5, "m-1", card_no="CARD-A"), DeductRequest("A", 5, "m-2")])
    assert [r.status for r in out] == [Status.CARD_BLOCKED, Status.APPLIED]


def test_reindex_gives_old_cards_and_phones_their_identities(ledger):
    """Cards and phones written before the identities existed: a charge by such a card is
    declined (not one of the account's known cards) until `member reindex`, and blocked
    ones stay blocked."""
    assert open_member(ledger, "A").applied
    part = ledger.schema.partition_of("OLD-1")
    for card, st in (("OLD-1", "active"), ("OLD-2", "blocked")):
        ledger.client.hset(part.card(card), mapping={"a": "A", "st": st})
        ledger.client.hset(part.cards, card, "A")
    ledger.client.hset(ledger.schema.partition_of("A").account("A"), "ph", "13100131000")
    assert ledger.deduct("A", 1, txn_id="s-1", card_no="OLD-1").status is Status.CARD_NOT_THIS_ACCOUNT
    ledger.rebuild_member_index()
    assert ledger.deduct("A", 1, txn_id="s-2", card_no="OLD-1").applied
    assert ledger.deduct("A", 1, txn_id="s-3", card_no="OLD-2").status is Status.CARD_BLOCKED
    assert open_member(ledger, "B").applied
    assert ledger.issue_card("B", "13100131000", txn_id="i-1").status is Status.CARD_NO_IS_PHONE
    ledger.client.hdel(ledger.schema.partition_of("A").account("A"), "ph")
    assert ledger.rebuild_member_index()["phones_removed"] == 1
    assert ledger.issue_card("B", "13100131000", txn_id="i-2").applied


# ---------------------------------------------------------------- several partitions (cross-slot)

def cross_pair(schema: KeySchema) -> tuple[str, str]:
    """An account id and a phone of different partitions."""
    phone = "13800000000"
    for i in range(100):
        account = f"M-{i}"
        if schema.partition_of(account) is not schema.partition_of(phone):
            return account, phone
    raise AssertionError("no pair")


def test_identities_across_partitions(redis_url):
    led = Ledger.from_url(redis_url, partitions=4)
    try:
        led.client.flushdb()
        led.init(partitions=4)
        account, phone = cross_pair(led.schema)
        assert open_member(led, account, phone=phone).applied
        assert open_member(led, "other", phone=phone).status is Status.PHONE_TAKEN
        assert open_member(led, phone).status is Status.ACCOUNT_ID_TAKEN
        assert led.issue_card(account, phone, txn_id="i-0").applied                 # its own phone
        assert open_member(led, "O2").applied
        assert led.issue_card("O2", "13811111111", txn_id="i-1").applied
        assert open_member(led, "O3", phone="13811111111").status is Status.PHONE_TAKEN
        # a declined open drops its claim
        free = "13822222222"
        assert open_member(led, account, phone=free, txn="again").status is Status.ACCOUNT_EXISTS
        assert led.client.hget(led.schema.partition_of(free).phones, free) is None
        # a card of another partition than its account: the charge checks the account's list
        card = next(f"K-{i}" for i in range(100)
                    if led.schema.partition_of(f"K-{i}") is not led.schema.partition_of("O2"))
        assert led.issue_card("O2", card, txn_id="i-2").applied
        assert led.deduct("O2", 10, txn_id="s-1", card_no=card).applied
        assert led.block_card(card, txn_id="b-1", reason="lost").applied
        assert led.deduct("O2", 10, txn_id="s-2", card_no=card).status is Status.CARD_BLOCKED
    finally:
        led.close()


@pytest.mark.cluster
def test_identities_on_cluster(cluster_ledger):
    led = cluster_ledger
    account, phone = cross_pair(led.schema)
    assert open_member(led, account, phone=phone).applied
    assert open_member(led, "other", phone=phone).status is Status.PHONE_TAKEN
    assert open_member(led, phone).status is Status.ACCOUNT_ID_TAKEN
    assert open_member(led, "O2").applied
    assert led.issue_card("O2", phone, txn_id="i-1").status is Status.CARD_NO_IS_PHONE
    card = next(f"K-{i}" for i in range(100) if led.schema.partition_of(f"K-{i}") is not led.schema.partition_of("O2"))
    assert led.issue_card("O2", card, txn_id="i-2").applied
    assert led.block_card(card, txn_id="b-1", reason="stolen").applied
    assert led.deduct("O2", 10, txn_id="s-1", card_no=card).status is Status.CARD_BLOCKED
    assert led.resolve_card(card).status is Status.CARD_BLOCKED


# ---------------------------------------------------------------- property: faults and re-sends

POOL = ["100200", "13800000001", "13800000002", "M-1", "M-2", "M-3"]      # every kind of string, shared
PHONES = ["", "13800000001", "13800000002", "100200"]

OPS = st.lists(st.one_of(
    st.tuples(st.just("open"), st.sampled_from(POOL), st.sampled_from(PHONES)),
    st.tuples(st.just("issue"), st.sampled_from(POOL), st.sampled_from(POOL)),
    st.tuples(st.just("block"), st.sampled_from(POOL), st.sampled_from(["lost", "stolen"])),
    st.tuples(st.just("charge"), st.sampled_from(POOL), st.sampled_from([""] + POOL)),
    st.tuples(st.just("resend"), st.integers(0, 30)),               # an earlier request again, same txn id
), min_size=4, max_size=22)


def identities(led: Ledger) -> dict[str, set[str]]:
    """Every identity string -> the members it stands for, read from the members' own data."""
    out: dict[str, set[str]] = {}
    for part in led.partitions:
        for a in led.client.smembers(part.accounts):
            out.setdefault(a, set()).add(a)
            ph = led.client.hget(part.account(a), "ph")
            if ph:
                out.setdefault(ph, set()).add(a)
        for card, owner in led.client.hgetall(part.cards).items():
            out.setdefault(card, set()).add(owner)
    return out


@pytest.fixture(params=[1, 4], ids=["1-partition", "4-partitions"])
def two_ledgers(request, redis_url):
    """(a direct ledger, a ledger whose replies are dropped) over one database of
    `partitions` partitions: 4 on one server exercise the cross-slot paths."""
    direct = Ledger.from_url(redis_url, partitions=request.param)
    direct.client.flushdb()
    direct.init(partitions=request.param)
    with flaky_ledger(redis_url, drop_reply_probability=0.3, seed=11) as (flaky, _proxy):
        yield direct, flaky, request.param
    direct.close()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_interleaved_identity_operations_under_lost_replies_keep_the_invariants(two_ledgers, ops):
    direct, flaky, partitions = two_ledgers
    direct.client.flushdb()
    direct.init(partitions=partitions)
    blocked: set[str] = set()
    balances: dict[str, int] = {}
    decided: dict[str, Status] = {}        # txn id -> its first decision
    sent: list = []
    for n, op in enumerate(ops):
        if op[0] == "resend":
            if not sent:
                continue
            op, txn = sent[op[1] % len(sent)]
        else:
            txn = f"p-{n}"
            sent.append((op, txn))
        first = txn not in decided
        if op[0] == "open":
            r = until_answered(lambda: flaky.open_account(op[1], txn_id=txn, initial_minor=1_000,
                                                          phone=op[2] or None))
            if r.applied and first:
                balances[op[1]] = 1_000
        elif op[0] == "issue":
            r = until_answered(lambda: flaky.issue_card(op[1], op[2], txn_id=txn))
        elif op[0] == "block":
            r = until_answered(lambda: flaky.block_card(op[1], txn_id=txn, reason=op[2]))
            if r.status in (Status.APPLIED, Status.CARD_BLOCKED):
                blocked.add(op[1])
        else:
            account, card = op[1], op[2] or None
            before = direct.balance(account) if account in balances else None
            r = until_answered(lambda: flaky.deduct(account, 100, txn_id=txn, card_no=card))
            if first:
                if r.applied:
                    assert card not in blocked, (card, r)          # no charge through a blocked card
                    balances[account] -= 100
                elif before is not None:
                    assert direct.balance(account) == before
                if card in blocked:
                    # declined: as blocked, or earlier as not this account's card or no account
                    assert r.status in (Status.CARD_BLOCKED, Status.CARD_NOT_THIS_ACCOUNT,
                                        Status.ACCOUNT_NOT_FOUND), (card, r)
                    if account in balances and direct.resolve_card(card).account_id == account:
                        assert r.status is Status.CARD_BLOCKED, (card, r)
        if not first:
            assert r.status is decided[txn], (op, txn, r)          # a re-send answers the first decision
        decided.setdefault(txn, r.status)
        # after every step: no string stands for two members, and the look-up never
        # answers an ambiguity for data the scripts made
        for string, members in identities(direct).items():
            assert len(members) == 1, (string, members, ops[:n + 1])
            assert direct.resolve_card(string).status is not Status.LOOKUP_AMBIGUOUS
    for account, bal in balances.items():
        assert direct.balance(account) == bal


def test_a_charge_by_card_is_refunded_and_read_back_like_any_charge(ledger):
    assert open_member(ledger, "A", initial=1_000).applied
    assert ledger.issue_card("A", "CARD-A", txn_id="i-a").applied
    assert ledger.deduct("A", 300, txn_id="sale-1", card_no="CARD-A").applied
    assert ledger.refund("A", 300, txn_id="ref-1", original_txn_id="sale-1").applied
    assert ledger.hold("A", 200, txn_id="hold-1", ttl_s=60, card_no="CARD-A").applied
    assert ledger.hold_account("hold-1") == "A"
    assert ledger.capture("hold-1", 200, txn_id="cap-1").applied          # the account from the hold's record
    assert ledger.balance("A") == 800
