"""Least-privilege Redis ACL users for the ledger, as `ACL SETUSER` rules, and the check
for any other user that can write the ledger's keys.

Three users, and no others that can write (tills hold no Redis login: they talk to the
gateway with a per-terminal credential):
  * gateway: what the ledger gateway (gateway/) does: runs the ledger's functions
    (FCALL), the reads behind its answers (accounts, cards, members, history, promotions,
    cs:meta, INFO for Redis's memory share), WAIT, and its own records: sessions and
    supervisor grants (cs:session:*, cs:approval:*: HSET/EXPIRE/HSETNX, DEL on those
    keys only), terminal tokens (HMGET, last-seen HSET) and cashier and member PIN attempts
    (strings on cs:cashier:* and cs:mpin:* only). No SET or DEL on balances, EVAL,
    FUNCTION LOAD, FLUSHALL, CONFIG, KEYS, XTRIM, ACL.
  * reconcile: the ledger's functions and reads plus the consumer-group commands,
    trimming, the scans of reconciliation, and FUNCTION LOAD (it loads the library at
    start, so the gateway, which may not load it, finds it after a Redis restart), and the
    back office's writes to the cashier and terminal registries (cs:cashier:*, cs:terminal:*).
  * admin: everything (for `cashierctl` and maintenance).

Redis checks a script's own commands against the caller's ACL too, so the gateway must
be allowed the hash/stream/sorted-set writes its scripts make (HSET, HINCRBY, XADD, ...):
whoever holds the gateway's password can write those keys directly. That is why the
gateway is a trusted server process and no till holds a Redis login; a balance written
outside the scripts leaves no journal entry, which reconciliation reports as a
discrepancy. What the ACL withholds is every command no script or gateway code needs
and every key outside `cs:*`.

`cashierctl acl --apply` sets the three users (`apply_users`) and deletes the users of
earlier versions (`retire_users`): the till user `cashier-terminal` and any per-till
`cashier-terminal-<id>`, and the former names of the three, `cashier-gateway`,
`cashier-reconcile` and `cashier-admin` (switch each program's URL to the new user first:
docs/deployment.md). `ledger_writers` names every other enabled user that can write `cs:*`
(asked with ACL DRYRUN, Redis 7): `cashierctl acl --apply` and `doctor` warn about them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

KEY_PATTERN = "~cs:*"

# the ACL user names issue 24 gives (gateway, reconcile, admin: the only users that may write)
GATEWAY_USER, RECONCILE_USER, ADMIN_USER = "gateway", "reconcile", "admin"
LEDGER_USERS = (GATEWAY_USER, RECONCILE_USER, ADMIN_USER)
# Users of earlier versions, which `cashierctl acl --apply` deletes: the till user (one
# shared, or one per till as docs/deployment.md once suggested) and the former names of the
# three above.
FORMER_USERS = ("cashier-gateway", "cashier-reconcile", "cashier-admin")
OLD_TILL_USERS = ("cashier-terminal", "cashier-terminal-*", *FORMER_USERS)

# Commands the ledger scripts run inside Redis (checked against the caller's ACL).
SCRIPT_COMMANDS = ("time", "exists", "hget", "hmget", "hgetall", "hset", "hincrby", "hdel", "hexists",
                   "expire", "xadd", "sadd", "zadd", "zrem", "zscore", "zrangebyscore")
# What a client library needs to connect, on a standalone Redis and on a Cluster. (redis-py
# also sends CLIENT SETINFO, which Redis 7.0 lacks and redis-py ignores when refused.)
CONNECT_COMMANDS = ("ping", "hello", "auth", "client|setname", "client|id",
                    "cluster|slots", "cluster|shards", "cluster|nodes", "cluster|myid",
                    "command", "readonly", "info", "select", "quit", "reset")
# Calling the ledger (core.Ledger): the functions, the journal reads, the wait_replicas
# acknowledgement (redis-py sends INCR as INCRBY key 1; WAIT).
LEDGER_COMMANDS = ("fcall", "fcall_ro", "xrevrange", "hgetall", "incr", "incrby", "wait", "hincrby",
                   "hsetnx")
# The gateway's own reads and records beyond that: sessions and grants are written in
# MULTI/EXEC (gateway/sessions.py), an operation's history reads its txn record's TTL and
# the journal by id (core/history.py).
GATEWAY_COMMANDS = ("multi", "exec", "discard", "ttl", "xrange", "zrangebylex")
RECONCILE_COMMANDS = ("xreadgroup", "xack", "xautoclaim", "xclaim", "xpending", "xinfo|groups",
                      "xinfo|stream", "xinfo|consumers", "xtrim", "xrange", "xlen",
                      "xgroup|create", "xgroup|createconsumer", "sscan", "smembers", "scard",
                      "function|load", "function|list", "hsetnx", "hgetall", "zrange",
                      # the pass's TTL scan (core.key_ttls) and card-map pages (reconcile_service/compare.py)
                      "scan", "pttl", "hscan")
# PIN attempts (core/lua/cashier_pin_attempt.lua) count failures and set a lock with
# plain strings: granted on the cashier keys only, never on balances or the journal.
CASHIER_SELECTOR = "(~cs:cashier:* +get +set +del +incr +pttl +pexpire)"
# The back office (the reconcile service's page, issue 29) adds, disables and re-PINs
# cashiers and enrols and revokes terminals: plain hashes and their index sets, granted
# on those two registries only (core/cashiers.py, core/terminals.py), never on balances.
REGISTRY_SELECTOR = "(~cs:cashier:* ~cs:terminal:* +hset +sadd +exists +del)"
# Member payment PINs (core/member_pins.py): the same counter-and-lock function on the
# member PIN keys, and DEL of a member's counter and lock when a supervisor resets it.
MEMBER_PIN_SELECTOR = "(~cs:mpin:* +get +set +del +incr +pttl +pexpire)"
# A session ended (sign-out) or a grant that expired while being used is deleted: DEL on
# the gateway's own token records only (gateway/sessions.py).
TOKEN_SELECTOR = "(~cs:session:* ~cs:approval:* +del)"
FORBIDDEN_FOR_GATEWAY = ("set", "del", "unlink", "eval", "script|load", "script|flush",
                         "flushall", "flushdb", "config|set", "config|get", "keys", "debug",
                         "xdel", "xtrim", "xgroup|destroy", "rename", "restore", "migrate",
                         "function|load", "function|flush", "function|delete", "evalsha", "acl|setuser",
                         "acl|deluser", "shutdown")

# What "can write the ledger's keys" means to `ledger_writers`: any of these, asked with
# ACL DRYRUN on a cs:* key (FCALL: any function; FLUSHALL deletes every key).
WRITE_PROBES = (("HSET", "cs:acl-probe", "f", "1"), ("HINCRBY", "cs:acl-probe", "f", "1"),
                ("SET", "cs:acl-probe", "1"), ("DEL", "cs:acl-probe"), ("XADD", "cs:acl-probe", "*", "f", "1"),
                ("FCALL", "deduct", "1", "cs:acl-probe"), ("EVAL", "return 1", "1", "cs:acl-probe"),
                ("FLUSHALL",))


@dataclass(frozen=True)
class AclUser:
    name: str
    password: str
    commands: tuple[str, ...]
    keys: str = KEY_PATTERN
    all_commands: bool = False
    selectors: tuple[str, ...] = ()   # extra "(~keys +cmds)" rule sets (Redis 7 selectors)

    def rule_args(self) -> list[str]:
        """The arguments of `ACL SETUSER name ...` (reset first: the rules are the whole truth)."""
        args = ["reset", "on", f">{self.password}"]
        if self.all_commands:
            return args + ["~*", "&*", "+@all"]
        return args + [self.keys, "resetchannels", "-@all", *(f"+{c}" for c in self.commands),
                       *self.selectors]

    def line(self) -> str:
        quoted = [f'"{a}"' if " " in a else a for a in self.rule_args()]
        return " ".join(["ACL", "SETUSER", self.name, *quoted])


def ledger_users(gateway_password: str = "<gateway-password>",
                 reconcile_password: str = "<reconcile-password>",
                 admin_password: str = "<admin-password>", *,
                 gateway_user: str = GATEWAY_USER, reconcile_user: str = RECONCILE_USER,
                 admin_user: str = ADMIN_USER) -> list[AclUser]:
    """The gateway, reconcile and admin users, in that order."""
    ledger = SCRIPT_COMMANDS + CONNECT_COMMANDS + LEDGER_COMMANDS
    gateway = tuple(dict.fromkeys(ledger + GATEWAY_COMMANDS))
    reconcile = tuple(dict.fromkeys(ledger + RECONCILE_COMMANDS))
    return [AclUser(gateway_user, gateway_password, gateway,
                    selectors=(CASHIER_SELECTOR, MEMBER_PIN_SELECTOR, TOKEN_SELECTOR)),
            AclUser(reconcile_user, reconcile_password, reconcile, selectors=(CASHIER_SELECTOR, REGISTRY_SELECTOR)),
            AclUser(admin_user, admin_password, (), all_commands=True)]


def is_old_till_user(name: str) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in OLD_TILL_USERS)


def _nodes(client):
    """(name, run) of every node ACL users live on: each Cluster node, or the one Redis, then
    the replicas the sentinels know (ACL users are not replicated). The caller closes
    nothing: replica clients are closed by `_close`."""
    from .connection import is_cluster, replica_clients
    if is_cluster(client):
        return [(node.name, lambda *a, node=node: client.execute_command(*a, target_nodes=node), None)
                for node in client.get_nodes()]
    out = [("redis", client.execute_command, None)]
    for replica in replica_clients(client):
        name = "replica {host}:{port}".format_map(replica.connection_pool.connection_kwargs)
        out.append((name, replica.execute_command, replica))
    return out


def _close(nodes) -> None:
    for _, _, replica in nodes:
        if replica is not None:
            replica.close()


def apply_users(client, users: list[AclUser]) -> list[str]:
    """ACL SETUSER each user on every primary (and replica) node; returns node names.

    ACL users are not replicated: on Sentinel they are set on the primary and on every
    replica the sentinels know, so that a promoted replica lets the same users in."""
    nodes = _nodes(client)
    try:
        for _, run, _ in nodes:
            for user in users:
                run("ACL", "SETUSER", user.name, *user.rule_args())
        return [name for name, _, _ in nodes]
    finally:
        _close(nodes)


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass
class Retired:
    """What `retire_users` did: the old till users it deleted (with the connections that
    closed with them), per node."""
    removed: dict[str, list[str]] = field(default_factory=dict)       # user -> nodes
    connections: dict[str, int] = field(default_factory=dict)         # user -> connections closed


def retire_users(client) -> Retired:
    """ACL DELUSER every old till user (OLD_TILL_USERS) on every node. Deleting a user
    also closes the connections open with it (counted first, from CLIENT LIST)."""
    done = Retired()
    nodes = _nodes(client)
    try:
        for where, run, _ in nodes:
            old = [u for u in map(_text, run("ACL", "USERS")) if is_old_till_user(u)]
            if not old:
                continue
            clients = _text(run("CLIENT", "LIST")) if old else ""
            for user in old:
                open_now = sum(1 for line in clients.splitlines() if f" user={user} " in f" {line} ")
                run("ACL", "DELUSER", user)
                done.removed.setdefault(user, []).append(where)
                done.connections[user] = done.connections.get(user, 0) + open_now
    finally:
        _close(nodes)
    return done


@dataclass(frozen=True)
class Writer:
    """An enabled ACL user, other than the ledger's three, that can write the ledger's keys."""
    name: str
    nodes: tuple[str, ...]
    can: tuple[str, ...]          # the write commands ACL DRYRUN allowed it (HSET, FCALL, ...)
    nopass: bool                  # logs in without a password

    @property
    def old_till_user(self) -> bool:
        return is_old_till_user(self.name)

    @property
    def fix(self) -> str:
        if self.name == "default":
            return ("every program has its own user (cashierctl acl --apply): ACL SETUSER default off "
                    "(or `user default off` in the aclfile), then ACL SAVE")
        if self.old_till_user:
            return "cashierctl acl --apply deletes it (tills talk to the gateway), then ACL SAVE"
        return (f"if nothing needs it: ACL DELUSER {self.name} (or fewer rights), then ACL SAVE; "
                "cashierctl acl --apply sets the ledger's own users")


def ledger_writers(client, known: tuple[str, ...] = LEDGER_USERS) -> list[Writer]:
    """Every enabled user not in `known` that ACL DRYRUN lets run a write command (or
    FCALL, EVAL, FLUSHALL) on a cs:* key, on any node; sorted by name. Needs a user that
    may run ACL USERS/GETUSER/DRYRUN (the admin): NoPermissionError otherwise."""
    from redis.exceptions import NoPermissionError, RedisError
    found: dict[str, tuple[list[str], set[str], bool]] = {}
    nodes = _nodes(client)
    try:
        for where, run, replica in nodes:
            try:
                users = sorted(map(_text, run("ACL", "USERS")))
            except RedisError as exc:              # a replica that is down: doctor's replica check says so
                if replica is None or isinstance(exc, NoPermissionError):
                    raise
                continue
            for user in users:
                if user in known:
                    continue
                info = run("ACL", "GETUSER", user) or {}
                if isinstance(info, list):         # RESP2 without redis-py's parser: name, value, ...
                    info = dict(zip(map(_text, info[::2]), info[1::2]))
                flags = {_text(f) for f in (info.get("flags") or info.get(b"flags") or [])}
                if "on" not in flags:
                    continue
                can = [probe[0] for probe in WRITE_PROBES
                       if _text(run("ACL", "DRYRUN", user, *probe)) == "OK"]
                if can:
                    entry = found.setdefault(user, ([], set(), False))
                    entry[0].append(where)
                    entry[1].update(can)
                    found[user] = (entry[0], entry[1], entry[2] or "nopass" in flags)
    finally:
        _close(nodes)
    order = [p[0] for p in WRITE_PROBES]
    return [Writer(name, tuple(where), tuple(sorted(can, key=order.index)), nopass)
            for name, (where, can, nopass) in sorted(found.items())]
