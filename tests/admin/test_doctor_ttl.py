"""`cashierctl doctor` warns about a TTL on a ledger key that must never expire (issue 25
item 8), naming the key and the seconds it has left, before it expires; the TTLs the
ledger sets by design (txn records, the gateway's sessions and supervisor grants) are not
warned about. Real Redis."""
from __future__ import annotations

from admin.cashierctl import main
from core import Ledger


def test_doctor_warns_about_a_ttl_on_a_stream_and_an_account(redis_url, capsys):
    ledger = Ledger.from_url(redis_url)
    try:
        ledger.init()
        ledger.open_account("A-1", txn_id="open-A-1", initial_minor=100)     # its txn record has a TTL
        main(["--redis-url", redis_url, "doctor"])
        out = capsys.readouterr().out
        assert "[  ok] ttl" in out and "[warn] ttl" not in out, out
        stream, account = ledger.partitions[0].journal, ledger.schema.partition_of("A-1").account("A-1")
        ledger.client.expire(stream, 86_400)
        ledger.client.expire(account, 600)
        main(["--redis-url", redis_url, "doctor"])
        out = capsys.readouterr().out
        warned = [line for line in out.splitlines() if line.startswith("[warn] ttl")]
        assert any(stream in line and "expires in 86400 s" in line for line in warned), out
        assert any(account in line and "expires in 600 s" in line for line in warned), out
    finally:
        ledger.close()


def test_the_gateways_sessions_and_grants_expire_by_design(redis_url, capsys):
    """A signed-in cashier's session and an unused supervisor grant carry a TTL (gateway/
    sessions.py): neither doctor nor the reconcile pass (the same core.key_ttls) calls it a
    ledger key about to expire; a key of another shape under cs:session: still is."""
    from gateway.sessions import GrantStore, SessionStore
    ledger = Ledger.from_url(redis_url)
    try:
        ledger.init()
        SessionStore(ledger.client).open("c1", "T1")
        GrantStore(ledger.client).issue("sup", "T1", "c1", "refund")
        main(["--redis-url", redis_url, "doctor"])
        out = capsys.readouterr().out
        assert "[  ok] ttl" in out and "[warn] ttl" not in out, out
        ledger.client.set("cs:session:stray", "1", ex=600)
        main(["--redis-url", redis_url, "doctor"])
        warned = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[warn] ttl")]
        assert len(warned) == 1 and "cs:session:stray expires in" in warned[0], warned
    finally:
        ledger.close()
