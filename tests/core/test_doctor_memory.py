"""`cashierctl doctor` on memory (issue 33 item 2): used memory against maxmemory on a
real redis-server, ok under 70 %, warn from 70 %, FAIL (exit 1) from 85 %, and a warning
when no maxmemory is set (a full machine then swaps instead of Redis refusing writes)."""
from __future__ import annotations

from admin.cashierctl import main
from core import Ledger
from core.doctor import FAIL, OK, WARN, diagnose
from tests.support.servers import RedisServer


def memory(ledger: Ledger, url: str):
    (finding,) = [f for f in diagnose(ledger, url) if f.check == "memory"]
    return finding


def test_memory_against_maxmemory(capsys):
    with RedisServer("--maxmemory-policy", "noeviction") as server:
        client = server.client()
        ledger = Ledger(client)
        ledger.init()
        finding = memory(ledger, server.url)
        assert finding.level == WARN and "no maxmemory set" in finding.detail and "capacity" in finding.fix
        client.set("filler", "x" * (4 * 1024 ** 2))
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory", int(used / 0.5))
        finding = memory(ledger, server.url)
        assert finding.level == OK and "of maxmemory" in finding.detail
        client.config_set("maxmemory", int(used / 0.75))
        finding = memory(ledger, server.url)
        assert finding.level == WARN and "above 70%" in finding.detail
        client.config_set("maxmemory", int(used / 0.9))
        finding = memory(ledger, server.url)
        assert finding.level == FAIL and "above 85%" in finding.detail and "refused" in finding.detail
        assert main(["--redis-url", server.url, "doctor"]) == 1
        out = capsys.readouterr().out
        assert "[FAIL] memory" in out and "raise maxmemory" in out
