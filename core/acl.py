"""Least-privilege Redis ACL users for the ledger, as `ACL SETUSER` rules.

Three users:
  * terminal: runs the ledger's functions (FCALL) and the few reads a till needs, on the
    ledger's keys only. No SET, DEL, EVAL, FUNCTION LOAD, FLUSHALL, CONFIG, KEYS.
  * reconcile: the terminal's rights plus the consumer-group commands, trimming, the
    scans of reconciliation, and FUNCTION LOAD (it loads the library at start, so
    terminals that may not load it find it after a Redis restart).
  * admin: everything (for `cashierctl` and maintenance).

Redis checks a script's own commands against the caller's ACL too, so a terminal must
be allowed the hash/stream/sorted-set writes its scripts make (HSET, HINCRBY, XADD,
...). What the ACL withholds is every command a script does not need and every key
outside `cs:*`; a terminal that writes a balance hash directly leaves no journal entry,
which reconciliation reports as a discrepancy.
"""
from __future__ import annotations

from dataclasses import dataclass

KEY_PATTERN = "~cs:*"

# Commands the ledger scripts run inside Redis (checked against the caller's ACL).
SCRIPT_COMMANDS = ("time", "exists", "hget", "hmget", "hgetall", "hset", "hincrby", "hdel", "hexists",
                   "expire", "xadd", "sadd", "zadd", "zrem", "zscore", "zrangebyscore")
# What a client library needs to connect, on a standalone Redis and on a Cluster. (redis-py
# also sends CLIENT SETINFO, which Redis 7.0 lacks and redis-py ignores when refused.)
CONNECT_COMMANDS = ("ping", "hello", "auth", "client|setname", "client|id",
                    "cluster|slots", "cluster|shards", "cluster|nodes", "cluster|myid",
                    "command", "readonly", "info", "select", "quit", "reset")
# incrby + wait: the wait_replicas acknowledgement (redis-py sends INCR as INCRBY key 1; WAIT)
TERMINAL_COMMANDS = ("fcall", "fcall_ro", "xrevrange", "hgetall", "incr", "incrby", "wait", "hincrby",
                     "hsetnx")
RECONCILE_COMMANDS = ("xreadgroup", "xack", "xautoclaim", "xclaim", "xpending", "xinfo|groups",
                      "xinfo|stream", "xinfo|consumers", "xtrim", "xrange", "xlen",
                      "xgroup|create", "xgroup|createconsumer", "sscan", "smembers", "scard",
                      "function|load", "function|list", "hsetnx", "hgetall", "zrange",
                      # the pass's TTL scan (core.key_ttls) and card-map pages (reconcile_service/compare.py)
                      "scan", "pttl", "hscan")
# PIN attempts (core/lua/cashier_pin_attempt.lua) count failures and set a lock with
# plain strings: granted on the cashier keys only, never on balances or the journal.
CASHIER_SELECTOR = "(~cs:cashier:* +get +set +del +incr +pttl +pexpire)"
FORBIDDEN_FOR_TERMINAL = ("set", "del", "unlink", "eval", "script|load", "script|flush",
                          "flushall", "flushdb", "config|set", "config|get", "keys", "debug",
                          "xdel", "xtrim", "xgroup|destroy", "rename", "restore", "migrate",
                          "function|load", "function|flush", "function|delete", "evalsha", "acl|setuser", "shutdown")


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


def ledger_users(terminal_password: str = "<terminal-password>",
                 reconcile_password: str = "<reconcile-password>",
                 admin_password: str = "<admin-password>", *,
                 terminal_user: str = "cashier-terminal", reconcile_user: str = "cashier-reconcile",
                 admin_user: str = "cashier-admin") -> list[AclUser]:
    terminal = tuple(dict.fromkeys(SCRIPT_COMMANDS + CONNECT_COMMANDS + TERMINAL_COMMANDS))
    reconcile = tuple(dict.fromkeys(terminal + RECONCILE_COMMANDS))
    return [AclUser(terminal_user, terminal_password, terminal, selectors=(CASHIER_SELECTOR,)),
            AclUser(reconcile_user, reconcile_password, reconcile, selectors=(CASHIER_SELECTOR,)),
            AclUser(admin_user, admin_password, (), all_commands=True)]


def apply_users(client, users: list[AclUser]) -> list[str]:
    """ACL SETUSER each user on every primary (and replica) node; returns node names.

    ACL users are not replicated: on Sentinel they are set on the primary and on every
    replica the sentinels know, so that a promoted replica lets the same users in."""
    from .connection import is_cluster, replica_clients
    nodes = client.get_nodes() if is_cluster(client) else [None]
    done = []
    for node in nodes:
        for user in users:
            if node is None:
                client.execute_command("ACL", "SETUSER", user.name, *user.rule_args())
            else:
                client.execute_command("ACL", "SETUSER", user.name, *user.rule_args(), target_nodes=node)
        done.append(node.name if node is not None else "redis")
    for replica in replica_clients(client):
        try:
            for user in users:
                replica.execute_command("ACL", "SETUSER", user.name, *user.rule_args())
            done.append("replica {host}:{port}".format_map(replica.connection_pool.connection_kwargs))
        finally:
            replica.close()
    return done
