"""`cashierctl doctor` on a real Sentinel deployment: what a failover needs (a reachable
sentinel quorum, replicas with AOF on and the scripts loaded, WAIT-acknowledged writes,
min-replicas-to-write), each finding switched from ok to warn by changing the real
deployment."""
from __future__ import annotations

import pytest

from admin.cashierctl import main
from core import Ledger
from core.doctor import OK, WARN, diagnose
from tests.support.servers import RedisSentinelServers

pytestmark = pytest.mark.slow


def levels(ledger, url, check) -> list[tuple[str, str]]:
    return [(f.level, f.detail) for f in diagnose(ledger, url) if f.check == check]


def test_doctor_checks_what_a_failover_needs(capsys):
    args = ("--appendonly", "yes", "--appendfsync", "always", "--min-replicas-to-write", "1", "--min-replicas-max-lag", "5")
    with RedisSentinelServers(replicas=2, redis_args=args) as deploy:
        url = deploy.url()
        ledger = Ledger.from_url(url)
        ledger.init()
        ledger.open_account("A-1", txn_id="open-A-1", initial_minor=100)
        assert all(level == OK for level, _ in levels(ledger, url, "sentinel"))
        assert all(level == OK for level, _ in levels(ledger, url, "persistence"))
        assert levels(ledger, url, "min-replicas") == []
        assert levels(ledger, url, "replicas") == [(OK, "the primary has 2 replicas")]
        # writes acknowledged without WAIT: warned; once the tills use WAIT: fine
        ledger.deduct("A-1", 1, txn_id="d-1")
        assert [level for level, _ in levels(ledger, url, "wait")] == [WARN]
        Ledger.from_url(url, wait_replicas=1).deduct("A-1", 1, txn_id="d-2")
        assert [level for level, _ in levels(ledger, url, "wait")] == [OK]
        # a replica without AOF and without the scripts
        replica = deploy.replicas()[0]
        deploy.node_client(replica).config_set("appendonly", "no")
        # a replica that lost the function library (it arrives by replication, so only a
        # replica taking writes of its own can lose it)
        deploy.node_client(replica).config_set("replica-read-only", "no")
        deploy.node_client(replica).function_flush()
        warned = [d for level, d in levels(ledger, url, "persistence") if level == WARN]
        assert len(warned) == 1 and str(replica.port) in warned[0] and "AOF off" in warned[0]
        assert any(str(replica.port) in d for level, d in levels(ledger, url, "scripts") if level == WARN)
        # min-replicas-to-write 0 on the primary
        deploy.node_client(deploy.primary()).config_set("min-replicas-to-write", "0")
        assert [level for level, _ in levels(ledger, url, "min-replicas")] == [WARN]
        # two of three sentinels gone: no quorum, no failover
        deploy.sentinels[1].kill()
        deploy.sentinels[2].kill()
        (level, detail), = levels(ledger, url, "sentinel")
        assert level == WARN and "cannot happen" in detail
        assert main(["--redis-url", url, "doctor"]) == 1       # the primary's own AOF is on; ACL is open
        out = capsys.readouterr().out
        assert "a failover cannot happen" in out and "fix:" in out
        ledger.close()
