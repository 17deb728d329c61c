"""Loads the Lua scripts of `core/lua/` as one Redis Function library and runs them by FCALL.

One file per operation; shared pieces live in `lua/includes/`. A script names the includes
it uses (`--@include <name>` lines); an include names the ones it uses itself the same
way, and comes after them. The loader builds one library (`cashier_<hash>`) from them:
every include once, then every operation as a function `<operation>_<hash>`. Redis
compiles the library once (FUNCTION LOAD), so the shared helpers are built once, not on
every call as with EVALSHA of a pasted-in script (issue 17: a third of a deduction's
server cost). The hash in the names keeps two versions of the software apart on one
Redis, as script SHAs did.

Functions are stored in the RDB/AOF and replicated, so a Sentinel replica has the library
as soon as it is in sync. When Redis answers "Function not found" (restart without
persistence, FUNCTION FLUSH) the library is loaded again and the call repeated, which is
safe because every script is idempotent by txn id. On a Cluster it is loaded on every
primary. Each operation also exists as a plain script (`LuaScript.body`: includes pasted
in) for tools that need EVAL, such as the benchmark's redis-benchmark runs.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from redis.cluster import RedisCluster
from redis.exceptions import NoPermissionError, ResponseError

from .errors import LedgerUnavailable

from .resources import lua_dir

_INCLUDE_RE = re.compile(r"^--@include (\w+)\s*$", re.MULTILINE)
# `--@flags no-writes` in a script's header: a read-only function (runs under OOM, on replicas)
_FLAGS_RE = re.compile(r"^--@flags ([\w -]+?)\s*$", re.MULTILINE)
# `--@batch <keys> <args>` in a script's header: the library also registers `<name>_batch`,
# which runs the operation once per item of one call (each item <keys> KEYS and <args> ARGV)
_BATCH_RE = re.compile(r"^--@batch (\d+) (\d+)\s*$", re.MULTILINE)

# The batch runner inside the library: each item runs the operation's own code with its
# own KEYS and ARGV, one after another, so an item is decided exactly as by a single call
# (an earlier item of the same txn id is seen as its replay). An item whose code raises
# (a Redis error such as WRONGTYPE, a script bug) is answered by that error, as the same
# item alone in a pipeline would be, and the items after it still run; like a single call,
# it keeps what it wrote before the error.
_BATCH_RUNNER = """
local function run_batch(op, keys_per_item, args_per_item, keys, args)
  local n = #keys / keys_per_item
  if n % 1 ~= 0 or #args ~= n * args_per_item then
    return redis.error_reply('ERR batch: ' .. #keys .. ' keys and ' .. #args .. ' arguments are not whole items')
  end
  local out = {}
  for i = 0, n - 1 do
    KEYS = {unpack(keys, i * keys_per_item + 1, (i + 1) * keys_per_item)}
    ARGV = {unpack(args, i * args_per_item + 1, (i + 1) * args_per_item)}
    local ok, reply = pcall(op)
    if not ok then
      if type(reply) == 'table' then reply = reply.err end
      reply = {err = tostring(reply)}
    end
    out[i + 1] = reply
  end
  return out
end
"""


@dataclass(frozen=True, slots=True)
class LuaScript:
    name: str
    body: str                 # the standalone script (includes pasted in), for EVAL
    sha: str
    source: str = ""          # the operation's own file, without its includes
    includes: tuple[str, ...] = ()   # every include it needs, each after the ones it uses
    flags: tuple[str, ...] = ()
    batch: tuple[int, int] | None = None    # (KEYS, ARGV) per item of `<name>_batch`


@dataclass(frozen=True, slots=True)
class HeaderSlot:
    """One KEYS[i] or ARGV[i] line of a script's header; `variadic`: KEYS[i..], every one from i on."""
    index: int
    text: str
    variadic: bool = False

    @property
    def unused(self) -> bool:
        """Passed to keep the shared layout, never read (its text starts with 'unused')."""
        return self.text.startswith("unused")


@dataclass(frozen=True, slots=True)
class LuaHeader:
    """A script's contract, as its header states it (`parse_header`)."""
    name: str
    keys: tuple[HeaderSlot, ...]
    argv: tuple[HeaderSlot, ...]
    returns: str
    statuses: tuple[str, ...]     # core.Status values the script decides
    errors: tuple[str, ...]       # replies that are not decisions (INVALID, TXN_CONFLICT, ...)


_SLOT_RE = re.compile(r"(KEYS|ARGV)\[(\d+)(\.\.)?\] (\S.*)")
_NAMES_RE = re.compile(r"(Statuses|Errors): (none|[A-Z_]+(?:, [A-Z_]+)*)")


def parse_header(source: str, name: str) -> LuaHeader:
    """The contract in the header of a script (`source`, the file `<name>.lua`).

    The header is the long comment the file opens with, in this strict format:
    ``<name>: <summary>`` (or ``<name> (<aside>): ...``) on its first line, then any
    prose, then the contract, every item at the start of a line and continued on lines
    indented by two spaces:
    ``KEYS[1] <what>``, ``KEYS[2] <what>``, ... in order (the last may be ``KEYS[n..]``:
    every key from n on), the same for ``ARGV[i]``, then ``Returns <reply>``, then
    ``Statuses: A, B`` (the `core.Status` values it decides, or ``none``), then
    ``Errors: X, Y`` (replies that are not decisions: INVALID, TXN_CONFLICT,
    NOT_INITIALIZED, or ``none``), then the end of the comment. A slot whose text starts
    with 'unused' is passed only to keep the shared layout. Raises ValueError."""
    def fail(why: str):
        raise ValueError(f"{name}.lua header: {why}")

    if not source.startswith("--[[\n") or "\n]]\n" not in source:
        fail("the file must open with a --[[ ... ]] comment")
    lines = source[len("--[[\n"):source.index("\n]]\n")].split("\n")
    if not re.match(rf"{re.escape(name)}( \([^)]*\))?: \S", lines[0]):
        fail(f"the first line must be '{name}: <what it does>'")
    slots: dict[str, list[HeaderSlot]] = {"KEYS": [], "ARGV": []}
    returns, names = None, {}
    stage = 0            # 0 prose, 1 KEYS, 2 ARGV, 3 Returns, 4 Statuses, 5 Errors
    for line in lines[1:]:
        slot, listed = _SLOT_RE.fullmatch(line), _NAMES_RE.fullmatch(line)
        if slot:
            kind, index, variadic = slot.group(1), int(slot.group(2)), bool(slot.group(3))
            want = 1 if kind == "KEYS" else 2
            if stage > want:
                fail(f"{line!r}: KEYS, then ARGV, then Returns, Statuses, Errors")
            stage = want
            have = slots[kind]
            if have and have[-1].variadic:
                fail(f"{line!r} after {kind}[{have[-1].index}..]")
            if index != len(have) + 1:
                fail(f"{line!r}: {kind}[{len(have) + 1}] expected")
            have.append(HeaderSlot(index, slot.group(4), variadic))
        elif line.startswith("Returns "):
            if stage >= 3:
                fail("one Returns line, after KEYS and ARGV")
            stage, returns = 3, line[len("Returns "):]
        elif listed:
            want = 4 if listed.group(1) == "Statuses" else 5
            if stage != want - 1:
                fail(f"{line!r}: Returns, then Statuses, then Errors")
            stage = want
            items = () if listed.group(2) == "none" else tuple(listed.group(2).split(", "))
            if len(set(items)) != len(items):
                fail(f"{line!r} names a status twice")
            names[listed.group(1)] = items
        elif line.startswith("  ") and stage in (1, 2, 3):     # a continuation line
            if stage == 3:
                returns += " " + line.strip()
            else:
                have = slots["KEYS" if stage == 1 else "ARGV"]
                last = have[-1]
                have[-1] = HeaderSlot(last.index, f"{last.text} {line.strip()}", last.variadic)
        elif stage == 0:
            continue
        else:
            fail(f"{line!r}: not a contract line (prose goes before KEYS[1])")
    if stage != 5:
        fail("the contract must end with Returns, Statuses and Errors lines")
    return LuaHeader(name, tuple(slots["KEYS"]), tuple(slots["ARGV"]), returns,
                     names["Statuses"], names["Errors"])


def _include_order(text: str, includes: Path) -> list[str]:
    """The includes `text` names and, before each, the ones it names itself: each once."""
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"Lua includes include each other: {' -> '.join(visiting + [name])}")
        visiting.append(name)
        for dep in _INCLUDE_RE.findall((includes / f"{name}.lua").read_text(encoding="utf-8")):
            visit(dep)
        visiting.pop()
        order.append(name)

    for name in _INCLUDE_RE.findall(text):
        visit(name)
    return order


def _include_text(name: str, includes: Path) -> str:
    """An include's own code, without its `--@include` lines (its includes come first)."""
    return _INCLUDE_RE.sub("", (includes / f"{name}.lua").read_text(encoding="utf-8"))


def _expand(text: str, includes: Path, order: list[str] | None = None) -> str:
    """The script with every include it needs (`order`: `_include_order`'s answer) pasted
    where its first `--@include` line was."""
    first = _INCLUDE_RE.search(text)
    if first is None:
        return text
    if order is None:
        order = _include_order(text, includes)
    pasted = "\n".join(_include_text(name, includes) for name in order)
    rest = _INCLUDE_RE.sub("", text[first.end():])
    return text[:first.start()] + pasted + rest


def load_scripts(directory: Path | None = None) -> dict[str, LuaScript]:
    directory = directory or lua_dir()
    scripts = {}
    for path in sorted(directory.glob("*.lua")):
        text = path.read_text(encoding="utf-8")
        includes = _include_order(text, directory / "includes")
        body = _expand(text, directory / "includes", includes)
        flags = tuple(f for m in _FLAGS_RE.finditer(text) for f in m.group(1).split())
        batch = _BATCH_RE.search(text)
        scripts[path.stem] = LuaScript(path.stem, body, hashlib.sha1(body.encode()).hexdigest(),
                                       text, tuple(includes), flags,
                                       (int(batch.group(1)), int(batch.group(2))) if batch else None)
    if not scripts:
        raise FileNotFoundError(f"no Lua scripts found in {directory}")
    return scripts


def build_library(scripts: dict[str, LuaScript], directory: Path | None = None,
                  extra: str = "", name_prefix: str = "cashier") -> tuple[str, str, dict[str, str]]:
    """(library source, library name, {operation: function name}).

    The operations run with the call's KEYS and ARGV in two upvalues of the library, set
    by each function's wrapper: the scripts and their includes read KEYS/ARGV exactly as
    they do as plain scripts. Redis runs one function at a time to its end, so the
    upvalues always hold the running call's. `extra` is Lua appended inside the library
    (it sees OPS, the operations by name: the benchmark wraps deduct this way).
    An operation with `--@batch` also gets `<name>_batch` ({"<name>_batch": ...} in the
    names), which takes many items in one call.
    """
    includes_dir = (directory or lua_dir()) / "includes"
    order: list[str] = []
    for script in scripts.values():
        order += [i for i in script.includes if i not in order]
    parts = ["local KEYS, ARGV   -- of the running call (set by the wrapper of every function)",
             *(_include_text(i, includes_dir) for i in order),
             _BATCH_RUNNER, "local OPS = {}"]
    for script in scripts.values():
        parts.append(f"-- {script.name}.lua\nOPS[{script.name!r}] = function()\n"
                     f"{_INCLUDE_RE.sub('', script.source)}\nend")
    code = "\n".join(parts) + "\n" + extra
    tag = hashlib.sha1(code.encode()).hexdigest()[:12]
    names = {n: f"{n}_{tag}" for n in scripts}
    registrations = []
    for n, script in scripts.items():
        flags = "{" + ", ".join(repr(f) for f in script.flags) + "}"
        registrations.append(
            f"redis.register_function{{function_name={names[n]!r}, flags={flags}, "
            f"callback=function(keys, args) KEYS, ARGV = keys, args; return OPS[{n!r}]() end}}")
        if script.batch:
            names[f"{n}_batch"] = f"{n}_batch_{tag}"
            registrations.append(
                f"redis.register_function{{function_name={names[n + '_batch']!r}, flags={flags}, "
                f"callback=function(keys, args) return run_batch(OPS[{n!r}], {script.batch[0]}, "
                f"{script.batch[1]}, keys, args) end}}")
    library_name = f"{name_prefix}_{tag}"
    return f"#!lua name={library_name}\n{code}\n" + "\n".join(registrations) + "\n", library_name, names


def _primaries(client) -> list:
    """The plain client of every primary of a Cluster, or the client itself."""
    if isinstance(client, RedisCluster):
        return [node.redis_connection for node in client.get_primaries()]
    return [client]


def is_function_missing(exc: Exception) -> bool:
    """Redis's answer to FCALL of a function it does not hold (restart, FUNCTION FLUSH)."""
    return isinstance(exc, ResponseError) and "Function not found" in str(exc)


class ScriptRunner:
    """Runs the ledger's scripts on a redis-py client (standalone or cluster)."""

    def __init__(self, scripts: dict[str, LuaScript] | None = None):
        self.scripts = scripts or load_scripts()
        self.library, self.library_name, self.functions = build_library(self.scripts)

    def __getitem__(self, name: str) -> LuaScript:
        """The script of an operation, or of a function key (`deduct_batch`: deduct.lua)."""
        script = self.scripts.get(name)
        return script if script is not None else self.scripts[name.removesuffix("_batch")]

    def function(self, name: str) -> str:
        """The FCALL name of an operation."""
        return self.functions[name]

    def load_all(self, client) -> None:
        """FUNCTION LOAD the library (on a cluster: on every primary). Replicas receive it
        through replication (it is in the RDB and the AOF too), so a promoted replica
        serves terminals at once, even terminals whose user may not load functions."""
        self.load(client)

    def loaded_on(self, client) -> bool:
        """Whether this Redis node (every primary, for a Cluster client) holds the library."""
        return all(node.function_list(library=self.library_name) for node in _primaries(client))

    def call(self, client, name: str, keys: Sequence[str], args: Sequence[Any]):
        function = self.functions[name]
        route = {}
        if keys and isinstance(client, RedisCluster):     # (isinstance: a failing hasattr costs more)
            # redis-py's cluster client finds an FCALL's keys by COMMAND GETKEYS on its default
            # node (a round trip more per call, and every call then needs that node up): route
            # by the first key instead (all keys of a call share its slot). MOVED is still
            # followed; a connection error refreshes the slots for the next attempt.
            route["target_nodes"] = client.get_node_from_key(keys[0])
        try:
            return client.execute_command("FCALL", function, len(keys), *keys, *args, **route)
        except ResponseError as exc:
            if not is_function_missing(exc):
                raise
            self.load(client)
            return client.execute_command("FCALL", function, len(keys), *keys, *args, **route)

    def load(self, client, script: LuaScript | None = None) -> None:
        """Load the library on every primary that lacks it (`script`, the one found missing,
        only names it in the error). A node that has it is left alone: FUNCTION LIST is a
        read, so a Redis at maxmemory (which refuses FUNCTION LOAD) still passes, and a
        daemon's start writes nothing to replicate."""
        try:
            for node in _primaries(client):
                if not self.loaded_on(node):
                    node.function_load(self.library, replace=True)
        except NoPermissionError as exc:
            what = f"the ledger script {script.name!r}" if script else "the ledger's scripts"
            raise LedgerUnavailable(
                f"Redis does not have {what} loaded (function library {self.library_name}; restarted "
                "or flushed?) and this Redis user may not load them. The reconcile service loads "
                "them when it starts; or run `cashierctl scripts load` as the admin user") from exc
