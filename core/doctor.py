"""Checks a deployment's Redis for what can lose money or let the wrong people in, and
says how to fix each finding (memory against maxmemory too). Used by `cashierctl doctor`.

On a Sentinel deployment (redis+sentinel:// URL) it also checks what a failover needs:
a reachable sentinel quorum, replicas that are up, have AOF on and hold the ledger's
scripts, writes acknowledged with WAIT (wait_replicas; read from the primary's command
statistics, the evidence of what the tills actually do), min-replicas-to-write, and
says how long a failover makes charges wait. A TTL on a ledger key that must never expire
(core.key_ttls) is a warning naming the key and the seconds it has left. Any enabled ACL
user other than the ledger's three (gateway, reconcile, admin)
that can write the ledger's keys (core.acl.ledger_writers: ACL DRYRUN) is a warning
naming it and its fix, the default user on without a password a failure; run as a user
that may not read the ACL, doctor says it could not check."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from redis.exceptions import NoPermissionError, RedisError

from .capacity import MEMORY_NOTICE_SHARE, human_bytes  # noqa: F401 (doctor's notice and the till's)
from .connection import SAFE_EVICTION_POLICY, is_cluster, is_sentinel, parse_redis_url, replica_clients
from .key_ttls import expiring_ledger_keys
from .keys import CONSUMER_GROUP, META_KEY

OK, WARN, FAIL = "ok", "warn", "FAIL"
MEMORY_WARN_SHARE = 0.70      # of maxmemory; the alert rules of docs/operations.md use the same
MEMORY_FAIL_SHARE = 0.85


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


def memory_finding(where: str, used: int, limit: int) -> Finding:
    """Used memory against maxmemory: warn at 70 %, FAIL at 85 % (noeviction: at 100 % every
    charge is refused). The time to full at the last hour's rate is the reconcile service's
    gauge reconcile_redis_full_in_seconds (a one-shot check has no hour of samples)."""
    size = "cashierctl capacity --ops-per-s N says how much this installation needs"
    if not limit:
        return Finding(WARN, "memory", f"{where}: no maxmemory set (uses {human_bytes(used)}): a full machine "
                       "swaps or the kernel kills Redis instead of Redis refusing writes, and no percentage "
                       "can warn before", f"maxmemory in redis.conf with noeviction; {size}")
    share = used / limit
    detail = f"{where}: uses {human_bytes(used)} of maxmemory {human_bytes(limit)} ({share:.0%})"
    for threshold, level in ((MEMORY_FAIL_SHARE, FAIL), (MEMORY_WARN_SHARE, WARN)):
        if share >= threshold:
            return Finding(level, "memory", f"{detail}: above {threshold:.0%}; at 100 % every charge is refused",
                           f"raise maxmemory (CONFIG SET maxmemory and redis.conf) or shorten the retention; {size}")
    return Finding(OK, "memory", detail)


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
        out.append(memory_finding(where, int(mem.get("used_memory", 0)), int(mem.get("maxmemory", 0))))
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
    out += acl_findings(client)
    if is_sentinel(client):
        out += sentinel_findings(ledger)
    scheme = urlsplit(url).scheme
    if scheme.startswith("rediss"):
        out.append(Finding(OK, "tls", "connection uses TLS"))
    else:
        target = parse_redis_url(url)
        hosts = [h for h, _ in target.hosts] or ["a local socket"]
        level = OK if all(h in ("127.0.0.1", "::1", "localhost", "a local socket") for h in hosts) else WARN
        out.append(Finding(level, "tls", f"plain TCP to {', '.join(dict.fromkeys(hosts))}",
                           "" if level == OK else "use rediss:// (rediss+sentinel://) between PCs (docs/deployment.md)"))
    try:
        if client.hget(META_KEY, "partitions") is None:
            out.append(Finding(FAIL, "ledger", "no ledger on this Redis",
                               "new installation: cashierctl init; lost data: reconcile-service restore"))
            return out
        runner = ledger.scripts
        if is_cluster(client):
            missing = [n.name for n in client.get_primaries() if not runner.loaded_on(n.redis_connection)]
        else:
            missing = [] if runner.loaded_on(client) else ["this Redis"]
        out.append(retention_finding(ledger))
        out.append(Finding(OK if not missing else WARN, "scripts",
                           f"all scripts loaded (function library {runner.library_name})" if not missing
                           else f"function library {runner.library_name} not loaded on {', '.join(missing)}",
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
        out.extend(ttl_findings(client))
    except NoPermissionError as exc:
        out.append(Finding(WARN, "access", f"could not check the ledger: {exc}", "use the admin user"))
    return out


def acl_findings(client) -> list[Finding]:
    """FAIL while the default user is on without a password; a WARN naming each other
    enabled user, besides the ledger's three (core.acl.LEDGER_USERS), that can write the
    ledger's keys (ACL DRYRUN of HSET, SET, DEL, XADD, FCALL, EVAL, FLUSHALL on cs:*),
    with its fix; 'could not check' when this user may not read the ACL."""
    from .acl import LEDGER_USERS, ledger_writers
    try:
        writers = ledger_writers(client)
        users = (client.acl_users() if not is_cluster(client)
                 else client.acl_users(target_nodes=client.get_random_node()))
    except NoPermissionError:
        return [Finding(WARN, "acl", "could not check the ACL users: this user may not read them "
                        "(ACL USERS, GETUSER, DRYRUN)", "run doctor with the admin user's URL")]
    except RedisError as exc:
        return [Finding(WARN, "acl", f"could not check the ACL users: {type(exc).__name__}: {str(exc)[:200]}",
                        "run doctor again; ACL DRYRUN needs Redis 7")]
    out: list[Finding] = []
    for w in writers:
        where = "" if w.nodes == ("redis",) else f" (on {', '.join(w.nodes)})"
        can = f"{', '.join(w.can)} on cs:*"
        if w.name == "default" and w.nopass:
            out.append(Finding(FAIL, "acl", f"the default user is on with no password and can run {can}{where}: "
                               "anyone who reaches Redis can change balances", w.fix))
        elif w.name == "default":
            out.append(Finding(WARN, "acl", f"the default user (requirepass) can run {can}{where}: whoever "
                               "knows that one shared password writes balances past the gateway", w.fix))
        elif w.old_till_user:
            out.append(Finding(WARN, "acl", f"user {w.name}, the till user of an earlier version, can still run "
                               f"{can}{where}: tills hold no Redis login now", w.fix))
        else:
            out.append(Finding(WARN, "acl", f"user {w.name} can run {can}{where} and is not one of the "
                               f"ledger's users ({', '.join(LEDGER_USERS)})", w.fix))
    if not writers:
        out.append(Finding(OK, "acl", f"users: {', '.join(sorted(users))}; none but "
                           f"{', '.join(u for u in LEDGER_USERS if u in users) or 'the admin'} can write cs:*"))
    return out


def retention_finding(ledger) -> Finding:
    """The idempotency retention the scripts write txn records with (the shop's setting
    in cs:meta), and the age from which the tills stop re-sending on their own."""
    from .validation import RESEND_MARGIN_S
    try:
        stored = ledger.stored_retention_s()
    except ValueError as exc:                      # InvalidRequest: edited by hand
        return Finding(FAIL, "retention", str(exc), "cashierctl init --retention-s N (N >= 86400)")
    retention_s = stored if stored is not None else ledger.retention_s
    where = "the shop's setting" if stored is not None else "the default: cs:meta has none"
    return Finding(OK if stored is not None else WARN, "retention",
                   f"txn records kept {retention_s} s ({retention_s / 86400:g} days, {where}); tills "
                   f"re-send on their own only operations younger than {retention_s - RESEND_MARGIN_S} s",
                   "" if stored is not None else "cashierctl init --retention-s N stores it for every till")


def ttl_findings(client, *, shown: int = 20) -> list[Finding]:
    """A warning per ledger key that must never expire and has a TTL (core.key_ttls),
    the first `shown` of them named with the seconds they have left."""
    expiring = expiring_ledger_keys(client)
    if not expiring:
        return [Finding(OK, "ttl", "no ledger key that must persist has a TTL")]
    out = [Finding(WARN, "ttl", f"{e.key} expires in {e.seconds_left:.0f} s: a ledger key must never expire",
                   f"PERSIST {e.key} now, then find what set the TTL") for e in expiring[:shown]]
    if len(expiring) > shown:
        out.append(Finding(WARN, "ttl", f"{len(expiring) - shown} more ledger keys have a TTL", "PERSIST each"))
    return out


def sentinel_findings(ledger) -> list[Finding]:
    """What a Sentinel failover needs (see the module docstring)."""
    client = ledger.client
    manager, service = client.sentinel_manager, client.sentinel_service_name
    out: list[Finding] = []
    views, unreachable = [], []
    for sentinel in manager.sentinels:
        where = "{host}:{port}".format_map(sentinel.connection_pool.connection_kwargs)
        try:
            views.append((sentinel, sentinel.sentinel_master(service)))
        except RedisError as exc:
            unreachable.append(f"{where} ({type(exc).__name__})")
    quorum = int(views[0][1].get("quorum", 0)) if views else 0
    total = len(manager.sentinels)
    if not views:
        out.append(Finding(WARN, "sentinel", f"no sentinel answers: {', '.join(unreachable)}",
                           "start the sentinels (deploy/sentinel/) and check the URL's hosts and sentinel_password"))
        return out
    # a failover needs `quorum` sentinels to agree the primary is down, and a majority of all
    # the sentinels to elect the one that promotes a replica
    majority = total // 2 + 1
    try:
        views[0][0].execute_command("SENTINEL", "CKQUORUM", service)
        ckquorum = ""
    except RedisError as exc:
        ckquorum = str(exc)
    if len(views) < max(quorum, majority) or ckquorum.startswith("NOQUORUM"):
        out.append(Finding(WARN, "sentinel", f"{len(views)} of {total} sentinels reachable (quorum {quorum}, "
                           f"majority {majority}): a failover cannot happen"
                           + (f"; unreachable: {', '.join(unreachable)}" if unreachable else ""),
                           "start the missing sentinels; run three, on three machines (docs/deployment.md)"))
    else:
        level = OK if not unreachable and total >= 3 else WARN
        out.append(Finding(level, "sentinel", f"{len(views)} of {total} sentinels reachable, quorum {quorum}"
                           + (f"; unreachable: {', '.join(unreachable)}" if unreachable else ""),
                           "" if level == OK else "three sentinels on three machines survive the loss of any one"))
    state = views[0][1]
    down_after_ms = int(state.get("down-after-milliseconds", 0))
    out.append(Finding(OK if down_after_ms <= 5000 else WARN, "failover",
                       f"primary {state.get('ip')}:{state.get('port')}; a dead primary is replaced after "
                       f"about {down_after_ms / 1000:g} s + the election (charges wait that long, then go on)",
                       "" if down_after_ms <= 5000 else "sentinel down-after-milliseconds 2000 keeps the wait "
                       "within the tills' retry deadline (docs/deployment.md)"))
    try:
        replication = client.info("replication")
        stats = client.info("commandstats")
        min_replicas = int(client.config_get("min-replicas-to-write").get("min-replicas-to-write", 0))
    except (NoPermissionError, RedisError) as exc:
        out.append(Finding(WARN, "access", f"could not read the primary's replication state: {exc}",
                           "run doctor with the admin user's URL"))
        return out
    replicas = int(replication.get("connected_slaves", 0))
    if replicas == 0:
        out.append(Finding(FAIL, "replicas", "the primary has no replica: a failover has nothing to promote",
                           "start the replicas (deploy/sentinel/redis-replica.conf)"))
    elif replicas == 1:
        out.append(Finding(WARN, "replicas", "the primary has 1 replica: with wait_replicas=1 a failover "
                           "leaves the new primary none, and charges wait until the old machine is back",
                           "a second replica (three machines, docs/deployment.md)"))
    else:
        out.append(Finding(OK, "replicas", f"the primary has {replicas} replicas"))
    waits = stats.get("cmdstat_wait") or {}
    script_calls = sum(int((stats.get(f"cmdstat_{c}") or {}).get("calls", 0)) for c in ("fcall", "evalsha"))
    wait_calls = int(waits.get("calls", 0))
    if script_calls and not wait_calls:
        out.append(Finding(WARN, "wait", f"{script_calls} script calls on this primary and no WAIT: the tills "
                           "run without wait_replicas, so a failover loses what the replica had not received",
                           "wait_replicas=1 on every till (terminal settings) and in cashierctl/reconcile "
                           "(docs/deployment.md)"))
    else:
        out.append(Finding(OK, "wait", f"{wait_calls} WAIT for {script_calls} script calls on this primary"
                           + ("" if script_calls else " (no writes yet: give every till wait_replicas=1)")))
    if min_replicas < 1:
        out.append(Finding(WARN, "min-replicas", "min-replicas-to-write 0: a primary cut off from its replicas "
                           "keeps taking writes that a failover then discards",
                           "min-replicas-to-write 1 and min-replicas-max-lag 5 on every Redis node"))
    try:
        nodes = replica_clients(client)
    except RedisError as exc:
        out.append(Finding(WARN, "replicas", f"the sentinels did not list the replicas: {exc}"))
        nodes = []
    for node in nodes:
        where = "replica {host}:{port}".format_map(node.connection_pool.connection_kwargs)
        try:
            aof = node.info("persistence").get("aof_enabled") in (1, "1")
            missing = not ledger.scripts.loaded_on(node)
        except (NoPermissionError, RedisError) as exc:
            out.append(Finding(WARN, "replicas", f"{where}: {type(exc).__name__}: {str(exc)[:120]}"))
            continue
        finally:
            node.close()
        out.append(Finding(OK if aof else WARN, "persistence",
                           f"{where}: AOF {'on' if aof else 'off'}" + ("" if aof else ": once promoted, a "
                           "restart of that machine loses every change since the failover"),
                           "" if aof else "appendonly yes, appendfsync always in the replica's redis.conf"))
        if missing:
            out.append(Finding(WARN, "scripts", f"{where}: function library {ledger.scripts.library_name} "
                               "not loaded (replicas receive it by replication: is it in sync?): once "
                               "promoted, tills whose user may not load scripts are refused",
                               "cashierctl scripts load (the reconcile service does it at every trim)"))
    return out
