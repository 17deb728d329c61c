"""Rules the gateway decides, not the till: a top-up's bonus is the promotion in force's.
A till that sends a bonus no promotion grants (made up, or a preview made before a
promotion changed) is refused with `bonus_changed` and the bonus in force, nothing applied;
a retry of a top-up already applied gets its first answer even after the promotion changed.
The property test interleaves promotion changes, previews right and wrong, and replies
dropped after the gateway applied (a fault proxy), and checks the money on Redis."""
from __future__ import annotations

import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import LedgerUnavailable, Status
from gateway.wire import GatewayRefused
from tests.gateway.conftest import make_client
from tests.properties.workload import RobustProxy


def _refused_bonus(call) -> GatewayRefused:
    with pytest.raises(GatewayRefused) as caught:
        call()
    assert caught.value.code == "bonus_changed" and caught.value.field == "bonus_minor"
    return caught.value


def test_a_bonus_no_promotion_grants_is_refused_and_nothing_changes(till, shop):
    assert till.open_account("R1", txn_id="T1-o-r1").applied
    refused = _refused_bonus(lambda: till.credit("R1", 10_000, txn_id="T1-c-r1", bonus_minor=500_000))
    assert refused.detail["expected_bonus_minor"] == 0
    assert shop.balance("R1") == 0
    assert shop.balances("R1") == (0, 0)
    # the same txn id, now with the right bonus (none), is a fresh decision: nothing was recorded
    assert till.credit("R1", 10_000, txn_id="T1-c-r1").applied
    assert shop.balance("R1") == 10_000


def test_the_bonus_in_force_is_applied_and_a_stale_preview_is_refused(till, shop):
    assert till.open_account("R2", txn_id="T1-o-r2").applied
    shop.add_promotion(10_000, 2_000, txn_id="adm-p-1", promo_id="p100")
    # the till previewed before the promotion started: shown no bonus, so asked again
    refused = _refused_bonus(lambda: till.credit("R2", 10_000, txn_id="T1-c-r2a"))
    assert refused.detail["expected_bonus_minor"] == 2_000
    # below the promotion's threshold no bonus is right
    assert till.credit("R2", 9_999, txn_id="T1-c-r2b").applied
    top = till.credit("R2", 10_000, txn_id="T1-c-r2c", bonus_minor=2_000)
    assert top.status is Status.APPLIED and top.balance_minor == 9_999 + 12_000
    assert shop.account("R2").bonus_minor == 2_000
    # the promotion ends; a retry of the applied top-up gets its first answer, nothing new
    shop.remove_promotion("p100", txn_id="adm-p-2")
    again = till.credit("R2", 10_000, txn_id="T1-c-r2c", bonus_minor=2_000)
    assert again.replayed and again.balance_minor == top.balance_minor
    # a new top-up with the old preview is refused now
    assert _refused_bonus(lambda: till.credit("R2", 10_000, txn_id="T1-c-r2d", bonus_minor=2_000)) \
        .detail["expected_bonus_minor"] == 0
    assert shop.balance("R2") == 9_999 + 12_000


@pytest.mark.slow
def test_random_promotions_previews_and_lost_replies(gateway, shop, till):
    proxy = RobustProxy(gateway.port, drop_reply_probability=0.3, seed=11).start()
    client = make_client(gateway, shop.tokens["T1"], sign_in=None, urls=[f"http://127.0.0.1:{proxy.port}"],
                         timeout_s=2.0)
    client.session = till.session
    tiers = [(5_000, 500), (10_000, 2_000), (20_000, 5_000)]
    seen: Counter = Counter()

    step = st.one_of(
        st.tuples(st.just("promo_on"), st.integers(0, len(tiers) - 1)),
        st.tuples(st.just("promo_off"), st.integers(0, len(tiers) - 1)),
        st.tuples(st.just("topup"), st.sampled_from([1, 4_999, 5_000, 9_999, 10_000, 25_000]),
                  st.sampled_from(["right", "none", "made_up"])),
    )

    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(step, min_size=3, max_size=14))
    def run(steps):
        account = f"RP{uuid.uuid4().hex[:10]}"
        assert till.open_account(account, txn_id=f"T1-o-{account}").applied
        in_force: dict[int, tuple[int, int]] = {}
        expected_minor = 0
        expected_bonus_minor = 0
        unknown: list[tuple[str, int, int, int]] = []      # txn id, amount, bonus sent, bonus in force then
        for n, item in enumerate(steps):
            if item[0] == "promo_on":
                min_minor, bonus_minor = tiers[item[1]]
                shop.add_promotion(min_minor, bonus_minor, txn_id=f"adm-{account}-{n}", promo_id=f"t{item[1]}")
                in_force[item[1]] = (min_minor, bonus_minor)
                continue
            if item[0] == "promo_off":
                if in_force.pop(item[1], None) is not None:
                    shop.remove_promotion(f"t{item[1]}", txn_id=f"adm-{account}-{n}")
                continue
            _, amount_minor, preview = item
            reached = [b for m, b in in_force.values() if m <= amount_minor]
            granted_minor = max(reached, default=0)
            sent_minor = {"right": granted_minor, "none": 0, "made_up": granted_minor + 777}[preview]
            txn_id = f"T1-c-{account}-{n}"
            try:
                answer = client.credit(account, amount_minor, txn_id=txn_id, bonus_minor=sent_minor)
            except GatewayRefused as exc:
                assert exc.code == "bonus_changed" and sent_minor != granted_minor
                assert exc.detail["expected_bonus_minor"] == granted_minor
                seen["refused"] += 1
                continue
            except LedgerUnavailable:
                seen["unknown"] += 1
                unknown.append((txn_id, amount_minor, sent_minor, granted_minor))
                continue
            assert sent_minor == granted_minor and answer.applied
            expected_minor += amount_minor + granted_minor
            expected_bonus_minor += granted_minor
        # the outbox re-sends every unanswered top-up with the same body: each counts once,
        # and only if its bonus was the one in force when the gateway decided it
        reached_now = lambda amount_minor: max([b for m, b in in_force.values() if m <= amount_minor], default=0)
        for txn_id, amount_minor, sent_minor, granted_minor in unknown:
            for _ in range(5):
                try:
                    answer = till.credit(account, amount_minor, txn_id=txn_id, bonus_minor=sent_minor)
                except GatewayRefused as exc:
                    # never applied, and its bonus is not the one in force now
                    assert exc.code == "bonus_changed" and sent_minor != reached_now(amount_minor)
                    break
                except LedgerUnavailable:
                    continue
                assert answer.applied
                seen["replayed" if answer.replayed else "applied_late"] += 1
                # applied at its first send (then its bonus was in force) or now (in force now)
                assert sent_minor == (granted_minor if answer.replayed else reached_now(amount_minor))
                expected_minor += amount_minor + sent_minor
                expected_bonus_minor += sent_minor
                break
        assert shop.balance(account) == expected_minor
        assert shop.account(account).bonus_minor == expected_bonus_minor
        for tier in list(in_force):
            shop.remove_promotion(f"t{tier}", txn_id=f"adm-{account}-end-{tier}")

    try:
        run()
    finally:
        client.close()
        proxy.close()
    # the test saw what it is about: refusals, lost replies, and retries answered first-hand
    assert seen["refused"] and seen["unknown"] and seen["replayed"] and proxy.dropped_replies, seen
