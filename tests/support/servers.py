"""Real servers that tests start and stop themselves: private redis-server processes
and a 3-master Redis Cluster on free loopback ports. Nothing here fakes Redis."""
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


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port(*, cluster_bus: bool = False) -> int:
    """A free loopback port (below 55535 and with port+10000 free too when `cluster_bus`,
    because Redis Cluster listens on its port + 10000 as well)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not cluster_bus:
            return port
        if port < 55535 and _bindable(port + 10000):
            return port


def wait_for(predicate, timeout_s: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


def _answers(port: int) -> bool:
    """The server is up, even if it wants a password first."""
    try:
        return redis.Redis(port=port, socket_timeout=0.5).ping()
    except (redis.AuthenticationError, redis.ResponseError) as exc:
        return "NOAUTH" in str(exc) or "AUTH" in str(exc).upper()


class RedisServer:
    """One redis-server process on a free port, in its own temp directory."""

    def __init__(self, *extra_args: str, port: int | None = None, directory: Path | None = None):
        self.port = port or free_port()
        self.dir = Path(directory or tempfile.mkdtemp(prefix="cashier-redis-"))
        self.extra_args = list(extra_args)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--appendonly", "no",
                "--logfile", str(self.dir / "redis.log"), *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: _answers(self.port), what=f"redis on {self.port}")
        return self

    def client(self, **kw) -> redis.Redis:
        return redis.Redis(port=self.port, decode_responses=True, **kw)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()


class RedisClusterServers:
    """A real Redis Cluster: `masters` primaries (and `replicas` per primary) on loopback."""

    def __init__(self, masters: int = 3, replicas: int = 0):
        self.masters, self.replicas = masters, replicas
        self.nodes: list[RedisServer] = []

    @property
    def url(self) -> str:
        """Every node as a seed, so clients survive any one node's death."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self, attempts: int = 3) -> "RedisClusterServers":
        """Start the cluster; a port taken by someone else in between is retried on new ports."""
        for attempt in range(attempts):
            try:
                return self._start_once()
            except (TimeoutError, subprocess.SubprocessError, redis.RedisError):
                self.cleanup()
                self.nodes = []
                if attempt == attempts - 1:
                    raise

    def _start_once(self) -> "RedisClusterServers":
        for _ in range(self.masters * (1 + self.replicas)):
            node = RedisServer("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                               "--cluster-node-timeout", "2000",
                               # a replica may always take over (the tests kill primaries on purpose)
                               "--cluster-replica-validity-factor", "0", "--repl-ping-replica-period", "1",
                               port=free_port(cluster_bus=True))
            self.nodes.append(node.start())
        addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
        subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-replicas",
                        str(self.replicas), "--cluster-yes"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

        def ready():
            infos = [n.client().cluster("info") for n in self.nodes]
            return all("cluster_state:ok" in str(i) or (isinstance(i, dict) and i.get("cluster_state") == "ok")
                       for i in infos)
        wait_for(ready, 90, "cluster state ok")

        def replicas_synced():
            roles = [n.client().info("replication") for n in self.nodes]
            replicas = [r for r in roles if r["role"] == "slave"]
            return (len(replicas) == self.masters * self.replicas
                    and all(r.get("master_link_status") == "up" for r in replicas))
        wait_for(replicas_synced, 60, "replicas in sync")
        return self

    def primaries(self) -> list[RedisServer]:
        return [n for n in self.nodes if n.proc and n.proc.poll() is None
                and n.client().info("replication")["role"] == "master"]

    def flush(self) -> None:
        for node in self.primaries():
            node.client().flushall()
            node.client().script_flush()

    def cleanup(self) -> None:
        for node in self.nodes:
            node.cleanup()


def redis_server_available() -> bool:
    return shutil.which("redis-server") is not None and os.name == "posix"
