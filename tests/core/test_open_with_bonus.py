"""Opening an account with a bonus and an import reference (issue 29): validated in
Python and again in the script, journaled as one open entry with pd / bd / imp, and the
same on a Redis Cluster, where `core.member_import` opens members one at a time."""
from __future__ import annotations

import csv

import pytest

from core import InvalidRequest, Ledger, TxnConflict
from core import member_import as mi
from core.validation import MAX_AMOUNT_MINOR
from core.journal_codec import read_range


def _open_entry(ledger: Ledger, account_id: str) -> dict:
    part = ledger.schema.partition_of(account_id)
    return [f for _, f in read_range(ledger.client, part.journal) if f.get("acct") == account_id
            and f["kind"] == "open"][0]


def test_open_with_bonus_and_reference(ledger):
    ledger.init()
    r = ledger.open_account("B-1", txn_id="imp:B-1", initial_minor=MAX_AMOUNT_MINOR, bonus_minor=MAX_AMOUNT_MINOR,
                            import_ref="旧系统 #7", holder_name="张三")
    assert r.applied and r.balance_minor == 2 * MAX_AMOUNT_MINOR
    info = ledger.account("B-1")
    assert (info.balance_minor, info.bonus_minor) == (2 * MAX_AMOUNT_MINOR, MAX_AMOUNT_MINOR)
    e = _open_entry(ledger, "B-1")
    assert (e["amt"], e["bal"], e["pd"], e["bd"], e["imp"]) == ("200000000000", "200000000000", "100000000000",
                                                                "100000000000", "旧系统 #7")
    # a plain open keeps the old fingerprint and entry (no pd / bd / imp)
    ledger.open_account("P-1", txn_id="o-P-1", initial_minor=500)
    assert not {"pd", "bd", "imp"} & set(_open_entry(ledger, "P-1"))
    with pytest.raises(TxnConflict):
        ledger.open_account("B-1", txn_id="imp:B-1", initial_minor=MAX_AMOUNT_MINOR, bonus_minor=1,
                            import_ref="旧系统 #7")


@pytest.mark.parametrize("kwargs, field", [
    (dict(bonus_minor=-1), "bonus_minor"), (dict(bonus_minor=1.5), "bonus_minor"),
    (dict(bonus_minor=True), "bonus_minor"), (dict(bonus_minor=MAX_AMOUNT_MINOR + 1), "bonus_minor"),
    (dict(import_ref="a\nb"), "import_ref"), (dict(import_ref="x" * 65), "import_ref"),
    (dict(import_ref=7), "import_ref")])
def test_bad_bonus_or_reference_is_refused_naming_the_field(ledger, kwargs, field):
    ledger.init()
    with pytest.raises(InvalidRequest) as exc:
        ledger.open_account("B-2", txn_id="imp:B-2", initial_minor=1, **kwargs)
    assert exc.value.field == field
    assert not ledger.client.exists(ledger.schema.partition_of("B-2").account("B-2"))


def test_the_script_checks_bonus_and_reference_itself(ledger):
    """A client that skips Python's checks: the script refuses them (INVALID)."""
    ledger.init()
    part = ledger.partitions[0]
    fn = ledger.scripts.function("open_account")
    keys = [part.account("S-1"), part.txn("t"), part.journal, part.accounts, part.prefix + "mx", part.card("S-1"),
            part.phones]
    base = ["t", "S-1", "100", "86400", "", "", "", "", "", "", ""]
    for bonus, ref, field in (("1.5", "", "bonus_minor"), ("-3", "", "bonus_minor"),
                              (str(MAX_AMOUNT_MINOR + 1), "", "bonus_minor"), ("0", "a\x01", "import_ref")):
        reply = ledger.client.fcall(fn, len(keys), *keys, *base, bonus, ref)
        assert reply[0] == "INVALID" and reply[3].startswith(field), reply
    assert not ledger.client.exists(part.account("S-1"))


@pytest.mark.cluster
def test_import_on_a_cluster_one_member_at_a_time(cluster_ledger, tmp_path):
    cluster_ledger.init()
    path = tmp_path / "c.csv"
    with open(path, "w", encoding="gbk", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["会员卡号", "姓名", "手机号", "余额", "赠送余额"])
        for i in range(40):
            w.writerow([f"55{i:04d}", f"会员{i}", f"1380000{i:04d}", f"{i}.25", "1"])
        w.writerow(["550001", "重复", "", "1", "0"])
    table = mi.read_table(str(path))
    plan = mi.plan_import(table, None, cluster_ledger)
    assert [(p.line, p.field) for p in plan.problems] == [(42, "card")]
    out = mi.apply_import(plan, cluster_ledger)
    assert len(out.created) == 40 and out.cards_issued == 40 and not out.declined
    again = mi.apply_import(mi.plan_import(table, None, cluster_ledger), cluster_ledger)
    assert len(again.replayed) == 40 and again.cards_replayed == 40
    info = cluster_ledger.account("550007")
    assert (info.balance_minor, info.bonus_minor) == (825, 100)
    assert cluster_ledger.resolve_card("550007").account_id == "550007"
    assert cluster_ledger.find_members("13800000007")[0].account_id == "550007"
    rows = mi.export_members(cluster_ledger)
    assert len(rows) == 40 and sum(r.principal_minor for r in rows) == sum(i * 100 + 25 for i in range(40))
