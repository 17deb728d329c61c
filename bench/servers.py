"""Private servers for the benchmark: a redis-server (or a 3-master Redis Cluster) on
free loopback ports in temp directories, started and stopped by the bench, and a
dedicated PostgreSQL database (`cashier_bench` by default) created on the machine's
PostgreSQL. Nothing here touches another user's Redis keys or database: the bench
never connects to 127.0.0.1:6379 and only drops/creates tables in its own database.
Servers run with persistence off (`--save "" --appendonly no`), which the report says.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_cluster_port() -> int:
    """A free port <= 55535 whose cluster bus port (+10000) is free too."""
    import random
    for _ in range(200):
        port = random.randint(20000, 55000)
        if _is_free(port) and _is_free(port + 10000):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def wait_for(predicate, timeout_s: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


class PrivateRedis:
    """One redis-server on a free loopback port, in its own temp directory."""

    def __init__(self, *extra_args: str, port: int | None = None):
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="cashier-bench-redis-"))
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "PrivateRedis":
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--appendonly", "no",
                "--maxmemory-policy", "noeviction",
                "--logfile", str(self.dir / "redis.log"), *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: redis.Redis(port=self.port, socket_timeout=0.5).ping(),
                 what=f"redis-server on {self.port}")
        return self

    def client(self, **kw) -> redis.Redis:
        return redis.Redis(port=self.port, decode_responses=True, **kw)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateCluster:
    """A real Redis Cluster of `masters` primaries (no replicas) on loopback."""

    def __init__(self, masters: int = 3):
        self.masters = masters
        self.nodes: list[PrivateRedis] = []

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start(self) -> "PrivateCluster":
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> "PrivateCluster":
        for _ in range(self.masters):
            node = PrivateRedis("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                "--cluster-node-timeout", "5000", port=free_cluster_port())
            self.nodes.append(node)
            node.start()
        addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-replicas", "0",
                        "--cluster-yes"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=60)

        def ready() -> bool:
            return all(n.client().cluster("info")["cluster_state"] == "ok" for n in self.nodes)
        wait_for(ready, 30, "cluster state ok")
        return self

    def flush(self) -> None:
        for node in self.nodes:
            c = node.client()
            c.flushall()
            c.close()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


PG_DSN_ADMIN_CANDIDATES = (
    "host=127.0.0.1 port=5432 user=postgres dbname=postgres",
    "host=127.0.0.1 port=5432 user=root dbname=postgres",
    "host=127.0.0.1 port=5432 user=postgres dbname=test",
    "host=127.0.0.1 port=5432 user=root dbname=test",
)


def pg_bench_dsn(database: str = "cashier_bench") -> str:
    """Create (if missing) the bench's own PostgreSQL database and answer its DSN.

    Tries the roles the machine has (postgres, root) with trust auth; the environment
    variable CASHIER_BENCH_PG_DSN overrides everything.
    """
    import psycopg

    if os.environ.get("CASHIER_BENCH_PG_DSN"):
        return os.environ["CASHIER_BENCH_PG_DSN"]
    last_error: Exception | None = None
    for admin in PG_DSN_ADMIN_CANDIDATES:
        try:
            with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
                exists = conn.execute("select 1 from pg_database where datname = %s",
                                      (database,)).fetchone()
                if not exists:
                    conn.execute(f'create database "{database}"')
            user = dict(part.split("=") for part in admin.split())["user"]
            return f"host=127.0.0.1 port=5432 user={user} dbname={database}"
        except Exception as exc:  # try the next role
            last_error = exc
    raise RuntimeError(f"no PostgreSQL role could create {database}: {last_error}")
