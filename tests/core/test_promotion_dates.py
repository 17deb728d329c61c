"""Promotions with start and end dates (issue 29: 充100送20 for a season): a promotion is
in force from its start until before its end, the bonus of a top-up is the best one in
force at that moment (the gateway decides with `bonus_for`, the till previews with
`best_promotion`), the script refuses an end not after the start, and a promotion
without dates is kept in the old form ('<min>:<bonus>') that every reader knows."""
from __future__ import annotations

import pytest

from core import InvalidRequest
from core.members import parse_promotion, settings_key

DAY_MS = 86_400_000
T0 = 1_767_225_600_000          # 2026-01-01T00:00Z


def test_bonus_follows_the_dates(ledger):
    ledger.init()
    ledger.add_promotion(10_000, 2_000, txn_id="p-always", promo_id="always")
    ledger.add_promotion(10_000, 3_000, txn_id="p-jan", promo_id="jan", starts_ms=T0, ends_ms=T0 + 31 * DAY_MS)
    ledger.add_promotion(10_000, 5_000, txn_id="p-from-feb", promo_id="feb-on", starts_ms=T0 + 31 * DAY_MS)
    assert ledger.bonus_for(10_000, at_ms=T0 - 1).promo_id == "always"
    assert ledger.bonus_for(10_000, at_ms=T0).promo_id == "jan"
    assert ledger.bonus_for(10_000, at_ms=T0 + 31 * DAY_MS - 1).promo_id == "jan"
    assert ledger.bonus_for(10_000, at_ms=T0 + 31 * DAY_MS).promo_id == "feb-on"      # the end is exclusive
    assert ledger.bonus_for(9_999, at_ms=T0) is None
    stored = ledger.client.hgetall(settings_key(ledger.partitions[0]))
    assert stored["promo:always"] == "10000:2000"
    assert stored["promo:jan"] == f"10000:3000:{T0}:{T0 + 31 * DAY_MS}"
    assert parse_promotion("jan", stored["promo:jan"]).in_force(T0 + DAY_MS)


def test_bad_dates_are_refused_by_python_and_by_the_script(ledger):
    ledger.init()
    with pytest.raises(InvalidRequest, match="ends_ms"):
        ledger.add_promotion(10_000, 2_000, txn_id="p-1", starts_ms=T0, ends_ms=T0)
    with pytest.raises(InvalidRequest, match="starts_ms"):
        ledger.add_promotion(10_000, 2_000, txn_id="p-2", starts_ms=-1)
    with pytest.raises(InvalidRequest, match="ends_ms"):          # the script's own check
        ledger._setting("promo:x", f"100:20:{T0}:{T0 - 1}", txn_id="p-3", every_partition=False,
                        terminal_id=None, cashier_id=None)
    with pytest.raises(InvalidRequest, match="promotion"):
        ledger._setting("promo:x", "100:20:5", txn_id="p-4", every_partition=False, terminal_id=None,
                        cashier_id=None)
    assert ledger.promotions() == []
