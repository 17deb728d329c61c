"""Chooses the demo's Redis without ever touching anyone else's data.

The configured Redis (``--redis-url``, else ``CASHIER_REDIS_URL``, else the demo's own
database number 15 on 127.0.0.1:6379) is used when it answers, does not evict, and the
database is empty or was claimed by an earlier demo run (marker key ``cashier-demo:owner``).
Otherwise, or with ``--private-redis``, a private ``redis-server`` is started on a free
loopback port with its data in the demo's data directory: AOF on with ``appendfsync
always`` (nothing acknowledged is lost in a crash) and ``maxmemory-policy noeviction``
(a balance is never evicted). The demo never flushes or rewrites a database it did not
create.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from core.connection import (SAFE_EVICTION_POLICY, connect, eviction_policies, is_cluster_url,
                             parse_redis_url, redacted)

DEMO_DEFAULT_URL = "redis://127.0.0.1:6379/15"
MARKER_KEY = "cashier-demo:owner"
PROBE_TIMEOUT_S = 1.0
PRIVATE_START_TIMEOUT_S = 15.0
PRIVATE_STOP_TIMEOUT_S = 10.0


class DemoError(Exception):
    """The demo cannot go on; the message says why and what to do."""


@dataclass
class ChosenRedis:
    url: str
    note: str                      # one line for the user: which Redis and why
    db_tag: str                    # names the demo's SQLite file, one per Redis
    private: "PrivateRedis | None" = None


def _usable(url: str) -> tuple[bool, str]:
    """(usable, reason): answers, never evicts, and holds only demo data (or nothing)."""
    client = _connect(url)
    try:
        client.ping()
        unsafe = {n: p for n, p in eviction_policies(client).items() if p != SAFE_EVICTION_POLICY}
        if unsafe:
            return False, f"its maxmemory-policy is {', '.join(sorted(set(unsafe.values())))}, not noeviction"
        if is_cluster_url(url):
            return True, "Redis Cluster (the demo adds its own accounts only)"
        if client.exists(MARKER_KEY):
            return True, "holds an earlier demo run"
        if client.dbsize() == 0:
            client.set(MARKER_KEY, "cashier demo")      # claim the empty database for the demo
            return True, "empty database, now the demo's"
        return False, "that database holds other data, which the demo leaves alone"
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        return False, f"no answer ({type(exc).__name__})"
    except redis.RedisError as exc:
        return False, f"refused: {exc}"
    finally:
        client.close()


def _connect(url: str):
    try:
        return connect(url, socket_timeout_s=PROBE_TIMEOUT_S, connect_timeout_s=PROBE_TIMEOUT_S)
    except Exception as exc:   # a malformed URL is the user's mistake: say so
        reason = str(exc)
        if reason.startswith("redis_url: "):
            reason = reason[len("redis_url: "):]
        raise DemoError(f"redis_url: {redacted(url)}: {reason}") from None


def reset_redis(url: str | None) -> str:
    """Empty the demo's database on the configured Redis if it holds the demo's marker (so
    it was empty when the demo claimed it and holds only the demo's keys). What happened,
    for the user."""
    url = url or os.environ.get("CASHIER_REDIS_URL") or DEMO_DEFAULT_URL
    client = _connect(url)
    try:
        if is_cluster_url(url):
            return f"Redis Cluster {redacted(url)} left alone (delete the D-* accounts by hand)"
        if not client.exists(MARKER_KEY):
            return f"Redis at {redacted(url)} holds no demo data (no {MARKER_KEY} key): left alone"
        client.flushdb()
        return f"emptied the demo's database on {redacted(url)}"
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        return f"Redis at {redacted(url)} did not answer ({type(exc).__name__}): nothing to reset there"
    finally:
        client.close()


def _tag(url: str) -> str:
    # core's parser: the port of a URL with several hosts (Cluster, Sentinel) is not one number
    target = parse_redis_url(url)
    host, port = target.hosts[0] if target.hosts else ("local", 6379)
    service = f"{target.service_name}-" if target.service_name else ""
    raw = f"{host}-{port}-{service}{target.db}"
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in raw)


def choose(url: str | None, data_dir: Path, *, force_private: bool) -> ChosenRedis:
    url = url or os.environ.get("CASHIER_REDIS_URL") or DEMO_DEFAULT_URL
    if not force_private:
        usable, reason = _usable(url)
        if usable:
            return ChosenRedis(url, f"using Redis at {redacted(url)} ({reason})", _tag(url))
        note = f"not using Redis at {redacted(url)}: {reason}; "
    else:
        note = "--private-redis: "
    if shutil.which("redis-server") is None:
        raise DemoError(note + "and no redis-server program was found to start a private one. "
                        "Install Redis (Debian/Ubuntu: apt install redis-server; macOS: brew install "
                        "redis; Windows: Memurai or WSL), or pass --redis-url redis://host:port/db "
                        "of an empty database.")
    private = PrivateRedis(data_dir / "redis").start()
    return ChosenRedis(private.url, note + f"started a private redis-server on 127.0.0.1:{private.port} "
                       f"(AOF, appendfsync always; data in {private.dir})", "private", private)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateRedis:
    """A redis-server child process whose data (AOF) lives in `directory`."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pidfile(self) -> Path:
        return self.dir / "redis.pid"

    def _stop_leftover(self) -> None:
        """A server an earlier, killed demo run left on this directory would share its AOF."""
        try:
            pid = int(self.pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return
        if b"redis-server" in cmdline:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + PRIVATE_STOP_TIMEOUT_S
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.1)

    def start(self) -> "PrivateRedis":
        self.dir.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        for _ in range(3):              # a port taken between choosing and binding: try another
            self.port = free_port()
            args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                    "--dir", str(self.dir), "--appendonly", "yes", "--appendfsync", "always",
                    "--save", "", "--maxmemory-policy", "noeviction", "--daemonize", "no",
                    "--pidfile", str(self.pidfile), "--logfile", str(self.dir / "redis.log")]
            # Own session: Ctrl-C reaches the demo, which stops its children in order.
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, **new_session())
            if self._wait_ready():
                return self
            self.stop()
        raise DemoError(f"redis-server did not start; see {self.dir / 'redis.log'}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + PRIVATE_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                client = redis.Redis(port=self.port, socket_timeout=0.5)
                try:
                    if client.ping():
                        return True
                finally:
                    client.close()
            except redis.BusyLoadingError:
                pass                     # replaying a large AOF: keep waiting
            except (redis.ConnectionError, redis.TimeoutError):
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Graceful shutdown (SIGTERM: Redis fsyncs its AOF and exits), then a hard kill."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(PRIVATE_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(PRIVATE_STOP_TIMEOUT_S)


def new_session() -> dict:
    """Popen options that keep a child out of the terminal's Ctrl-C (the demo stops it)."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}
