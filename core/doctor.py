"""Checks a deployment's Redis for what can lose money or let the wrong people in, and
says how to fix each finding. Used by `cashierctl doctor`."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from redis.exceptions import NoPermissionError, RedisError

from .connection import SAFE_EVICTION_POLICY, is_cluster
from .keys import CONSUMER_GROUP, META_KEY

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Finding:
    level: str           # ok | warn | FAIL
    check: str
    detail: str
    fix: str = ""


def _nodes(client):
    return client.get_primaries() if is_cluster(client) else [None]


def _info(client, node, section):
    return client.info(section, target_nodes=node) if node is not None else client.info(section)


def diagnose(ledger, url: str, *, lag_warn_entries: int = 10_000) -> list[Finding]:
    client = ledger.client
    out: list[Finding] = []
    for node in _nodes(client):
        where = node.name if node is not None else "redis"
        try:
            mem = _info(client, node, "memory")
            persistence = _info(client, node, "persistence")
        except NoPermissionError:
            out.append(Finding(WARN, "access", f"{where}: this user may not run INFO",
                               "run doctor with the admin user's URL"))
            continue
        policy = mem.get("maxmemory_policy")
        if policy == SAFE_EVICTION_POLICY:
            out.append(Finding(OK, "eviction", f"{where}: maxmemory-policy {policy}"))
        else:
            out.append(Finding(FAIL, "eviction", f"{where}: maxmemory-policy {policy} can delete balances",
                               "CONFIG SET maxmemory-policy noeviction, and in redis.conf"))
        if persistence.get("aof_enabled") in (1, "1"):
            try:
                fsync = (client.config_get("appendfsync", target_nodes=node) if node is not None
                         else client.config_get("appendfsync")).get("appendfsync", "?")
            except (NoPermissionError, RedisError):
                fsync = "?"
            level = OK if fsync == "always" else WARN
            out.append(Finding(level, "persistence", f"{where}: AOF on, appendfsync {fsync}",
                               "" if level == OK else "appendfsync always loses nothing acknowledged; "
                               "everysec can lose about a second of charges"))
        else:
            out.append(Finding(FAIL, "persistence", f"{where}: AOF is off: a restart loses every change "
                               "since the last snapshot", "appendonly yes, appendfsync always (see docs/deployment.md)"))
    try:
        users = client.acl_users() if not is_cluster(client) else client.acl_users(target_nodes=client.get_random_node())
        default = client.acl_getuser("default")
        open_default = default and "on" in default.get("flags", []) and "nopass" in default.get("flags", [])
        if open_default:
            out.append(Finding(FAIL, "acl", "the default user is on with no password: anyone who reaches "
                               "Redis can change balances", "cashierctl acl --apply, then ACL SETUSER default off"))
        else:
            out.append(Finding(OK, "acl", f"users: {', '.join(sorted(users))}"))
    except NoPermissionError:
        out.append(Finding(OK, "acl", "this user may not read ACLs (a restricted user: good)"))
    scheme = urlsplit(url).scheme
    if scheme.startswith("rediss"):
        out.append(Finding(OK, "tls", "connection uses TLS"))
    else:
        host = urlsplit(url).hostname or ""
        level = OK if host in ("127.0.0.1", "::1", "localhost") else WARN
        out.append(Finding(level, "tls", f"plain TCP to {host}",
                           "" if level == OK else "use rediss:// between PCs (docs/deployment.md)"))
    try:
        if client.hget(META_KEY, "partitions") is None:
            out.append(Finding(FAIL, "ledger", "no ledger on this Redis",
                               "new installation: cashierctl init; lost data: reconcile-service restore"))
            return out
        shas = [s.sha for s in ledger.scripts.scripts.values()]
        loaded = client.script_exists(*shas)
        missing = [n for n, ok in zip(ledger.scripts.scripts, loaded) if not ok]
        out.append(Finding(OK if not missing else WARN, "scripts",
                           "all scripts loaded" if not missing else f"not loaded: {', '.join(missing)}",
                           "" if not missing else "cashierctl scripts load (the reconcile service loads them at start)"))
        for part in ledger.partitions:
            groups = {g["name"]: g for g in client.xinfo_groups(part.journal)}
            group = groups.get(CONSUMER_GROUP)
            if group is None:
                out.append(Finding(FAIL, "journal", f"partition {part.index}: no consumer group",
                                   "cashierctl init"))
                continue
            lag = group.get("lag") or 0
            pending = group.get("pending") or 0
            level = OK if lag < lag_warn_entries else WARN
            out.append(Finding(level, "journal", f"partition {part.index}: lag {lag}, pending {pending}",
                               "" if level == OK else "is the reconcile service running? reconcile-service status"))
    except NoPermissionError as exc:
        out.append(Finding(WARN, "access", f"could not check the ledger: {exc}", "use the admin user"))
    return out
