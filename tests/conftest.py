"""Shared fixtures: every test gets a clean, real Redis (and the Cluster tests a real
3-master Redis Cluster started on free loopback ports).

Run serially (CI: `bash scripts/test.sh`) the tests use the machine's Redis
(CASHIER_TEST_REDIS_HOST / CASHIER_TEST_REDIS_PORT, default 127.0.0.1:6379), one database
number per test folder. Under pytest-xdist (`scripts/test.sh --fast`: `-n 2`) each worker
starts a private redis-server instead, because database numbers do not separate what is
server-wide (the function library, CONFIG SET, ACL users, FLUSHALL); its port is put in
REDIS_PORT and CASHIER_TEST_REDIS_PORT before any test module is imported, so tests that
read either see the worker's own server."""
from __future__ import annotations

import os

import pytest
import redis

from core import Ledger
from tests.support.servers import RedisClusterServers

REDIS_HOST = os.environ.get("CASHIER_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379"))
_worker_redis = None      # the private redis-server of this xdist worker


def pytest_configure(config):
    global REDIS_HOST, REDIS_PORT, _worker_redis
    if not os.environ.get("PYTEST_XDIST_WORKER") or _worker_redis is not None:
        return
    from tests.support.servers import RedisServer
    for attempt in range(3):          # another worker may take the free port first
        try:
            _worker_redis = RedisServer().start()
            break
        except Exception:
            if attempt == 2:
                raise
    REDIS_HOST, REDIS_PORT = "127.0.0.1", _worker_redis.port
    os.environ["CASHIER_TEST_REDIS_HOST"] = REDIS_HOST
    os.environ["CASHIER_TEST_REDIS_PORT"] = str(REDIS_PORT)


def pytest_unconfigure(config):
    if _worker_redis is not None:
        _worker_redis.cleanup()
# Each test folder uses its own database number so suites never share keys.
_DB_BY_FOLDER = {"core": 1, "reconcile": 2, "desktop": 3, "admin": 4, "faults": 5, "bench": 6}


@pytest.fixture
def redis_db(request) -> int:
    folder = request.node.path.parent.name
    return _DB_BY_FOLDER.get(folder, 7)


@pytest.fixture
def redis_url(redis_db) -> str:
    """URL of a flushed database on the machine's Redis."""
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=redis_db)
    client.flushdb()
    client.close()
    yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{redis_db}"
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=redis_db)
    client.flushdb()
    client.close()


@pytest.fixture
def ledger(redis_url) -> Ledger:
    led = Ledger.from_url(redis_url)
    yield led
    led.close()


@pytest.fixture(scope="session")
def redis_cluster():
    cluster = RedisClusterServers(masters=3).start()
    yield cluster
    cluster.cleanup()


@pytest.fixture
def cluster_url(redis_cluster) -> str:
    redis_cluster.flush()
    return redis_cluster.url


@pytest.fixture
def cluster_ledger(cluster_url) -> Ledger:
    led = Ledger.from_url(cluster_url)
    yield led
    led.close()
