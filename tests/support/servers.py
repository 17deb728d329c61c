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
            node.client().function_flush()

    def cleanup(self) -> None:
        for node in self.nodes:
            node.cleanup()


def redis_server_available() -> bool:
    return shutil.which("redis-server") is not None and os.name == "posix"


class SentinelProcess:
    """One redis-server in sentinel mode on a free port, watching `service` (its config file
    lives in its own temp directory: sentinels rewrite it as they learn the topology)."""

    def __init__(self, service: str, primary_port: int, *, quorum: int, down_after_ms: int,
                 failover_timeout_ms: int, password: str | None = None,
                 redis_password: str | None = None):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="cashier-sentinel-"))
        lines = [f"port {self.port}", "bind 127.0.0.1", f"dir {self.dir}",
                 f"logfile {self.dir / 'sentinel.log'}",
                 f"sentinel monitor {service} 127.0.0.1 {primary_port} {quorum}",
                 f"sentinel down-after-milliseconds {service} {down_after_ms}",
                 f"sentinel failover-timeout {service} {failover_timeout_ms}",
                 f"sentinel parallel-syncs {service} 1"]
        if redis_password:
            lines.append(f"sentinel auth-pass {service} {redis_password}")
        if password:
            # sentinels authenticate to each other with the same password
            lines += [f"requirepass {password}", f"sentinel sentinel-pass {password}"]
        (self.dir / "sentinel.conf").write_text("\n".join(lines) + "\n")
        self.password = password
        self.proc: subprocess.Popen | None = None

    def start(self) -> "SentinelProcess":
        self.proc = subprocess.Popen(["redis-server", str(self.dir / "sentinel.conf"), "--sentinel"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.client().ping(), what=f"sentinel on {self.port}")
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, password=self.password, decode_responses=True,
                           socket_timeout=1.0)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisSentinelServers:
    """A real Sentinel deployment on loopback: one primary, `replicas` replicas and
    `sentinels` sentinels (quorum: a majority) watching service `service`. Short
    down-after/failover timeouts so that a failover completes in a few seconds.
    `password`: requirepass/masterauth of the Redis nodes; `sentinel_password`: the
    sentinels' own requirepass."""

    def __init__(self, replicas: int = 1, sentinels: int = 3, *, service: str = "cashier",
                 down_after_ms: int = 1000, failover_timeout_ms: int = 3000,
                 password: str | None = None, sentinel_password: str | None = None,
                 redis_args: tuple[str, ...] = ()):
        self.replica_count, self.sentinel_count = replicas, sentinels
        self.service = service
        self.down_after_ms, self.failover_timeout_ms = down_after_ms, failover_timeout_ms
        self.password, self.sentinel_password = password, sentinel_password
        # no 5 s wait before a full sync: a reconfigured replica catches up at once
        self.redis_args = ("--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1",
                           *(("--masterauth", password) if password else ()), *redis_args)
        self.nodes: list[RedisServer] = []
        self.sentinels: list[SentinelProcess] = []

    def url(self, db: int = 0, *, user_info: str = "", query: str = "", tls: bool = False) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        scheme = "rediss+sentinel" if tls else "redis+sentinel"
        return f"{scheme}://{user_info}{hosts}/{self.service}/{db}" + (f"?{query}" if query else "")

    def node_client(self, node: RedisServer) -> redis.Redis:
        return redis.Redis(port=node.port, password=self.password, decode_responses=True,
                           socket_timeout=1.0)

    def start(self) -> "RedisSentinelServers":
        primary = RedisServer(*self.redis_args).start()
        self.nodes.append(primary)
        for _ in range(self.replica_count):
            self.nodes.append(RedisServer(*self.redis_args, "--replicaof", "127.0.0.1",
                                          str(primary.port)).start())
        if self.password:
            # set after the start: RedisServer's "is it up" probe takes seconds against a
            # server that wants a password
            for node in self.nodes:
                node.client().config_set("requirepass", self.password)
        wait_for(lambda: all(self.node_client(n).info("replication")["master_link_status"] == "up"
                             for n in self.nodes[1:]), 30, "replicas in sync")
        quorum = self.sentinel_count // 2 + 1
        for _ in range(self.sentinel_count):
            self.sentinels.append(SentinelProcess(
                self.service, primary.port, quorum=quorum, down_after_ms=self.down_after_ms,
                failover_timeout_ms=self.failover_timeout_ms, password=self.sentinel_password,
                redis_password=self.password).start())
        self.wait_until_settled()
        return self

    def _views(self) -> list[dict]:
        return [s.client().sentinel_master(self.service) for s in self.sentinels
                if s.proc and s.proc.poll() is None]

    def wait_until_settled(self, timeout_s: float = 60.0) -> None:
        """Every live sentinel sees the same primary, the other sentinels and every live
        replica, no failover is in progress, and the primary has every live replica online."""
        live_replicas = len([n for n in self.nodes if n.proc and n.proc.poll() is None]) - 1

        def settled():
            views = self._views()
            addrs = {(v["ip"], int(v["port"])) for v in views}
            if not (len(addrs) == 1 and all(int(v["num-other-sentinels"]) == self.sentinel_count - 1
                                            and int(v["num-slaves"]) >= live_replicas
                                            and "s_down" not in v["flags"]
                                            and "failover" not in v["flags"] for v in views)):
                return False
            (_, port), = addrs
            info = self.node_client(next(n for n in self.nodes if n.port == int(port))).info("replication")
            online = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                      and v.get("state") == "online"]
            return info["role"] == "master" and len(online) >= live_replicas
        wait_for(settled, timeout_s, "sentinels settled")

    def primary_port(self) -> int:
        """Where the sentinels say the primary is."""
        return int(self.sentinels[0].client().sentinel_get_master_addr_by_name(self.service)[1])

    def primary(self) -> RedisServer:
        port = self.primary_port()
        return next(n for n in self.nodes if n.port == port)

    def replicas(self) -> list[RedisServer]:
        port = self.primary_port()
        return [n for n in self.nodes if n.port != port]

    def wait_for_failover(self, old_port: int, timeout_s: float = 60.0) -> RedisServer:
        """Every live sentinel names a primary other than `old_port`, and it is a primary."""
        def promoted():
            ports = {int(v["port"]) for v in self._views()}
            if len(ports) != 1 or old_port in ports:
                return False
            node = next(n for n in self.nodes if n.port in ports)
            return self.node_client(node).info("replication")["role"] == "master"
        wait_for(promoted, timeout_s, "sentinel failover")
        return self.primary()

    def cleanup(self) -> None:
        for s in self.sentinels:
            s.cleanup()
        for n in self.nodes:
            n.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
