"""Loads the Lua scripts of `core/lua/` and runs them by SHA.

One file per operation; shared pieces live in `lua/includes/` and are pasted in
where a script says ``--@include <name>``. Each script is sent once (SCRIPT LOAD)
and called with EVALSHA; when Redis answers NOSCRIPT (restart, failover, SCRIPT
FLUSH) the script is loaded again and the call repeated, which is safe because every
script is idempotent by txn id.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from redis.exceptions import NoPermissionError, NoScriptError

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
        """SCRIPT LOAD every script (on a cluster: on every primary)."""
        for script in self.scripts.values():
            self.load(client, script)

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
