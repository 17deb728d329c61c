"""Parses Redis URLs, opens redis-py clients from them and checks that the server is safe
for money.

Every program (ledger, terminal settings, cashierctl, reconcile service, demo, doctor)
goes through `parse_redis_url` / `connect`, so a URL means the same everywhere and a
URL that does not parse is refused the same way everywhere: `ConfigError` naming
``redis_url`` and the reason, before anything is sent (never a ValueError traceback,
never a silent database 0).

URL forms (all take ``user:password@`` for an ACL user, and ``?`` options)::

    redis://127.0.0.1:6379/0                 standalone (port 6379 and database 0 by default)
    rediss://host:6380/0?ssl_ca_certs=/etc/cashier/ca.pem    TLS (also ssl_certfile, ssl_keyfile)
    unix:///run/redis/redis.sock?db=0        a local socket
    redis+cluster://127.0.0.1:7000           Redis Cluster (any node; the rest are discovered)
    redis+cluster://h1:7000,h2:7000,h3:7000  several seed nodes: survives the first one being down
    rediss+cluster://host:7000               Redis Cluster over TLS
    redis+sentinel://s1:26379,s2:26379,s3:26379/cashier/0
                                             Redis Sentinel: the sentinels (port 26379 by
                                             default), the service name, the database; the
                                             client asks the sentinels for the primary and
                                             asks again after a failover
    rediss+sentinel://...                    the same over TLS (sentinels and Redis nodes)
    redis+sentinel://user:pw@s1,s2,s3/cashier/0?sentinel_username=su&sentinel_password=spw
                                             user:pw@ is the ACL user of the Redis nodes; the
                                             sentinels' own user/password are the options
                                             (sentinels without a password: leave them out)

Options: socket_timeout, socket_connect_timeout, health_check_interval, client_name,
ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_password, ssl_cert_reqs, ssl_check_hostname,
password, username, db, sentinel_username, sentinel_password, and two of the ledger:
wait_replicas, wait_timeout_ms (`Ledger.from_url` applies them; on Sentinel use
``?wait_replicas=1``, so every till given the URL acknowledges only what a replica holds).
Anything else is refused (a typo must not be ignored silently).

redis-py's own retries are switched off: `core.ledger` retries with the same txn id
under one deadline, so the time a caller waits is bounded in one place.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisError
from redis.retry import Retry
from redis.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool

from . import resp_packing
from .errors import ConfigError, UnsafeRedisConfig

SAFE_EVICTION_POLICY = "noeviction"

STANDALONE, CLUSTER, SENTINEL, UNIX = "standalone", "cluster", "sentinel", "unix"
_SCHEMES = {"redis": (STANDALONE, False), "rediss": (STANDALONE, True),
            "redis+cluster": (CLUSTER, False), "rediss+cluster": (CLUSTER, True),
            "redis+sentinel": (SENTINEL, False), "rediss+sentinel": (SENTINEL, True),
            "unix": (UNIX, False)}
_DEFAULT_PORT = {STANDALONE: 6379, CLUSTER: 6379, SENTINEL: 26379}
_FLOAT_OPTIONS = ("socket_timeout", "socket_connect_timeout")
_INT_OPTIONS = ("health_check_interval",)
# options of the ledger, not of the connection: the deployment's acknowledgement policy
# travels with its address, so every program given the URL (tills included) applies it
LEDGER_OPTIONS = ("wait_replicas", "wait_timeout_ms")
_BOOL_OPTIONS = ("ssl_check_hostname",)
_TEXT_OPTIONS = ("client_name", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_password",
                 "ssl_cert_reqs", "username", "password", "sentinel_username", "sentinel_password")
_SSL_OPTIONS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_cert_reqs",
                "ssl_check_hostname")
_KNOWN_OPTIONS = (*_FLOAT_OPTIONS, *_INT_OPTIONS, *_BOOL_OPTIONS, *_TEXT_OPTIONS, *LEDGER_OPTIONS, "db")
_SECRET_OPTIONS = ("password", "ssl_password", "sentinel_password")
_HOST_RE = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.\-%]+))(?::(?P<port>[^:]*))?$")
_SERVICE_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
_MAX_DB = 1_000_000   # Redis' own limit is the `databases` setting (16 by default); it answers past it


@dataclass(frozen=True)
class RedisTarget:
    """What a Redis URL names, checked. `hosts` are the Redis nodes (standalone: one;
    cluster: the seed nodes) or, for Sentinel, the sentinels."""
    kind: str                                   # standalone | cluster | sentinel | unix
    tls: bool
    hosts: tuple[tuple[str, int], ...]
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)      # never in a log line
    service_name: str = ""                      # sentinel: the monitored primary's name
    sentinel_username: str | None = None
    sentinel_password: str | None = field(default=None, repr=False)
    socket_path: str = ""                       # unix
    options: dict = field(default_factory=dict)  # redis-py connection keyword arguments
    ledger_options: dict = field(default_factory=dict)  # wait_replicas, wait_timeout_ms (for Ledger)


def _bad(reason: str) -> ConfigError:
    return ConfigError("redis_url", reason)


def _parse_host(text: str, kind: str) -> tuple[str, int]:
    match = _HOST_RE.match(text)
    if not text:
        raise _bad("a host is missing (write host:port; several are separated by commas)")
    if not match:
        raise _bad(f"{text!r} is not host:port")
    host = match.group("v6") or unquote(match.group("name"))
    port_text = match.group("port")
    if port_text is None or port_text == "":
        if port_text == "":
            raise _bad(f"{text!r}: the port after ':' is missing")
        return host, _DEFAULT_PORT[kind]
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise _bad(f"port {port_text!r} of {host} is not a number from 1 to 65535")
    return host, int(port_text)


def _parse_db(text: str, where: str) -> int:
    if not text.isdigit() or int(text) >= _MAX_DB:
        raise _bad(f"database {text!r} ({where}) is not a whole number from 0 (as in /0)")
    return int(text)


def _parse_options(query: str, kind: str, tls: bool) -> dict:
    options: dict = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise _bad("the options after '?' are not name=value pairs joined by '&'") from None
    for name, value in pairs:
        if name not in _KNOWN_OPTIONS:
            raise _bad(f"unknown option {name!r} (known: {', '.join(sorted(_KNOWN_OPTIONS))})")
        if name in options:
            raise _bad(f"option {name!r} is given twice")
        if name in _SSL_OPTIONS and not tls:
            raise _bad(f"option {name!r} needs a TLS URL (rediss://, rediss+cluster://, rediss+sentinel://)")
        if name.startswith("sentinel_") and kind != SENTINEL:
            raise _bad(f"option {name!r} is for redis+sentinel:// URLs only")
        if name in _FLOAT_OPTIONS:
            try:
                number = float(value)
            except ValueError:
                number = -1.0
            if not 0 < number < 3600:
                raise _bad(f"option {name}={value!r} is not a number of seconds above 0")
            options[name] = number
        elif name in _INT_OPTIONS:
            if not value.isdigit():
                raise _bad(f"option {name}={value!r} is not a whole number of seconds")
            options[name] = int(value)
        elif name in _BOOL_OPTIONS:
            if value.lower() not in ("true", "false", "yes", "no", "1", "0"):
                raise _bad(f"option {name}={value!r} is not true or false")
            options[name] = value.lower() in ("true", "yes", "1")
        elif name == "db":
            options[name] = _parse_db(value, "option db")
        elif name in LEDGER_OPTIONS:
            low = 0 if name == "wait_replicas" else 1
            if not value.isdigit() or not low <= int(value) <= 1_000_000:
                raise _bad(f"option {name}={value!r} is not a whole number from {low}")
            options[name] = int(value)
        else:
            options[name] = value
    return options


def parse_redis_url(url) -> RedisTarget:
    """Check `url` and say what it names; ConfigError('redis_url', reason) when it does not parse."""
    if not isinstance(url, str) or not url.strip():
        raise _bad("must be a URL such as redis://127.0.0.1:6379/0")
    if any(c.isspace() for c in url) or any(ord(c) < 32 for c in url):
        raise _bad("contains spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:     # e.g. an unbalanced '[' of an IPv6 address
        raise _bad(f"does not parse ({exc})") from None
    if "://" not in url or parts.scheme not in _SCHEMES:
        shown = parts.scheme if "://" in url else url.split(":", 1)[0]
        raise _bad(f"scheme {shown!r} is not one of {', '.join(s + '://' for s in _SCHEMES)}")
    if parts.fragment:
        raise _bad("has a '#' part; write a password with '#' as %23")
    kind, tls = _SCHEMES[parts.scheme]
    options = _parse_options(parts.query, kind, tls)
    userinfo, at, hostlist = parts.netloc.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
        if not colon and username:          # 'redis://secret@host': redis-py's password-only form
            username, password = None, username
    username = options.pop("username", username)
    password = options.pop("password", password)
    sentinel_username = options.pop("sentinel_username", None)
    sentinel_password = options.pop("sentinel_password", None)
    db_option = options.pop("db", None)
    ledger_options = {k: options.pop(k) for k in LEDGER_OPTIONS if k in options}

    if kind == UNIX:
        path = unquote(parts.path)
        if hostlist or not path or path == "/":
            raise _bad("a unix socket URL is unix:///path/to/redis.sock (the path is missing)")
        return RedisTarget(UNIX, False, (), db_option or 0, username, password, socket_path=path,
                           options=options, ledger_options=ledger_options)

    hosts = tuple(_parse_host(h, kind) for h in hostlist.split(","))
    if kind == STANDALONE and len(hosts) > 1:
        raise _bad("several hosts need redis+cluster:// (Cluster seeds) or redis+sentinel:// (sentinels)")
    path = parts.path
    if kind == SENTINEL:
        segments = path.split("/")[1:] if path else []
        if not segments or not segments[0]:
            raise _bad("the Sentinel service name is missing: redis+sentinel://host:26379/<service_name>/0")
        if len(segments) > 2 or (len(segments) == 2 and segments[1] == "" and path.endswith("//")):
            raise _bad(f"path {path!r} is not /<service_name>[/<db>]")
        service = unquote(segments[0])
        if not _SERVICE_RE.match(service):
            raise _bad(f"service name {service!r} is not 1-64 letters, digits, '.', '_' or '-'")
        db = _parse_db(segments[1], "after the service name") if len(segments) == 2 and segments[1] else None
    else:
        service = ""
        stripped = path[1:] if path.startswith("/") else path
        db = _parse_db(unquote(stripped), "the path") if stripped else None
    if db is not None and db_option is not None and db != db_option:
        raise _bad(f"database {db} in the path and db={db_option} in the options disagree")
    db = db if db is not None else (db_option or 0)
    if kind == CLUSTER and db != 0:
        raise _bad(f"Redis Cluster has database 0 only, not {db}")
    return RedisTarget(kind, tls, hosts, db, username, password, service, sentinel_username,
                       sentinel_password, options=options, ledger_options=ledger_options)


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme in ("redis+cluster", "rediss+cluster")


def is_sentinel_url(url: str) -> bool:
    return urlsplit(url).scheme in ("redis+sentinel", "rediss+sentinel")


def redacted(url: str, *, brief: bool = False) -> str:
    """The URL without its passwords (user info, ?password=, ?ssl_password=,
    ?sentinel_password=), for logs and messages. Hosts, ports, service name and db stay.

    brief: scheme, host(s), port and path only, as the terminal's log shows its Redis:
    the user name and every query option are left out too ('***@' and '?…' say there
    were some). The one URL redactor of the project (desktop.engine.safe_url is this)."""
    try:
        parts = urlsplit(url)
    except (ValueError, TypeError, AttributeError):
        return "<unparsable Redis URL>"
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if brief:
        return f"{parts.scheme}://{'***@' if at else ''}{hosts}{parts.path}" + ("?…" if parts.query else "")
    if at and ":" in userinfo:
        parts = parts._replace(netloc=f"{userinfo.split(':', 1)[0]}:***@{hosts}")
    elif at:                      # 'redis://secret@host': the lone user info may be a password
        parts = parts._replace(netloc=f"***@{hosts}")
    if parts.query:
        options = [(k, "***" if k.lower() in _SECRET_OPTIONS or "pass" in k.lower() else v)
                   for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        parts = parts._replace(query="&".join(f"{k}={v}" for k, v in options))
    return urlunsplit(parts)


def _ssl_options(target: RedisTarget) -> dict:
    return {"ssl": True, **{k: v for k, v in target.options.items() if k in _SSL_OPTIONS}} if target.tls else {}


def connect(url: str, *, socket_timeout_s: float = 2.0, connect_timeout_s: float = 2.0):
    """A client for `url`: redis.Redis (standalone, unix socket, or the Sentinel-managed
    primary) or redis.cluster.RedisCluster, with decoded replies. Raises ConfigError for
    a URL that does not parse; connects lazily (the first command does)."""
    target = parse_redis_url(url)
    options = dict(decode_responses=True, socket_timeout=socket_timeout_s,
                   socket_connect_timeout=connect_timeout_s, retry=Retry(NoBackoff(), 0))
    # the URL's own timeouts win; its TLS options go with ssl=True
    options.update({k: v for k, v in target.options.items() if k not in _SSL_OPTIONS})
    tls_options = _ssl_options(target)
    auth = {"username": target.username, "password": target.password}
    if target.kind == UNIX:
        client = redis.Redis(unix_socket_path=target.socket_path, db=target.db, **auth, **options)
    elif target.kind == STANDALONE:
        (host, port), = target.hosts
        client = redis.Redis(host=host, port=port, db=target.db, **auth, **options, **tls_options)
    elif target.kind == CLUSTER:
        return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in target.hosts],
                            **auth, **options, **tls_options)
    else:
        client = _sentinel_primary(target, options, tls_options)
    resp_packing.install(client)        # plain arguments packed in one C call (issue 30)
    return client


class _Sentinel(Sentinel):
    """redis-py's Sentinel with a "no primary" message an operator can act on: which
    sentinel said what (redis-py names each sentinel by its client's repr, several
    hundred characters, and drops the reason of a wrong sentinel password)."""

    def discover_master(self, service_name):
        try:
            return super().discover_master(service_name)
        except MasterNotFoundError:
            pass
        answers = []
        for sentinel in self.sentinels:
            where = "{host}:{port}".format_map(sentinel.connection_pool.connection_kwargs)
            try:
                state = sentinel.sentinel_masters().get(service_name)
            except RedisError as exc:
                answers.append(f"{where}: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            if state is None:
                answers.append(f"{where}: does not watch {service_name!r}")
            else:
                answers.append(f"{where}: primary {state['ip']}:{state['port']} is "
                               f"{'down' if state['is_sdown'] or state['is_odown'] else 'not usable'}")
        raise MasterNotFoundError(
            f"no sentinel names a primary of {service_name!r} that is up ({'; '.join(answers)}). "
            "A failover may be under way; otherwise check the sentinels' addresses, the service "
            "name and sentinel_password") from None


def _sentinel_primary(target: RedisTarget, options: dict, tls_options: dict):
    """The primary of `target.service_name`, followed through failovers: every new
    connection asks the sentinels where the primary is, and a connection that finds
    itself on a demoted primary (READONLY) is dropped (redis-py's SentinelConnectionPool)."""
    sentinel_options = {k: v for k, v in options.items() if k.startswith("socket_") or k == "retry"}
    sentinel_options.update(decode_responses=True, username=target.sentinel_username,
                            password=target.sentinel_password, **tls_options)
    manager = _Sentinel(list(target.hosts), sentinel_kwargs=sentinel_options)
    node_options = dict(db=target.db, username=target.username, password=target.password,
                        **options, **tls_options)
    client = manager.master_for(target.service_name, **node_options)
    # so that doctor and the script loader can reach the sentinels and the replicas
    client.sentinel_manager = manager
    client.sentinel_service_name = target.service_name
    client.sentinel_node_options = node_options
    return client


def is_cluster(client) -> bool:
    return isinstance(client, RedisCluster)


def is_sentinel(client) -> bool:
    """A client of a Sentinel-managed primary (from a redis+sentinel:// URL)."""
    return isinstance(getattr(client, "connection_pool", None), SentinelConnectionPool)


def follow_primary(client) -> None:
    """After an error that may mean the primary moved (connection lost, READONLY,
    NOREPLICAS, WAIT not confirmed): drop the idle connections of a Sentinel-managed
    client, so the next command asks the sentinels where the primary is. A primary cut
    off from its replicas keeps answering on its old connections; without this a client
    would stay with it. No-op for other clients (Cluster clients follow MOVED themselves)."""
    if is_sentinel(client):
        client.connection_pool.disconnect(inuse_connections=False)


def replica_clients(client) -> list[redis.Redis]:
    """Clients of the replicas the sentinels know as up (empty for other topologies),
    with the same user, password, TLS and timeouts as `client`. The caller closes them."""
    if not is_sentinel(client) or not hasattr(client, "sentinel_node_options"):
        return []
    pool = client.connection_pool
    return [redis.Redis(host=host, port=port, **client.sentinel_node_options)
            for host, port in pool.sentinel_manager.discover_slaves(pool.service_name)]


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
