"""Opens redis-py clients from URLs and checks that the server is safe for money.

URL forms (all take ``user:password@`` for ACL users and ``?`` options of redis-py)::

    redis://127.0.0.1:6379/0                 standalone
    rediss://host:6380/0?ssl_ca_certs=/etc/cashier/ca.pem    TLS (also ssl_certfile, ssl_keyfile)
    redis+cluster://127.0.0.1:7000           Redis Cluster (any node; the rest are discovered)
    redis+cluster://h1:7000,h2:7000,h3:7000  several seed nodes: survives the first one being down
    rediss+cluster://host:7000               Redis Cluster over TLS

redis-py's own retries are switched off: `core.ledger` retries with the same txn id
under one deadline, so the time a caller waits is bounded in one place.
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from .errors import InvalidRequest, UnsafeRedisConfig

SAFE_EVICTION_POLICY = "noeviction"


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme in ("redis+cluster", "rediss+cluster")


_SECRET_OPTIONS = ("password", "ssl_password")


def redacted(url: str) -> str:
    """The URL without its passwords (user info and ?password= options), for logs and messages."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        parts = parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{hosts}")
    if parts.query:
        options = [(k, "***" if k.lower() in _SECRET_OPTIONS else v)
                   for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query="&".join(f"{k}={v}" for k, v in options))
    return urlunsplit(parts)


def connect(url: str, *, socket_timeout_s: float = 2.0, connect_timeout_s: float = 2.0):
    """A client for `url`: redis.Redis or redis.cluster.RedisCluster (decoded replies)."""
    scheme = urlsplit(url).scheme
    options = dict(decode_responses=True, socket_timeout=socket_timeout_s,
                   socket_connect_timeout=connect_timeout_s)
    if scheme in ("redis+cluster", "rediss+cluster"):
        plain, seeds = _split_seed_nodes(url.replace("+cluster", "", 1))
        return RedisCluster.from_url(plain, retry=Retry(NoBackoff(), 0), startup_nodes=seeds, **options)
    if scheme in ("redis", "rediss", "unix"):
        return redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), **options)
    raise InvalidRequest("redis_url", f"scheme {scheme!r} is not one of redis, rediss, "
                         "redis+cluster, rediss+cluster, unix")


def _split_seed_nodes(url: str) -> tuple[str, list[ClusterNode]]:
    """'redis://u:p@h1:1,h2:2/0' -> ('redis://u:p@h1:1/0', [ClusterNode(h2, 2)])."""
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    first, *others = hosts.split(",")
    seeds = []
    for other in others:
        host, _, port = other.rpartition(":")
        if not host or not port.isdigit():
            raise InvalidRequest("redis_url", f"cluster seed node {other!r} is not host:port")
        seeds.append(ClusterNode(host, int(port)))
    netloc = f"{userinfo}@{first}" if userinfo else first
    return urlunsplit(parts._replace(netloc=netloc)), seeds


def is_cluster(client) -> bool:
    return isinstance(client, RedisCluster)


def eviction_policies(client) -> dict[str, str]:
    """maxmemory-policy of every primary, by node name (read from INFO, which ACL users may run)."""
    if is_cluster(client):
        return {node.name: client.info("memory", target_nodes=node)["maxmemory_policy"]
                for node in client.get_primaries()}
    return {"redis": client.info("memory")["maxmemory_policy"]}


def check_eviction_policy(client) -> None:
    """Refuse a Redis that may evict keys: eviction deletes balances and idempotency records."""
    unsafe = {node: policy for node, policy in eviction_policies(client).items()
              if policy != SAFE_EVICTION_POLICY}
    if unsafe:
        described = ", ".join(f"{node}: {policy}" for node, policy in sorted(unsafe.items()))
        raise UnsafeRedisConfig(
            f"Redis maxmemory-policy is {described}. An evicting policy silently deletes "
            "balances and idempotency records, so the ledger refuses to change balances. "
            "Fix: CONFIG SET maxmemory-policy noeviction (and put it in redis.conf), and give "
            "Redis enough memory."
        )
