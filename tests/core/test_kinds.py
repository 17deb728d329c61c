"""core/kinds.py, the one table of operation kinds: its own invariants, and that it says
what the Lua scripts do (every kind a script journals is in the table, every kind in the
table is journaled by a script or is a till-only kind; the fingerprint of a kind that
names an original carries it)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from core import kinds
from core.resources import lua_dir

GROUPS = {"money", "member", "book", "account", "card", "setting", "internal"}
BOOK_SECTIONS = {"", "topup", "spend", "refund", "close", "correction"}
HOLD_RESOLUTION_VALUES = {"", "captured", "voided", "expired"}
ACCOUNT_STATUSES = {"", "active", "frozen", "closed"}


# ---------------------------------------------------------------- the table itself

def test_names_are_unique_and_the_index_has_every_row():
    names = [k.name for k in kinds.TABLE]
    assert len(names) == len(set(names))
    assert list(kinds.KINDS) == names
    assert all(kinds.is_kind(n) for n in names) and not kinds.is_kind("no_such_kind")


def test_columns_hold_known_values():
    for k in kinds.TABLE:
        assert k.group in GROUPS, k
        assert k.book_section in BOOK_SECTIONS, k
        assert k.hold_resolution in HOLD_RESOLUTION_VALUES, k
        assert k.account_status in ACCOUNT_STATUSES, k


def test_letters_are_unique_single_characters():
    letters = list(kinds.TXN_LETTERS.values())
    assert all(len(letter) == 1 and re.fullmatch(r"[a-z]", letter) for letter in letters), letters
    assert len(letters) == len(set(letters)), letters


def test_every_kind_with_a_letter_is_a_till_kind_and_every_till_operation_has_one():
    assert set(kinds.TXN_LETTERS) <= set(kinds.TILL_KINDS)
    # the Z record's txn id is core.shifts' own (terminal + shift + opening time), no letter
    assert set(kinds.TXN_LETTERS) == set(kinds.MONEY_KINDS + kinds.MEMBER_KINDS)
    assert not set(kinds.TXN_LETTERS) & set(kinds.BOOK_ONLY_KINDS)


def test_derived_sets_agree_with_each_other():
    assert set(kinds.RECEIPT_KINDS) <= set(kinds.TILL_MONEY_MOVING_KINDS)      # a slip: money moved
    assert set(kinds.DISPLAY_KINDS) <= set(kinds.RECEIPT_KINDS)
    assert set(kinds.REFUNDABLE_KINDS) <= set(kinds.SPLIT_KINDS)               # a refund gives back the split
    assert set(kinds.TILL_HOLD_RESOLUTIONS) <= set(kinds.ORIGINAL_NAMING_KINDS)  # they name the hold
    assert "refund" in kinds.ORIGINAL_NAMING_KINDS
    assert set(kinds.TILL_HOLD_RESOLUTIONS) == {"capture", "void"}
    assert set(kinds.MEMBER_COUNTED_KINDS) | set(kinds.TILL_MONEY_MOVING_KINDS) >= set(kinds.MEMBER_KINDS)
    assert len(set(kinds.TILL_KINDS)) == len(kinds.TILL_KINDS)
    for name, status in kinds.STATUS_BY_KIND.items():
        assert kinds.KINDS[name].account_status == status


def test_receipt_number_pattern_matches_exactly_the_txn_ids_the_till_finds_by_number():
    """The receipt number is a till-made txn id: every kind that prints a slip (and the
    holds and releases, whose rows the till finds by it) matches; the other till kinds'
    ids (a member opened, a card replaced) do not."""
    engine = pytest.importorskip("desktop.engine")
    pattern = re.compile(kinds.RECEIPT_NUMBER_PATTERN)
    found_by_number = set(kinds.RECEIPT_KINDS) | set(kinds.MONEY_KINDS)
    assert set(kinds.RECEIPT_KINDS) <= set(kinds.TXN_LETTERS)
    for terminal in ("T1", "till-07.front:2", "a-terminal-id-longer-than-twenty"):
        for kind in kinds.TXN_LETTERS:
            txn_id = engine.new_txn_id(terminal, kind)
            assert bool(pattern.fullmatch(txn_id)) == (kind in found_by_number), (kind, txn_id)
    assert not pattern.fullmatch("T1-d-" + "0" * 31)
    assert not pattern.fullmatch("@cmp:" + "0" * 32)


# ---------------------------------------------------------------- what the Lua journals

def _lua_sources() -> dict[str, str]:
    """Every script and include, comments left out (they mention journal() too)."""
    root = lua_dir()
    files = sorted(root.glob("*.lua")) + sorted((root / "includes").glob("*.lua"))
    strip = lambda text: re.sub(r"--[^\n]*", "", re.sub(r"--\[\[.*?\]\]", "", text, flags=re.S))  # noqa: E731
    return {str(p.relative_to(root)): strip(p.read_text(encoding="utf-8")) for p in files}


def _split_args(text: str, start: int) -> list[str]:
    """The arguments of the call whose '(' is at text[start], split at top-level commas."""
    args, depth, quote, current = [], 0, "", ""
    for ch in text[start + 1:]:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            if depth == 0:
                args.append(current.strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += ch
    raise AssertionError("unclosed call")


def _journal_helpers(sources: dict[str, str]) -> dict[str, int]:
    """Lua functions that journal an entry of the kind they are given, with the index of
    their `kind` parameter: those that XADD or encode it, and those that hand their own `kind` to one
    that does (includes/account_status.lua's set_account_status for freeze and unfreeze)."""
    bodies = []
    for text in sources.values():
        for m in re.finditer(r"^local function (\w+)\(([^)]*)\)(.*?)^end", text, re.S | re.M):
            params = [p.strip() for p in m.group(2).split(",")]
            if "kind" in params:
                bodies.append((m.group(1), params.index("kind"), m.group(3)))
    # journal_entry (the encoded entry, issue 30) is what a script's own XADD writes
    helpers = {name: index for name, index, body in bodies if "XADD" in body or name == "journal_entry"}
    grew = True
    while grew:
        grew = False
        for name, index, body in bodies:
            if name not in helpers and any(
                    h in helpers and _split_args(body, c.end() - 1)[helpers[h]] == "kind"
                    for c in re.finditer(r"\b(\w+)\(", body) for h in [c.group(1)]):
                helpers[name] = index
                grew = True
    return helpers


def _kinds_of(arg: str, script: str) -> set[str]:
    """The kind(s) an argument names: a literal, or a variable and the literals the script
    compares it with (credit.lua: kind is 'credit' or 'compensate')."""
    literal = re.fullmatch(r"'(\w+)'", arg)
    if literal:
        return {literal.group(1)}
    assert re.fullmatch(r"\w+", arg), f"cannot read the kind of {arg!r}"
    return set(re.findall(rf"\b{arg}\s*[~=]=\s*'(\w+)'", script))


def lua_journal_kinds() -> dict[str, set[str]]:
    """kind -> the scripts that journal it."""
    sources = _lua_sources()
    helpers = _journal_helpers(sources)
    assert helpers, "no journal helper found in core/lua/includes"
    found: dict[str, set[str]] = {}
    for name, text in sources.items():
        calls = [(m.end() - 1, helpers[m.group(1)]) for m in re.finditer(r"(?<!function )\b(\w+)\(", text)
                 if m.group(1) in helpers]
        for start, index in calls:
            arg = _split_args(text, start)[index]
            if name.startswith("includes/") and arg == "kind":
                continue                   # a helper passing on the kind it was given
            named = _kinds_of(arg, text)
            assert named, f"{name}: journal call with an unreadable kind {arg!r}"
            for kind in named:
                found.setdefault(kind, set()).add(name)
        if name.startswith("includes/"):
            continue                       # the helpers themselves: 'kind', kind
        for m in re.finditer(r"'XADD'", text):
            call = text.rfind("(", 0, m.start())
            args = _split_args(text, call)
            if "'kind'" in args:
                for kind in _kinds_of(args[args.index("'kind'") + 1], text):
                    found.setdefault(kind, set()).add(name)
    return found


def test_the_lua_scan_finds_the_journaling_scripts():
    found = lua_journal_kinds()
    # one of each way a script journals: the helper with a literal kind, a variable kind,
    # the hold expiry's internal id, and a raw XADD
    assert "deduct.lua" in found["deduct"]
    assert found["compensate"] == found["credit"] == {"credit.lua"}
    assert "expire_holds.lua" in found["hold_expire"]
    assert "shift_close.lua" in found["shift_close"]
    assert len(found) >= 15


def test_every_kind_a_lua_script_journals_is_in_the_table():
    unknown = {k: scripts for k, scripts in lua_journal_kinds().items() if k not in kinds.KINDS}
    assert not unknown, f"journaled by Lua but not in core/kinds.py: {unknown}"


def test_every_kind_in_the_table_is_journaled_by_lua_or_is_a_till_only_kind():
    journaled = set(lua_journal_kinds())
    till_only = {k.name for k in kinds.TABLE} - journaled
    assert till_only <= set(kinds.TILL_KINDS), f"in the table, journaled by nobody: {till_only - set(kinds.TILL_KINDS)}"
    # card_replace is the till's row; the ledger journals its card_block and card_issue
    assert "card_replace" in till_only and {"card_block", "card_issue"} <= journaled


def test_kinds_that_name_an_original_carry_it_in_their_fingerprint():
    """History reads the original txn from the 4th field of the record's fingerprint for
    these kinds (`kind|account|amount|original`)."""
    found, sources = lua_journal_kinds(), _lua_sources()
    for kind in kinds.ORIGINAL_NAMING_KINDS:
        for script in found[kind]:
            fingerprints = re.findall(r"\bfp = (.*)", sources[script])
            assert fingerprints, script
            assert all(fp.count("|") >= 3 for fp in fingerprints), (kind, fingerprints)
