"""Loads the Lua scripts of `core/lua/` and runs them by SHA.

One file per operation; shared pieces live in `lua/includes/` and are pasted in
where a script says ``--@include <name>``. Each script is sent once (SCRIPT LOAD)
and called with EVALSHA; when Redis answers NOSCRIPT (restart, failover, SCRIPT
FLUSH) the script is loaded again and the call repeated, which is safe because every
script is idempotent by txn id. On Sentinel the scripts are loaded on the replicas too,
so the primary a failover promotes has them already.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from redis.exceptions import NoPermissionError, NoScriptError, RedisError

from .errors import LedgerUnavailable

from .resources import lua_dir

_INCLUDE_RE = re.compile(r"^--@include (\w+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class LuaScript:
    name: str
    body: str
    sha: str


def _expand(text: str, includes: Path) -> str:
    return _INCLUDE_RE.sub(lambda m: (includes / f"{m.group(1)}.lua").read_text(encoding="utf-8"), text)


def load_scripts(directory: Path | None = None) -> dict[str, LuaScript]:
    directory = directory or lua_dir()
    scripts = {}
    for path in sorted(directory.glob("*.lua")):
        body = _expand(path.read_text(encoding="utf-8"), directory / "includes")
        scripts[path.stem] = LuaScript(path.stem, body, hashlib.sha1(body.encode()).hexdigest())
    if not scripts:
        raise FileNotFoundError(f"no Lua scripts found in {directory}")
    return scripts


class ScriptRunner:
    """Runs the ledger's scripts on a redis-py client (standalone or cluster)."""

    def __init__(self, scripts: dict[str, LuaScript] | None = None):
        self.scripts = scripts or load_scripts()

    def __getitem__(self, name: str) -> LuaScript:
        return self.scripts[name]

    def load_all(self, client) -> None:
        """SCRIPT LOAD every script (on a cluster: on every primary). On Sentinel also on
        every replica the sentinels know: Redis does not replicate its script cache, and a
        promoted replica that has the scripts serves terminals at once, even terminals
        whose user may not load scripts."""
        for script in self.scripts.values():
            self.load(client, script)
        self.load_on_replicas(client)

    def load_on_replicas(self, client) -> int:
        """Load every script on the Sentinel replicas (0 for other topologies); returns how
        many replicas took them. A replica that is down or refuses is skipped: `cashierctl
        doctor` reports replicas without the scripts."""
        from .connection import replica_clients
        loaded = 0
        try:
            replicas = replica_clients(client)
        except RedisError:
            return 0
        for replica in replicas:
            try:
                for script in self.scripts.values():
                    replica.script_load(script.body)
                loaded += 1
            except RedisError:
                continue
            finally:
                replica.close()
        return loaded

    def call(self, client, name: str, keys: Sequence[str], args: Sequence[Any]):
        script = self.scripts[name]
        try:
            return client.evalsha(script.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.load(client, script)
            return client.evalsha(script.sha, len(keys), *keys, *args)

    @staticmethod
    def load(client, script: LuaScript) -> None:
        try:
            client.script_load(script.body)
        except NoPermissionError as exc:
            raise LedgerUnavailable(
                f"Redis does not have the ledger script {script.name!r} loaded (restarted or "
                "flushed?) and this Redis user may not load scripts. The reconcile service loads "
                "them when it starts; or run `cashierctl scripts load` as the admin user") from exc
