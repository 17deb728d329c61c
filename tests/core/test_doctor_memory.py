"""`cashierctl doctor` on memory (issue 33 item 2): used memory against maxmemory on a
real redis-server, ok under 70 %, warn from 70 %, FAIL (exit 1) from 85 %, and a warning
when no maxmemory is set (a full machine then swaps instead of Redis refusing writes)."""
from __future__ import annotations

import time

from admin.cashierctl import main
from core import Ledger
from core.doctor import FAIL, OK, WARN, diagnose
from tests.support.servers import RedisServer


def memory(ledger: Ledger, url: str):
    (finding,) = [f for f in diagnose(ledger, url) if f.check == "memory"]
    return finding


def fill(client, total_bytes: int) -> int:
    """Write about `total_bytes` in 1 KiB values, a few at a time, and answer the used
    memory once it is steady. (One 4 MiB SET would leave a 4 MiB query buffer that Redis
    frees a while later: the used memory then drops under the thresholds being tested.)"""
    pipe = client.pipeline(transaction=False)
    for i in range(total_bytes // 1024):
        pipe.set(f"filler:{i}", "x" * 1024)
        if i % 64 == 63:
            pipe.execute()
    pipe.execute()
    used = int(client.info("memory")["used_memory"])
    for _ in range(50):
        time.sleep(0.1)
        now = int(client.info("memory")["used_memory"])
        if abs(now - used) < used // 100:
            return now
        used = now
    return used


def test_memory_against_maxmemory(capsys):
    with RedisServer("--maxmemory-policy", "noeviction") as server:
        client = server.client()
        ledger = Ledger(client)
        ledger.init()
        finding = memory(ledger, server.url)
        assert finding.level == WARN and "no maxmemory set" in finding.detail and "capacity" in finding.fix
        used = fill(client, 4 * 1024 ** 2)
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
