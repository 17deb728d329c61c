"""The history checker's offline-settlement invariants (issue 27) can fail: a real history
of offline sales, a debt, refused spending and a top-up that pays the debt is judged clean;
the same journal with a debt that is not the overdraw, spending while a debt is open, a
top-up that did not pay the debt first, or Redis's debt differing is judged broken."""
from __future__ import annotations

import copy

from tests.properties.history import Request, check, execute, read_journal, record


def _history(ledger):
    reqs = [Request("open", "o-1", "A", 5_000), Request("offline", "f-1", "A", 4_000, "T1"),
            Request("offline", "f-2", "A", 3_000, "T2"), Request("deduct", "d-1", "A", 10),
            Request("credit", "c-1", "A", 1_500), Request("credit", "c-2", "A", 1_000),
            Request("deduct", "d-2", "A", 10), Request("offline", "f-1", "A", 4_000, "T1")]
    records = [record("h", i, q, execute(ledger, q)) for i, q in enumerate(reqs)]
    journal = read_journal(ledger.client, [p.journal for p in ledger.partitions])
    accounts = {"A": (ledger.balance("A"), "active")}
    return records, journal, accounts


def test_a_real_offline_history_is_clean_and_each_broken_variant_is_found(ledger):
    ledger.init()
    records, journal, accounts = _history(ledger)
    answers = {r["req"]["txn_id"]: r["answer"] for r in records}
    assert answers["f-2"]["debt_minor"] == 2_000 and answers["d-1"]["status"] == "DEBT_OPEN"
    assert answers["c-1"]["debt_minor"] == 1_500 and answers["c-2"]["debt_minor"] == 500
    assert answers["d-2"]["status"] == "APPLIED"
    debts = {"A": ledger.offline_debt("A")}
    assert debts == {"A": 0}
    assert check(records, journal, accounts, redis_debts=debts) == []

    def invariants(journal_, debts_=debts):
        return {v.invariant for v in check(records, journal_, accounts, redis_debts=debts_)}

    wrong_debt = copy.deepcopy(journal)
    entry = next(e for e in wrong_debt if e.get("kind") == "offline_debt")
    entry["dt"], entry["amt"], entry["bal"] = "1500", "-1500", "-500"        # more taken than was there
    assert "debt_is_overdraw" in invariants(wrong_debt)

    spent = copy.deepcopy(journal)
    deduct = next(e for e in spent if e.get("txn") == "d-2")
    spent.remove(deduct)
    at = next(i for i, e in enumerate(spent) if e.get("txn") == "c-1")
    spent.insert(at, deduct)                                                 # spent while the debt was open
    assert "nothing_while_debt" in invariants(spent)

    unpaid = copy.deepcopy(journal)
    top_up = next(e for e in unpaid if e.get("txn") == "c-2")
    top_up["dp"] = "400"                                                     # paid less than it could
    assert "debt_paid_first" in invariants(unpaid)

    assert "debt_equals_journal" in invariants(journal, {"A": 7})
