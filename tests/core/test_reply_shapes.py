"""Issue 30: a script's decision is one string 'status|balance|replayed|detail'; the
client also takes the 4-element array a script not converted still answers, and both
give the same Result or the same error. Against a real Redis: the scripts answer the
string, a number in a journal extra is written as exact digits."""
from __future__ import annotations

import pytest

from core.errors import InvalidRequest, TxnConflict
from core.journal_codec import read_range
from core.runner import decode, reply_status


@pytest.mark.parametrize("reply", ["APPLIED|380|1|1700-0", ["APPLIED", "380", 1, "1700-0"]])
def test_both_reply_shapes_decode_alike(reply):
    r = decode(reply, "deduct", "A-1", 120, "t-1")
    assert (r.status.value, r.balance_minor, r.replayed, r.journal_id) == ("APPLIED", 380, True, "1700-0")
    assert reply_status(reply) == "APPLIED"


@pytest.mark.parametrize("reply", ["TXN_CONFLICT|0|0|deduct|A-1|99", ["TXN_CONFLICT", "0", 0, "deduct|A-1|99"]])
def test_a_conflict_keeps_the_stored_fingerprint_with_its_separators(reply):
    with pytest.raises(TxnConflict) as exc:
        decode(reply, "deduct", "A-1", 120, "t-1")
    assert "deduct|A-1|99" in str(exc.value)


def test_an_invalid_string_reply_names_the_field():
    with pytest.raises(InvalidRequest) as exc:
        decode("INVALID|0|0|amount_minor: must be 1..", "deduct", "A-1", 0, "t-1")
    assert exc.value.field == "amount_minor"


def test_the_scripts_answer_one_string(ledger):
    ledger.open_account("A-1", txn_id="o-1", initial_minor=500)
    part = ledger.schema.partition_of("A-1")
    keys = part.deduct_keys("A-1", "d-1")
    args = ["d-1", "A-1", "120", ledger.retention_s, "T1", "C1", ""]
    first = ledger.client.fcall(ledger.scripts.function("deduct"), len(keys), *keys, *args)
    again = ledger.client.fcall(ledger.scripts.function("deduct"), len(keys), *keys, *args)
    jid = read_range(ledger.client, part.journal)[-1][0]
    assert (first, again) == (f"APPLIED|380|0|{jid}", f"APPLIED|380|1|{jid}")
    hold = ledger.hold("A-1", 80, txn_id="h-1", ttl_s=600)
    entry = read_range(ledger.client, part.journal, hold.journal_id, hold.journal_id)[0][1]
    assert entry["held"] == "80" and entry["exp"].isdigit() and len(entry["exp"]) == 13
