"""The header of every Lua script is its contract, checked against its code.

Each `core/lua/*.lua` opens with a header (`core.scripts.parse_header`) listing its KEYS
and ARGV in order and every status it can answer. This test reads the code instead:
the KEYS[i] / ARGV[i] the script reads, itself or through the include functions it
calls (transitively), and the status strings they can answer. The two must agree
exactly, so a header that forgets a status or an argument, or names one the code no
longer has, fails here. No Redis needed.

How the code answers a status: as a string literal in upper case (`decide(..., 'APPLIED',
...)`, `decline(...)`, `return {'CARD_IN_USE', ...}`, `return 'HOLD_EXPIRED', nil` in an
include, `invalid()`'s 'INVALID'). Not a status: a literal compared with == / ~= (a test
of a stored value), an argument of redis.call (a command or option), the field name
that `invalid(field, ...)` takes. Any other upper-case literal must be a known status,
or the test fails (a misspelt status cannot slip through as "unknown").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from core.errors import InvalidRequest, LedgerNotInitialized, TxnConflict
from core.resources import lua_dir
from core.result import Status
from core.scripts import load_scripts, parse_header

STATUSES = {s.value for s in Status}
# replies that are not decisions (`Errors:` in a header), and what a caller makes of them
ERROR_REPLIES = {
    "INVALID": InvalidRequest,            # core/ledger.py _decode: raises InvalidRequest(field, reason)
    "TXN_CONFLICT": TxnConflict,
    "NOT_INITIALIZED": LedgerNotInitialized,
    "STALE": None,                        # member_index: core/members.py reads the name again
}
SCRIPTS = load_scripts()
INCLUDES_DIR = lua_dir() / "includes"

# ------------------------------------------------------------------ a small Lua reader

_TOKEN_RE = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>--\[(?P<ceq>=*)\[.*?\](?P=ceq)\] | --[^\n]*)
  | (?P<long>\[(?P<leq>=*)\[.*?\](?P=leq)\])
  | (?P<string>'(?:\\.|[^'\\\n])*' | "(?:\\.|[^"\\\n])*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>0[xX][0-9a-fA-F]+ | \d+(?:\.\d*)?(?:[eE][+-]?\d+)?)
  | (?P<op>\.\.\.|\.\.|==|~=|<=|>=|[-+*/%^#<>=(){}\[\];:,.])
""", re.VERBOSE | re.DOTALL)

_OPENERS, _CLOSERS = {"function", "if", "do", "repeat"}, {"end", "until"}
_UPPER_RE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{2,}")


@dataclass(frozen=True)
class Tok:
    kind: str      # name, string, number, op
    value: str


def tokens(source: str) -> list[Tok]:
    out, pos = [], 0
    while pos < len(source):
        m = _TOKEN_RE.match(source, pos)
        assert m, f"cannot read Lua at {source[pos:pos + 40]!r}"
        pos = m.end()
        kind = next(k for k in ("space", "comment", "long", "string", "name", "number", "op") if m.group(k))
        if kind in ("space", "comment"):
            continue
        value = m.group(kind)
        if kind == "string":
            value = value[1:-1]
        elif kind == "long":
            kind, value = "string", value
        out.append(Tok(kind, value))
    return out


@dataclass
class Uses:
    """What a piece of code reads and answers."""
    keys: set[int] = field(default_factory=set)
    argv: set[int] = field(default_factory=set)
    dynamic: set[str] = field(default_factory=set)     # 'KEYS' / 'ARGV' indexed by a variable or counted
    statuses: set[str] = field(default_factory=set)    # upper-case literals answered (statuses and errors)
    names: set[str] = field(default_factory=set)       # every name it mentions (to find include calls)

    def add(self, other: "Uses") -> None:
        self.keys |= other.keys
        self.argv |= other.argv
        self.dynamic |= other.dynamic
        self.statuses |= other.statuses


def uses_of(toks: list[Tok]) -> Uses:
    u = Uses()
    redis_call_depth = []     # paren depths at which a redis.call( argument list is open
    depth = 0
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else Tok("op", "")
        nxt = toks[i + 1] if i + 1 < len(toks) else Tok("op", "")
        if t.kind == "op" and t.value == "(":
            depth += 1
            if i >= 3 and toks[i - 1].value in ("call", "pcall") and toks[i - 2].value == "." \
                    and toks[i - 3].value == "redis":
                redis_call_depth.append(depth)
        elif t.kind == "op" and t.value == ")":
            if redis_call_depth and redis_call_depth[-1] == depth:
                redis_call_depth.pop()
            depth -= 1
        elif t.kind == "name" and prev.value not in (".", ":"):
            u.names.add(t.value)
            if t.value in ("KEYS", "ARGV"):
                if prev.value == "#":
                    u.dynamic.add(t.value)
                elif nxt.value == "[":
                    index = toks[i + 2]
                    if index.kind == "number" and toks[i + 3].value == "]":
                        (u.keys if t.value == "KEYS" else u.argv).add(int(index.value))
                    else:
                        u.dynamic.add(t.value)
        elif t.kind == "string" and _UPPER_RE.fullmatch(t.value):
            if redis_call_depth and redis_call_depth[-1] == depth:
                continue                                   # a Redis command or option
            if prev.value in ("==", "~=") or nxt.value in ("==", "~="):
                continue                                   # a comparison, not an answer
            if prev.value == "(" and i >= 2 and toks[i - 2].value == "invalid":
                continue                                   # invalid()'s field name ('KEYS')
            assert t.value in STATUSES or t.value in ERROR_REPLIES, (
                f"{t.value!r} looks like a status but is neither a core.Status nor an error reply")
            u.statuses.add(t.value)
    return u


def definitions(toks: list[Tok]) -> dict[str, list[Tok]]:
    """The top-level `local` statements of an include, by the names each defines."""
    chunks, depth, start = [], 0, 0
    for i, t in enumerate(toks):
        if t.kind == "name" and t.value == "local" and depth == 0 and i > start:
            chunks.append(toks[start:i])
            start = i
        if t.kind == "name":
            depth += (t.value in _OPENERS) - (t.value in _CLOSERS)
    chunks.append(toks[start:])
    defs: dict[str, list[Tok]] = {}
    for chunk in chunks:
        assert chunk[0].value == "local", f"an include's top level holds local definitions only: {chunk[:4]}"
        if chunk[1].value == "function":
            names = [chunk[2].value]
        else:
            names = []
            for t in chunk[1:]:
                if t.kind == "name":
                    names.append(t.value)
                elif t.value != ",":
                    break
        for name in names:
            defs[name] = chunk
    return defs


@dataclass
class Include:
    name: str
    defs: dict[str, Uses]          # top-level name -> what its definition reads and answers
    needs: tuple[str, ...]         # the includes it names


def read_includes() -> dict[str, Include]:
    out = {}
    for path in sorted(INCLUDES_DIR.glob("*.lua")):
        text = path.read_text(encoding="utf-8")
        out[path.stem] = Include(path.stem, {n: uses_of(c) for n, c in definitions(tokens(text)).items()},
                                 tuple(re.findall(r"^--@include (\w+)\s*$", text, re.MULTILINE)))
    return out


INCLUDES = read_includes()
DEFINED_IN = {name: inc.name for inc in INCLUDES.values() for name in inc.defs}


def closure(names: set[str]) -> set[str]:
    """The include-level names `names` use, and the ones those use, transitively."""
    seen, todo = set(), [n for n in names if n in DEFINED_IN]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [n for n in INCLUDES[DEFINED_IN[name]].defs[name].names if n in DEFINED_IN and n not in seen]
    return seen


def code_uses(script_name: str) -> tuple[Uses, set[str]]:
    """What a script reads and answers, with the include functions it calls; and those names."""
    source = SCRIPTS[script_name].source
    own = uses_of(tokens(source))
    total = Uses()
    total.add(own)
    called = closure(own.names)
    for name in called:
        total.add(INCLUDES[DEFINED_IN[name]].defs[name])
    return total, called


# ------------------------------------------------------------------ the checks

def _slots_agree(what: str, slots, used: set[int], dynamic: bool) -> list[str]:
    problems = []
    variadic = slots[-1].index if slots and slots[-1].variadic else None
    explicit = {s.index: s for s in slots if not s.variadic}
    if dynamic != (variadic is not None):
        problems.append(f"{what}: the code {'indexes' if dynamic else 'does not index'} {what} by a variable, "
                        f"the header {'has' if variadic else 'has no'} {what}[n..] line")
    for i in sorted(used):
        if i not in explicit and not (variadic and i >= variadic):
            problems.append(f"{what}[{i}] is read by the code, not in the header")
    for i, slot in explicit.items():
        if slot.unused and i in used:
            problems.append(f"{what}[{i}] is read by the code, the header says unused")
        if not slot.unused and i not in used:
            problems.append(f"{what}[{i}] is in the header, the code never reads it (say 'unused' if it is so)")
    return problems


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_header_keys_and_argv_match_the_code(name):
    header = parse_header(SCRIPTS[name].source, name)
    used, _ = code_uses(name)
    problems = (_slots_agree("KEYS", header.keys, used.keys, "KEYS" in used.dynamic)
                + _slots_agree("ARGV", header.argv, used.argv, "ARGV" in used.dynamic))
    assert not problems, f"{name}.lua: " + "; ".join(problems)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_header_statuses_match_the_code(name):
    header = parse_header(SCRIPTS[name].source, name)
    used, _ = code_uses(name)
    code_statuses = {s for s in used.statuses if s in STATUSES}
    code_errors = used.statuses - code_statuses
    assert set(header.statuses) == code_statuses, (
        f"{name}.lua: Statuses line {sorted(header.statuses)}, the code answers {sorted(code_statuses)}")
    assert set(header.errors) == code_errors, (
        f"{name}.lua: Errors line {sorted(header.errors)}, the code answers {sorted(code_errors)}")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_header_names_known_statuses_only(name):
    header = parse_header(SCRIPTS[name].source, name)
    assert set(header.statuses) <= STATUSES, set(header.statuses) - STATUSES
    assert set(header.errors) <= set(ERROR_REPLIES), set(header.errors) - set(ERROR_REPLIES)


@pytest.mark.parametrize("name", sorted(n for n, s in SCRIPTS.items() if s.batch))
def test_batch_items_are_the_header_keys_and_argv(name):
    """`--@batch <keys> <args>`: each item of `<name>_batch` is one call's KEYS and ARGV."""
    header = parse_header(SCRIPTS[name].source, name)
    assert not any(s.variadic for s in header.keys + header.argv)
    assert SCRIPTS[name].batch == (len(header.keys), len(header.argv))


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_includes_every_helper_it_calls(name):
    """Its standalone body (EVAL, the benchmark) defines every helper it calls, not only
    the library, which holds all includes."""
    _, called = code_uses(name)
    missing = {n: DEFINED_IN[n] for n in called if DEFINED_IN[n] not in SCRIPTS[name].includes}
    assert not missing, f"{name}.lua calls helpers of includes it does not name: {missing}"


@pytest.mark.parametrize("include", sorted(INCLUDES))
def test_an_include_names_the_includes_it_uses(include):
    own = INCLUDES[include]
    reach, todo = set(), list(own.needs)
    while todo:
        dep = todo.pop()
        if dep not in reach:
            reach.add(dep)
            todo += INCLUDES[dep].needs
    for name, uses in own.defs.items():
        foreign = {DEFINED_IN[n] for n in uses.names if n in DEFINED_IN} - reach - {include}
        assert not foreign, f"{include}.lua {name} uses {foreign} without --@include"


def test_no_helper_is_defined_twice_or_left_unused():
    names = [name for inc in INCLUDES.values() for name in inc.defs]
    assert len(names) == len(set(names))
    called = set().union(*(code_uses(n)[1] for n in SCRIPTS))
    assert set(DEFINED_IN) - called == set(), "helpers no script calls (dead code)"


# ------------------------------------------------------------------ the format itself

_GOOD = """--[[
op: what it does.
KEYS[1] account hash
  continued
ARGV[1] txn_id
ARGV[2..] more
Returns {status}
Statuses: APPLIED
Errors: none
]]
return 1
"""


def test_parse_header_reads_the_format():
    h = parse_header(_GOOD, "op")
    assert [(s.index, s.text, s.variadic) for s in h.keys] == [(1, "account hash continued", False)]
    assert [(s.index, s.variadic) for s in h.argv] == [(1, False), (2, True)]
    assert (h.returns, h.statuses, h.errors) == ("{status}", ("APPLIED",), ())


@pytest.mark.parametrize("broken", [
    _GOOD.replace("op: what", "other: what"),                       # not the file's name
    _GOOD.replace("ARGV[1] txn_id", "ARGV[2] txn_id"),              # a gap
    _GOOD.replace("KEYS[1] account hash", "ARGV[9] x\nKEYS[1] account hash"),   # ARGV before KEYS
    _GOOD.replace("Returns {status}\n", ""),                        # no Returns
    _GOOD.replace("Errors: none\n", ""),                            # no Errors
    _GOOD.replace("Statuses: APPLIED", "Statuses: APPLIED, APPLIED"),
    _GOOD.replace("Errors: none\n", "Errors: none\nmore prose\n"),  # prose after the contract
    _GOOD.replace("ARGV[2..] more", "ARGV[2..] more\nARGV[3] after"),
    _GOOD.replace("Statuses: APPLIED", "Statuses: applied"),
])
def test_parse_header_refuses_what_is_not_the_format(broken):
    with pytest.raises(ValueError):
        parse_header(broken, "op")
