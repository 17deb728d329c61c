"""The limits the Lua scripts check are the ones the Python side checks.

Python refuses a request before it reaches Redis and the scripts check again, so each
limit is written twice: in `core/validation.py` / `core/shifts.py` / `core/members.py`
and as a `local MAX_... = <number>` in `core/lua/`. This test reads the Lua source and
fails when a limit changes on one side only. No Redis needed.
"""
from __future__ import annotations

import re

import pytest

from core import audit, members, sales, shifts
from core import validation as v
from core.resources import lua_dir

_LIMIT_RE = re.compile(r"^local (MAX_[A-Z0-9_]+) = (\d+)\b", re.MULTILINE)


def lua_limits() -> dict[tuple[str, str], int]:
    """{(file relative to core/lua, name): value} of every `local MAX_* = <digits>`."""
    root = lua_dir()
    out = {}
    for path in sorted(root.rglob("*.lua")):
        for name, value in _LIMIT_RE.findall(path.read_text(encoding="utf-8")):
            out[(path.relative_to(root).as_posix(), name)] = int(value)
    return out


def _phone_max_digits() -> int:
    low_high = re.search(r"\{(\d+),(\d+)\}", members._PHONE_RE.pattern)
    return int(low_high.group(2))


# (Lua file, Lua name) -> what the Python side allows
SHARED = {
    ("includes/common.lua", "MAX_AMOUNT_MINOR"): v.MAX_AMOUNT_MINOR,
    ("includes/common.lua", "MAX_BALANCE_MINOR"): v.MAX_BALANCE_MINOR,
    ("includes/common.lua", "MAX_ID_LEN"): v.MAX_ID_LEN,
    ("includes/common.lua", "MAX_TTL_S"): v.MAX_RETENTION_S,
    ("includes/checks.lua", "MAX_HOLDER_BYTES"): 4 * v.MAX_HOLDER_NAME_LEN,   # characters of up to 4 bytes
    ("includes/members.lua", "MAX_PHONE_LEN"): _phone_max_digits(),
    ("shift_close.lua", "MAX_Z_BYTES"): shifts.MAX_TOTALS_BYTES,
    ("includes/tenders.lua", "MAX_TENDERS_LEN"): sales.MAX_TENDERS_LEN,
    ("shift_close.lua", "MAX_SHIFT_NO"): shifts.MAX_SHIFT_NO,
    ("shift_close.lua", "MAX_TOTAL"): shifts.MAX_TOTAL,
    ("audit.lua", "MAX_RECORD_BYTES"): audit.MAX_RECORD_BYTES,
}
# limits only the scripts know (no Python check to agree with)
LUA_ONLY = {
    ("includes/common.lua", "MAX_EXACT_INT"),        # 2^53 - 1: what a double holds exactly
    ("includes/holds.lua", "MAX_ACTIVE_HOLDS"),
    ("includes/members.lua", "MAX_INITIALS_LEN"),
}


@pytest.mark.parametrize("where", sorted(SHARED), ids="{0[0]}:{0[1]}".format)
def test_lua_and_python_limits_are_equal(where):
    limits = lua_limits()
    assert where in limits, f"{where[1]} is no longer in core/lua/{where[0]}"
    assert limits[where] == SHARED[where], f"{where[1]}: Lua {limits[where]}, Python {SHARED[where]}"


def test_every_lua_limit_is_known_here():
    """A new limit in a script must say here what Python checks against it (or that nothing does)."""
    assert set(lua_limits()) == set(SHARED) | set(LUA_ONLY)
    assert lua_limits()[("includes/common.lua", "MAX_EXACT_INT")] == 2 ** 53 - 1


def test_sums_of_limits_stay_exact_in_lua_doubles():
    # a balance plus one more operation (and a bonus as large) is still an exact integer
    assert v.MAX_BALANCE_MINOR + 2 * v.MAX_AMOUNT_MINOR < 2 ** 53
