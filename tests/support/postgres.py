"""Real PostgreSQL for tests: a fresh database per test on the machine's server, and a
private server (initdb + pg_ctl on a free port in a temp dir) that a test may stop and
start. Nothing here fakes PostgreSQL."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.support.servers import free_port, wait_for

PG_HOST = os.environ.get("CASHIER_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("CASHIER_TEST_PG_PORT", "5432"))
PG_BIN = Path(os.environ.get("CASHIER_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


def admin_user(host: str = PG_HOST, port: int = PG_PORT) -> str:
    """The first role among postgres/root that the server lets in."""
    last: Exception | None = None
    for user in ("postgres", "root"):
        try:
            with psycopg.connect(host=host, port=port, user=user, dbname="postgres", connect_timeout=5):
                return user
        except psycopg.Error as exc:
            last = exc
    raise RuntimeError(f"no usable PostgreSQL role on {host}:{port}: {last}")


def create_database(host: str, port: int, user: str) -> str:
    name = f"rs_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(host=host, port=port, user=user, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(host: str, port: int, user: str, name: str) -> None:
    with psycopg.connect(host=host, port=port, user=user, dbname="postgres", autocommit=True,
                         connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_database(host: str = PG_HOST, port: int = PG_PORT):
    """SQLAlchemy URL of a new, empty database; dropped afterwards."""
    user = admin_user(host, port)
    name = create_database(host, port, user)
    try:
        yield f"postgresql+psycopg://{user}@{host}:{port}/{name}"
    finally:
        drop_database(host, port, user, name)


class PostgresServer:
    """A private PostgreSQL 15 cluster in a temp dir. initdb refuses to run as root, so
    as root the cluster belongs to the `postgres` system user (runuser)."""

    def __init__(self):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="cashier-pg-"))
        self.data = self.dir / "data"
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.dir, "postgres", "postgres")

    @staticmethod
    def available() -> bool:
        return (PG_BIN / "initdb").exists() and (os.geteuid() != 0 or shutil.which("runuser") is not None)

    def _run(self, *args: str, timeout_s: float = 60) -> None:
        subprocess.run([*self.as_user, *args], check=True, timeout=timeout_s,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def init(self) -> "PostgresServer":
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-sync")
        return self

    def start(self) -> "PostgresServer":
        opts = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "pg.log"),
                  "-o", opts, "-w", "start")
        wait_for(lambda: psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                                         dbname="postgres", connect_timeout=1).close() or True,
                 30, f"postgres on {self.port}")
        return self

    def stop(self) -> None:
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, dbname: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        return create_database("127.0.0.1", self.port, "postgres")

    def cleanup(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop()
            except Exception:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
