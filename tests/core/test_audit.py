"""core.audit (issue 29): a management action journaled as an `audit` entry. Property:
whatever records are sent, however often their replies are lost (a FaultyProxy drops
them; the caller sends the same record again until answered, like the back office's
form sent again), each distinct record is journaled exactly once, as the record its txn
id commits to, with who in `cash` and no account or amount; a changed record under a
used txn id is TXN_CONFLICT and journals nothing."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import InvalidRequest, TxnConflict
from core.audit import AuditRecord, check_record, record_action, record_digest_ok
from tests.support.flaky_ledger import faulty_fixture, until_answered
from core.journal_codec import read_range
from core.runner import reply_status

faulty = faulty_fixture(drop_reply_probability=0.3, seed=29)

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
records = st.builds(AuditRecord, who=st.sampled_from(["boss", "mgr", "a@b.cn"]),
                    action=st.sampled_from(["members.open", "cards.block", "users.role"]), target=texts,
                    summary=texts, address=st.sampled_from(["127.0.0.1", "10.0.0.9", "::1"]),
                    nonce=st.text("0123456789abcdef", min_size=8, max_size=8))


def _audit_entries(ledger) -> list[dict]:
    part = ledger.schema.partition_of("backoffice")
    return [f for _, f in read_range(ledger.client, part.journal) if f.get("kind") == "audit"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(records, min_size=1, max_size=6), resend=st.integers(1, 3))
def test_each_record_is_journaled_once_whatever_replies_are_lost(faulty, ledger, batch, resend):
    flaky, _ = faulty
    for record in batch:
        for _ in range(resend):
            result = until_answered(lambda: record_action(flaky, record))
            assert result.applied and result.txn_id == record.txn_id
    # (the database is shared by the examples, and hypothesis may send a record again)
    entries = _audit_entries(ledger)
    txns = [f["txn"] for f in entries]
    wanted = {r.txn_id: r for r in batch}
    assert len(txns) == len(set(txns)) and set(wanted) <= set(txns)      # once each, none lost
    for f in (f for f in entries if f["txn"] in wanted):
        assert record_digest_ok(f["txn"], f["rec"]) and f["acct"] == "~" and f["amt"] == "0"
        assert json.loads(f["rec"])["who"] == wanted[f["txn"]].who
        assert f["term"] == "backoffice"


def test_another_record_under_a_used_txn_id_is_a_conflict(ledger):
    ledger.init()
    first = AuditRecord(who="boss", action="members.open", target="M-1", nonce="00ff00ff")
    assert record_action(ledger, first).applied
    part = ledger.schema.partition_of("backoffice")
    reply = ledger.runner.scripts.call(ledger.client, "audit", [part.txn(first.txn_id), part.journal],
                                       [first.txn_id, "backoffice", ledger.retention_s, "boss",
                                        first.text().replace("M-1", "M-2")])
    assert reply_status(reply) == "TXN_CONFLICT"
    assert len(_audit_entries(ledger)) == 1


@pytest.mark.parametrize("record, field", [
    (AuditRecord(who="", action="members.open"), "who"),
    (AuditRecord(who="boss", action="members open"), "action"),
    (AuditRecord(who="boss", action="members.open", summary="x" * 501), "summary"),
    (AuditRecord(who="boss", action="members.open", refs=("bad ref",)), "refs"),
])
def test_bad_records_name_the_field(record, field):
    with pytest.raises(InvalidRequest) as refused:
        check_record(record)
    assert refused.value.field == field
