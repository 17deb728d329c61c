"""`cashierctl doctor` warns about a TTL on a ledger key that must never expire (issue 25
item 8), naming the key and the seconds it has left, before it expires; the TTLs the
ledger sets by design (txn records) are not warned about. Real Redis."""
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
