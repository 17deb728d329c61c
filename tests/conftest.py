"""Shared fixtures: every test gets a clean, real Redis (and the Cluster tests a real
3-master Redis Cluster started on free loopback ports)."""
from __future__ import annotations

import os

import pytest
import redis

from core import Ledger
from tests.support.servers import RedisClusterServers

REDIS_HOST = os.environ.get("CASHIER_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379"))
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
