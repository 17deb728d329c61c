"""The shipped deploy/sentinel/ files work as written: three Redis nodes and three
sentinels started from them (only addresses, ports, paths and passwords replaced, as the
docs tell an installer to), the ledger's users appended to users.acl the documented way,
`cashierctl doctor` clean for what a failover needs, and a charge through a SIGKILL of
the primary with the files' own timeouts."""
from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import redis

from admin.cashierctl import build_parser
from core import Ledger, LedgerUnavailable
from core.acl import ledger_users
from core.doctor import WARN, diagnose
from tests.faults.test_cluster_failover import record
from tests.support.servers import free_port, wait_for

pytestmark = pytest.mark.slow
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "sentinel"
PASSWORDS = {"REPLICATION-PASSWORD": "repl-pw-1", "SENTINEL-NODE-PASSWORD": "sn-pw-2",
             "SENTINEL-PASSWORD": "sent-pw-3"}
LAN = ("10.0.0.5", "10.0.0.11", "10.0.0.12")


def _fill(text: str, ports: dict[str, int], sentinel: bool) -> str:
    for placeholder, value in PASSWORDS.items():
        text = text.replace(placeholder, value)
    text = re.sub(r"^bind .*$", "bind 127.0.0.1", text, flags=re.M)
    for address, port in ports.items():     # 10.0.0.x 6379 -> 127.0.0.1 <its port>
        text = text.replace(f"{address} 6379", f"127.0.0.1 {port}")
    return text


class Machine:
    def __init__(self, address: str, primary: str, ports: dict[str, int], users_acl: str):
        self.address, self.port, self.sentinel_port = address, ports[address], free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="cashier-shop-"))
        conf = _fill((DEPLOY / "redis.conf").read_text(), ports, False)
        conf = re.sub(r"^port 6379$", f"port {self.port}", conf, flags=re.M)
        conf = conf.replace("aclfile /etc/redis/users.acl", f"aclfile {self.dir / 'users.acl'}")
        if address != primary:
            conf = conf.replace(f"# replicaof 127.0.0.1 {ports[primary]}", f"replicaof 127.0.0.1 {ports[primary]}")
        conf += f"\ndir {self.dir}\nlogfile {self.dir / 'redis.log'}\nmaxmemory 64mb\n"
        (self.dir / "redis.conf").write_text(conf)
        (self.dir / "users.acl").write_text(users_acl)
        sconf = _fill((DEPLOY / "sentinel.conf").read_text(), ports, True)
        sconf = re.sub(r"^port 26379$", f"port {self.sentinel_port}", sconf, flags=re.M)
        sconf += f"\ndir {self.dir}\nlogfile {self.dir / 'sentinel.log'}\n"
        (self.dir / "sentinel.conf").write_text(sconf)
        self.redis = self.sentinel = None

    def start(self) -> None:
        self.redis = subprocess.Popen(["redis-server", str(self.dir / "redis.conf")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = redis.Redis(port=self.port, username="cashier-sentinel", password=PASSWORDS["SENTINEL-NODE-PASSWORD"])
        wait_for(probe.ping, 20, f"redis from {self.dir / 'redis.conf'}")

    def start_sentinel(self) -> None:
        self.sentinel = subprocess.Popen(["redis-server", str(self.dir / "sentinel.conf"), "--sentinel"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(redis.Redis(port=self.sentinel_port, password=PASSWORDS["SENTINEL-PASSWORD"]).ping, 20,
                 "sentinel")

    def cleanup(self) -> None:
        for proc in (self.redis, self.sentinel):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def test_the_shipped_sentinel_files_ride_a_failover():
    ports = {address: free_port() for address in LAN}
    users = ledger_users("term-pw-4", "rec-pw-5", "adm-pw-6")
    # docs/deployment.md: `cashierctl acl ... | sed -e 's/^ACL SETUSER /user /' -e 's/"//g' >> users.acl`
    users_acl = _fill((DEPLOY / "users.acl").read_text(), ports, False) + "".join(
        re.sub(r"^ACL SETUSER ", "user ", u.line()).replace('"', "") + "\n" for u in users)
    machines = [Machine(a, LAN[0], ports, users_acl) for a in LAN]
    try:
        for m in machines:
            m.start()
        for m in machines:
            m.start_sentinel()
        hosts = ",".join(f"127.0.0.1:{m.sentinel_port}" for m in machines)
        query = f"sentinel_password={PASSWORDS['SENTINEL-PASSWORD']}&wait_replicas=1"
        admin_url = f"redis+sentinel://admin:adm-pw-6@{hosts}/cashier/0?{query}"
        till_url = f"redis+sentinel://gateway:term-pw-4@{hosts}/cashier/0?{query}"
        assert build_parser().parse_args(["--redis-url", admin_url, "doctor"]).redis_url == admin_url
        admin = Ledger.from_url(admin_url)

        def settled():
            views = [redis.Redis(port=m.sentinel_port, password=PASSWORDS["SENTINEL-PASSWORD"],
                                 decode_responses=True).sentinel_master("cashier") for m in machines]
            return all(int(v["num-other-sentinels"]) == 2 and int(v["num-slaves"]) == 2 for v in views)
        wait_for(settled, 60, "the sentinels of the shipped files")
        admin.init()
        admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000)
        till = Ledger.from_url(till_url, auto_init=False)
        assert till.deduct("A-1", 100, txn_id="d-1").balance_minor == 900
        warnings = [f for f in diagnose(admin, admin_url) if f.level == WARN
                    and f.check in ("sentinel", "failover", "replicas", "persistence", "min-replicas",
                                    "wait", "scripts")]
        assert not warnings, warnings
        machines[0].redis.send_signal(signal.SIGKILL)
        machines[0].redis.wait(10)
        killed_at, unknown = time.monotonic(), 0
        while True:                              # the till's outbox: the same txn id until decided
            try:
                result = till.deduct("A-1", 100, txn_id="d-2")
                break
            except LedgerUnavailable:
                unknown += 1
        figures = {"down_after_ms": 2000, "kill_to_first_charge_s": round(time.monotonic() - killed_at, 2),
                   "unknown_outcomes_retried": unknown}
        record("shipped deploy/sentinel files, primary SIGKILLed, wait_replicas=1", figures)
        print(figures)
        assert result.balance_minor == 800 and not result.replayed
        assert till.client.connection_pool.get_master_address()[1] != machines[0].port
        till.close()
        admin.close()
    finally:
        for m in machines:
            m.cleanup()
