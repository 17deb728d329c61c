"""Moving a shop in (issue 29 item 6): members with their cards, phones, names and
principal / bonus balances, imported from another system's export, and (item 7) the
members and balances exported for the accountant.

Pure functions, no printing, so the CLI (`cashierctl member import|export`) and a web
page call the same code; long steps take a `progress(done, total, phase)` callback.

    table = read_table("members.csv")                   # CSV (UTF-8, UTF-8 with BOM, GBK) or .xlsx
    mapping = resolve_mapping(table.headers, "card=会员卡号,principal=余额")   # or auto-detected
    plan = plan_import(table, mapping, ledger)          # dry run: nothing is written
    outcome = apply_import(plan, ledger, progress=cb)   # opens each member once (idempotent)
    write_report(report_path_for("members.csv"), plan, outcome)   # the reconciliation sheet

Each row becomes one account: its id is the row's reference (`ref`, the old system's
member number) when that is a valid id, else its card number. It is opened by
`open_account` with the principal, the bonus (`bonus_minor`) and the original reference
(`import_ref`, journaled as the opening entry's field `imp`) under the txn id
`imp:<account id>` (`import_txn_id`), then its card is issued under `impc:<account id>`.
Both ids are derived from the row, so a re-run (or a run after a crash part way) replays
what was done (`replayed`) and does the rest: no member is opened twice. Client ids may
not contain `@` (the ledger's own namespace), so these are ordinary client ids.

Amounts are yuan with at most two decimals, parsed from the text into fen (never a
float); a number cell of a spreadsheet is read back as the shortest text of its value.
Rows are refused with their line number, the field and the reason: invalid values,
duplicates within the file (a card, phone or reference on an earlier line) and against
the ledger (a card, phone or account id another member holds already).

The export (`export_members`, `write_export`) lists every account of Redis with its
cards and their states, name, phone, principal, bonus and status; the same rows from the
database of record are `reconcile_service.reports.members_export.members_from_book`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Iterable, Sequence

from . import validation as v
from .errors import InvalidRequest, TxnConflict
from .members import check_phone
from .money import format_minor, parse_minor

FIELDS = ("ref", "card", "name", "phone", "principal", "bonus")
# the template's headers (and what auto-detection knows best)
TEMPLATE_HEADERS = {"ref": "会员编号", "card": "会员卡号", "name": "姓名", "phone": "手机号",
                    "principal": "余额", "bonus": "赠送余额"}
# common headers of Chinese and English exports, per field (compared after normalising)
HEADER_ALIASES: dict[str, tuple[str, ...]] = {
    "ref": ("会员编号", "会员号", "编号", "会员id", "会员ID", "ref", "reference", "member id", "member_id",
            "member no", "memberno", "id"),
    "card": ("会员卡号", "卡号", "会员卡", "卡号码", "card", "card no", "card_no", "cardno", "card number"),
    "name": ("姓名", "会员姓名", "名字", "客户姓名", "会员名称", "name", "holder", "holder name", "holder_name",
             "member name"),
    "phone": ("手机号", "手机", "手机号码", "电话", "联系电话", "电话号码", "phone", "mobile", "tel", "telephone"),
    "principal": ("余额", "本金", "本金余额", "卡内余额", "储值余额", "充值余额", "账户余额", "principal", "balance",
                  "principal balance"),
    "bonus": ("赠送余额", "赠送金额", "赠金", "赠送", "赠送金", "bonus", "bonus balance", "gift balance"),
}
IMPORT_TXN_PREFIX = "imp:"          # the open of an imported member
CARD_TXN_PREFIX = "impc:"           # the card issue of an imported member
APPLY_CHUNK = 500                   # members per pipelined round trip (single-partition fast path)
MAX_FILE_ROWS = 1_000_000

Progress = Callable[[int, int, str], None]


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().replace("_", " ").split())


_ALIAS_INDEX = {_norm(alias): name for name, aliases in HEADER_ALIASES.items() for alias in aliases}


# ---------------------------------------------------------------- reading files

@dataclass(frozen=True)
class Table:
    """A file's header and data rows: (line number in the file, cells as text)."""
    headers: tuple[str, ...]
    rows: tuple[tuple[int, tuple[str, ...]], ...]
    source: str = ""
    encoding: str = ""          # utf-8, utf-8-sig, gb18030 (GBK) or xlsx


def decode_csv_bytes(data: bytes) -> tuple[str, str]:
    """(text, encoding): UTF-8 with a BOM, UTF-8, else GBK (read as GB18030, its superset)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8"), "utf-8-sig"
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError as exc:
        raise InvalidRequest("file", f"neither UTF-8 nor GBK text (byte {exc.start})") from None


HEADER_SEARCH_ROWS = 10     # a title row or two above the header (会员列表, the export's date) is skipped


def _table(records: list[tuple[int, tuple[str, ...]]], source: str, encoding: str) -> Table:
    """The header is the first of the first non-empty rows with at least two known
    headers (a title above it is skipped), else the first non-empty row."""
    if not records:
        raise InvalidRequest("file", "empty: no header row")
    at = 0
    for i, (_, cells) in enumerate(records[:HEADER_SEARCH_ROWS]):
        if sum(_norm(c) in _ALIAS_INDEX for c in cells) >= 2:
            at = i
            break
    headers = tuple(c.strip() for c in records[at][1])
    rows = records[at + 1:]
    if len(rows) > MAX_FILE_ROWS:
        raise InvalidRequest("file", f"more than {MAX_FILE_ROWS} rows")
    return Table(headers, tuple(rows), source, encoding)


def read_csv_bytes(data: bytes, source: str = "") -> Table:
    text, encoding = decode_csv_bytes(data)
    head = "\n".join(text.split("\n", HEADER_SEARCH_ROWS)[:HEADER_SEARCH_ROWS])
    delimiter = max(",;\t", key=head.count)      # the separator of the first lines (ties: the comma)
    reader = csv.reader(io.StringIO(text, newline=""), csv.excel, delimiter=delimiter)
    records = []
    line = 1
    try:
        for record in reader:
            start, line = line, reader.line_num + 1
            if any(c.strip() for c in record):   # blank lines: nothing to import
                records.append((start, tuple(record)))
                if len(records) > MAX_FILE_ROWS + HEADER_SEARCH_ROWS:
                    raise InvalidRequest("file", f"more than {MAX_FILE_ROWS} rows")
    except csv.Error as exc:
        raise InvalidRequest("file", f"line {line}: not CSV ({exc})") from None
    return _table(records, source, encoding)


def _cell_text(value) -> str:
    """A spreadsheet cell as text: numbers by their shortest exact text (12.5 -> '12.5',
    13800138000.0 -> '13800138000'), never through arithmetic on floats."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    return str(value)


def read_xlsx(path: str) -> Table:
    try:
        import openpyxl
    except ImportError:                 # pragma: no cover - a dependency
        raise InvalidRequest("file", "reading .xlsx needs openpyxl (pip install openpyxl)") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:            # a broken or non-xlsx file: the user's mistake
        raise InvalidRequest("file", f"{os.path.basename(path)} is not a readable .xlsx ({type(exc).__name__})") \
            from None
    try:
        sheet = book.worksheets[0]
        records = []
        for number, record in enumerate(sheet.iter_rows(values_only=True), start=1):
            cells = tuple(_cell_text(c) for c in record)
            if any(c.strip() for c in cells):
                records.append((number, cells))
                if len(records) > MAX_FILE_ROWS + HEADER_SEARCH_ROWS:
                    raise InvalidRequest("file", f"more than {MAX_FILE_ROWS} rows")
    finally:
        book.close()
    return _table(records, path, "xlsx")


def read_table(path: str) -> Table:
    """Read a CSV (UTF-8, UTF-8 with BOM, GBK; comma, semicolon or tab) or .xlsx file (its
    first sheet). Line numbers are the file's own (the header is line 1 unless a title
    row or two stand above it)."""
    if not os.path.isfile(path):
        raise InvalidRequest("file", f"{path}: no such file")
    if path.lower().endswith((".xlsx", ".xlsm")):
        return read_xlsx(path)
    if path.lower().endswith(".xls"):
        raise InvalidRequest("file", "old .xls files are not read: save it as .xlsx or CSV")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InvalidRequest("file", f"{path}: {exc.strerror}") from None
    return read_csv_bytes(data, path)


# ---------------------------------------------------------------- the column mapping

def parse_mapping(text: str) -> dict[str, str]:
    """'card=会员卡号,phone=手机号' (or one 'field=header' per line: a mapping file) ->
    {field: header}."""
    out: dict[str, str] = {}
    for part in re.split(r"[,\n]", text):
        part = part.strip().lstrip("\ufeff")
        if not part or part.startswith("#"):
            continue
        name, sep, header = part.partition("=")
        name = name.strip().lower()
        if not sep or not header.strip():
            raise InvalidRequest("map", f"{part!r}: write field=header, e.g. card=会员卡号")
        if name not in FIELDS:
            raise InvalidRequest("map", f"unknown field {name!r}: one of {', '.join(FIELDS)}")
        out[name] = header.strip()
    return out


def load_mapping(spec: str | None) -> dict[str, str]:
    """--map: 'field=header,...', or the path of a file of such lines."""
    if not spec:
        return {}
    if os.path.isfile(spec):
        with open(spec, "rb") as fh:
            text, _ = decode_csv_bytes(fh.read())
        return parse_mapping(text)
    return parse_mapping(spec)


def resolve_mapping(headers: Sequence[str], given: dict[str, str] | str | None = None) -> dict[str, int]:
    """{field: column index}: the given mapping, the other fields detected from common
    Chinese and English headers. Needs `principal` and one of `card` / `ref`."""
    if isinstance(given, str) or given is None:
        given = parse_mapping(given or "")
    index = {h: i for i, h in reversed(list(enumerate(headers)))}
    normed = {_norm(h): i for i, h in reversed(list(enumerate(headers)))}
    out: dict[str, int] = {}
    for name, header in given.items():
        i = index.get(header, normed.get(_norm(header)))
        if i is None:
            raise InvalidRequest(f"map.{name}", f"no column {header!r} in the file (its columns: "
                                 f"{', '.join(headers)})")
        out[name] = i
    taken = set(out.values())
    for i, h in enumerate(headers):
        name = _ALIAS_INDEX.get(_norm(h))
        if name and name not in out and i not in taken:
            out[name] = i
            taken.add(i)
    if "principal" not in out:
        raise InvalidRequest("map.principal", "which column is the balance? e.g. --map principal=余额")
    if "card" not in out and "ref" not in out:
        raise InvalidRequest("map.card", "a member needs a card number or a reference column, "
                             "e.g. --map card=会员卡号")
    return out


# ---------------------------------------------------------------- the plan (dry run)

@dataclass(frozen=True)
class ImportMember:
    line: int
    ref: str                    # the old system's reference (its member number, else the card)
    account_id: str
    card: str
    name: str
    phone: str
    principal_minor: int
    bonus_minor: int

    @property
    def txn_id(self) -> str:
        return import_txn_id(self.account_id)

    @property
    def card_txn_id(self) -> str:
        return import_txn_id(self.account_id, CARD_TXN_PREFIX)


@dataclass(frozen=True)
class Problem:
    line: int
    field: str
    value: str
    reason: str
    kind: str = "invalid"       # invalid | duplicate (in the file) | taken (in the ledger)


@dataclass
class ImportPlan:
    source: str
    encoding: str
    mapping: dict[str, str]                       # field -> header used
    rows: int                                     # data rows of the file
    members: list[ImportMember]                   # to open (or already opened by an earlier run)
    problems: list[Problem]                       # one per refused row
    already: set[str] = field(default_factory=set)   # account ids this import opened before
    file_principal_minor: int = 0                 # sums of every row's amounts that parse
    file_bonus_minor: int = 0

    @property
    def refused_principal_minor(self) -> int:
        return self.file_principal_minor - sum(m.principal_minor for m in self.members)

    @property
    def refused_bonus_minor(self) -> int:
        return self.file_bonus_minor - sum(m.bonus_minor for m in self.members)

    @property
    def refused_lines(self) -> list[int]:
        return sorted({p.line for p in self.problems})

    def totals(self, members: Iterable[ImportMember] | None = None) -> tuple[int, int, int]:
        ms = list(self.members if members is None else members)
        return len(ms), sum(m.principal_minor for m in ms), sum(m.bonus_minor for m in ms)


def import_txn_id(account_id: str, prefix: str = IMPORT_TXN_PREFIX) -> str:
    """'imp:<account id>' (the card's: 'impc:<account id>'); a 40-hex digest of the id
    when that would pass 64 characters. Ids never contain '@' (the ledger's own)."""
    txn = prefix + account_id
    if len(txn) <= v.MAX_ID_LEN:
        return txn
    return prefix + "h" + hashlib.sha1(account_id.encode()).hexdigest()


def _amount(cell: str, name: str) -> int:
    text = unicodedata.normalize("NFKC", cell).strip().removeprefix("¥").removesuffix("元").strip()
    if not text:
        return 0
    if re.fullmatch(r"-?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?", text):
        text = text.replace(",", "")          # 1,234.50: thousands separators of an export
    return parse_minor(text, name, allow_zero=True)


def _parse_row(line: int, cells: Sequence[str], cols: dict[str, int]) -> ImportMember | Problem:
    def cell(name: str) -> str:
        i = cols.get(name)
        return cells[i].strip() if i is not None and i < len(cells) else ""

    raw = {name: cell(name) for name in FIELDS}
    amounts = {}
    for name in ("principal", "bonus"):
        try:
            amounts[name] = _amount(raw[name], name)
        except InvalidRequest as exc:
            return Problem(line, name, raw[name], exc.reason)
    card = unicodedata.normalize("NFKC", raw["card"])
    if card:
        try:
            v.check_id(card, "card")
        except InvalidRequest as exc:
            return Problem(line, "card", raw["card"], exc.reason + " (1-64 of A-Z a-z 0-9 . _ : -)")
    ref = unicodedata.normalize("NFKC", raw["ref"])
    if not ref and not card:
        return Problem(line, "card", "", "empty: a member needs a card number or a reference")
    if any(unicodedata.category(c) == "Cc" for c in ref) or len(ref) > v.MAX_ID_LEN:
        return Problem(line, "ref", raw["ref"], f"at most {v.MAX_ID_LEN} characters, no control characters")
    account_id = ref if ref and _is_id(ref) else card
    if not account_id:
        return Problem(line, "ref", raw["ref"], "not usable as an account id (1-64 of A-Z a-z 0-9 . _ : -) "
                       "and no card number to use instead")
    try:
        phone = check_phone(raw["phone"], "phone")
    except InvalidRequest as exc:
        return Problem(line, "phone", raw["phone"], exc.reason)
    try:
        name = v.check_holder_name(raw["name"], "name")
    except InvalidRequest as exc:
        return Problem(line, "name", raw["name"], exc.reason)
    return ImportMember(line, ref or card, account_id, card, name, phone, amounts["principal"], amounts["bonus"])


def _is_id(text: str) -> bool:
    try:
        v.check_id(text, "ref")
        return True
    except InvalidRequest:
        return False


def plan_import(table: Table, mapping: dict[str, str] | str | None, ledger=None, *,
                progress: Progress | None = None) -> ImportPlan:
    """The dry run: every row parsed and checked (values, duplicates within the file and,
    with a `ledger`, against it). Writes nothing."""
    cols = resolve_mapping(table.headers, mapping)
    plan = ImportPlan(table.source, table.encoding, {k: table.headers[i] for k, i in cols.items()},
                      len(table.rows), [], [])
    owners: dict[str, tuple[str, int, str]] = {}      # identity -> (account id, line, field)
    total = len(table.rows)
    for n, (line, cells) in enumerate(table.rows, start=1):
        extra = [c for c in cells[len(table.headers):] if c.strip()]
        found = Problem(line, "row", ",".join(cells), f"{len(cells)} cells, the header has {len(table.headers)} "
                        "(an amount with an unquoted comma?)") if extra else _parse_row(line, cells, cols)
        if isinstance(found, Problem):
            plan.problems.append(found)
            for name in ("principal", "bonus"):       # what it holds still counts in the file's totals
                try:
                    minor = _amount(cells[cols[name]] if name in cols and cols[name] < len(cells) else "", name)
                except InvalidRequest:
                    continue
                if name == "principal":
                    plan.file_principal_minor += minor
                else:
                    plan.file_bonus_minor += minor
        else:
            plan.file_principal_minor += found.principal_minor
            plan.file_bonus_minor += found.bonus_minor
            clash = _file_clash(found, owners)
            if clash:
                plan.problems.append(clash)
            else:
                for ident, fld in _identities(found):
                    owners[ident] = (found.account_id, line, fld)
                plan.members.append(found)
        if progress and (n % 1000 == 0 or n == total):
            progress(n, total, "check")
    if ledger is not None:
        _check_ledger(plan, ledger, progress)
    return plan


def _identities(m: ImportMember) -> list[tuple[str, str]]:
    """(key, field) of the strings that must be this member's alone in the file: the
    account id, card and phone (the till's one look-up namespace) and the reference."""
    out = [(m.account_id, "card" if m.account_id == m.card else "ref"), ("\0ref:" + m.ref, "ref")]
    if m.card and m.card != m.account_id:
        out.append((m.card, "card"))
    if m.phone and m.phone not in (m.account_id, m.card):
        out.append((m.phone, "phone"))
    return out


_WHAT = {"ref": "reference", "card": "card number", "phone": "phone"}


def _file_clash(m: ImportMember, owners: dict) -> Problem | None:
    """A duplicate of an earlier row: any of this member's identities already taken."""
    for key, fld in _identities(m):
        owner = owners.get(key)
        if owner is not None:
            value = key.removeprefix("\0ref:")
            return Problem(m.line, fld, value, f"duplicate {_WHAT[fld]}: line {owner[1]} has it as its "
                           f"{_WHAT[owner[2]]}", "duplicate")
    return None


def _check_ledger(plan: ImportPlan, ledger, progress: Progress | None) -> None:
    """Against the ledger: an account id, card or phone another member holds refuses the
    row; an account this import opened before (its open txn record holds this same
    request) is 'already' (a re-run opens nothing again). Per chunk and partition three
    reads (account set, card map, phone index), then the txn records of the accounts
    that exist."""
    schema = ledger.schema
    runner = ledger.runner
    client = runner.client
    keep: list[ImportMember] = []
    total = len(plan.members)
    for start in range(0, total, APPLY_CHUNK):
        chunk = plan.members[start:start + APPLY_CHUNK]
        idents = sorted({s for m in chunk for s in (m.account_id, m.card, m.phone) if s})
        by_part: dict = {}
        for s_ in idents:
            by_part.setdefault(schema.partition_of(s_), []).append(s_)

        def read(by_part=by_part):
            pipe = client.pipeline(transaction=False)
            for part, names in by_part.items():
                pipe.smismember(part.accounts, names)
                pipe.hmget(part.cards, names)
                pipe.hmget(part.phones, names)
            return pipe.execute()
        replies = runner.with_retry(read, txn_id=None)
        is_account, card_of, phone_of = {}, {}, {}
        for n, names in enumerate(by_part.values()):
            accts, cards, phones = replies[3 * n:3 * n + 3]
            for name, a, c, p in zip(names, accts, cards, phones):
                is_account[name], card_of[name], phone_of[name] = bool(a), c, p
        existing = [m for m in chunk if is_account[m.account_id]]

        def read_fps(existing=existing):
            pipe = client.pipeline(transaction=False)
            for m in existing:
                pipe.hget(schema.partition_of(m.account_id).txn(m.txn_id), "f")
            return pipe.execute()
        fps = dict(zip((m.account_id for m in existing), runner.with_retry(read_fps, txn_id=None))) \
            if existing else {}
        for m in chunk:
            problem = _ledger_clash(m, fps.get(m.account_id), is_account, card_of, phone_of)
            if problem is None:
                keep.append(m)
            elif problem == "already":
                plan.already.add(m.account_id)
                keep.append(m)
            else:
                plan.problems.append(problem)
        if progress:
            progress(min(start + APPLY_CHUNK, total), total, "ledger")
    plan.members = keep
    plan.problems.sort(key=lambda p: p.line)


def _ledger_clash(m: ImportMember, fp, is_account, card_of, phone_of):
    """None (new), 'already' (opened by this import before) or the Problem."""
    a = m.account_id
    if is_account[a]:
        if fp == open_fingerprint(m):
            return "already"
        if fp is not None:
            return Problem(m.line, "ref", m.ref, f"txn {m.txn_id} was used before for other figures "
                           "(imported earlier from another file?)", "taken")
        return Problem(m.line, "card" if a == m.card else "ref", a, "an account with this id exists in the ledger",
                       "taken")
    if (card_of[a] and card_of[a] != a) or (phone_of[a] and phone_of[a] != a):
        return Problem(m.line, "card" if a == m.card else "ref", a, "is another member's card or phone in the ledger",
                       "taken")
    if m.card and m.card != a:
        if card_of[m.card] or is_account[m.card]:
            return Problem(m.line, "card", m.card, "card number already in use in the ledger", "taken")
        if phone_of[m.card]:
            return Problem(m.line, "card", m.card, "is another member's phone in the ledger", "taken")
    if m.phone and m.phone not in (a, m.card):
        if phone_of[m.phone] or is_account[m.phone] or card_of[m.phone]:
            return Problem(m.line, "phone", m.phone, "already another member's phone, card number or account id "
                           "in the ledger", "taken")
    return None


def open_fingerprint(m: ImportMember) -> str:
    """The open's request fingerprint as open_account.lua stores it."""
    return f"open|{m.account_id}|{m.principal_minor}|{m.bonus_minor}|imp:{m.ref}"


# ---------------------------------------------------------------- applying

@dataclass
class ImportOutcome:
    created: list[ImportMember] = field(default_factory=list)     # opened by this run
    replayed: list[ImportMember] = field(default_factory=list)    # opened by an earlier run
    declined: list[tuple[ImportMember, str]] = field(default_factory=list)   # (member, status / error)
    cards_issued: int = 0
    cards_replayed: int = 0

    @property
    def imported(self) -> list[ImportMember]:
        return self.created + self.replayed


def _open_call(ledger, m: ImportMember, initials: str | None = None):
    """(keys, args) of open_account.lua for a member of a single-partition ledger (the
    phone in the account's partition, so the script checks it itself). `initials`: the
    name's pinyin initials when computed already (`pinyin_initials`)."""
    from .members import member_index_key, name_key, pinyin_initials
    part = ledger.schema.partition_of(m.account_id)
    if initials is None:
        initials = pinyin_initials(m.name) if m.name else ""
    keys = [part.account(m.account_id), part.txn(m.txn_id), part.journal, part.accounts, member_index_key(part),
            part.card(m.account_id), part.phones]
    if m.phone:
        keys += [part.account(m.phone), part.card(m.phone)]
    args = [m.txn_id, m.account_id, m.principal_minor, ledger.retention_s, "", "", m.name, m.phone,
            name_key(m.name) if m.name else "", initials, "", m.bonus_minor, m.ref]
    return keys, args


def _card_call(ledger, m: ImportMember):
    part = ledger.schema.partition_of(m.card)
    keys = [part.card(m.card), part.txn(m.card_txn_id), part.journal, part.account(m.card), part.cards,
            part.phones, part.account(m.account_id)]
    args = [m.card_txn_id, m.account_id, 0, ledger.retention_s, "", "", m.card, ""]
    return keys, args


def _initials_of(names: list[str]) -> list[str]:
    from .members import pinyin_initials
    return [pinyin_initials(n) if n else "" for n in names]


def apply_import(plan: ImportPlan, ledger, *, progress: Progress | None = None,
                 operator: str | None = None, helper_process: bool = True) -> ImportOutcome:
    """Open every member of the plan (and issue its card), idempotently: a member an
    earlier run opened answers `replayed` and nothing changes.

    On one partition (a standalone or Sentinel Redis) members go in pipelines of
    APPLY_CHUNK: the pinyin initials of the names are computed in a helper process and
    each chunk is sent by a helper thread while the next one is prepared (a chunk's
    opens, then its cards, then the cards' entries in the account's card list).
    Otherwise (a Cluster, several partitions, an operator to record) one `open_account`
    and `issue_card` each. Killed part way, a re-run finishes the rest. `helper_process`:
    False keeps everything in this process (a caller that must not fork, e.g. a web
    server's worker thread)."""
    from .connection import is_cluster
    v.check_id(operator, "operator", optional=True)
    out = ImportOutcome()
    total = len(plan.members)
    chunks = [plan.members[i:i + APPLY_CHUNK] for i in range(0, total, APPLY_CHUNK)]
    fast = len(ledger.partitions) == 1 and not is_cluster(ledger.client) and not operator
    if not fast:
        for n, chunk in enumerate(chunks):
            for m in chunk:
                _apply_one(ledger, m, out, operator)
            if progress:
                progress(min((n + 1) * APPLY_CHUNK, total), total, "apply")
        return out
    ledger.runner.check_policy(txn_id=None)
    from concurrent.futures import ThreadPoolExecutor
    names = [[m.name for m in chunk] for chunk in chunks]
    with (_initials_pool(total) if helper_process else _NoPool()) as pool, ThreadPoolExecutor(1) as sender:
        initials = pool.map(_initials_of, names) if pool else map(_initials_of, names)
        pending = None
        for n, (chunk, ini) in enumerate(zip(chunks, initials)):
            opens = [_open_call(ledger, m, i) for m, i in zip(chunk, ini)]
            cards = {m.account_id: _card_call(ledger, m) for m in chunk if m.card}
            packed = (_pack(ledger, "open_account", opens), {a: _pack(ledger, "card_issue", [c])[0]
                                                             for a, c in cards.items()})
            if pending is not None:
                pending.result()
                if progress:
                    progress(min(n * APPLY_CHUNK, total), total, "apply")
            pending = sender.submit(_apply_chunk_fast, ledger, chunk, opens, cards, packed, out)
        if pending is not None:
            pending.result()
            if progress:
                progress(total, total, "apply")
    return out


class _NoPool:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _initials_pool(total: int):
    """A helper process (forked) for the names' pinyin initials (the costliest part of
    preparing an open: ~150 us a name), for big imports on a machine with more than one
    CPU where fork exists."""
    if total < 5 * APPLY_CHUNK or (os.cpu_count() or 1) < 2:
        return _NoPool()
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:      # no fork (Windows): no helper (a spawned one would re-run a frozen cashierctl)
        return _NoPool()
    return ProcessPoolExecutor(1, mp_context=ctx)


def _pack(ledger, name: str, calls) -> list[bytes]:
    """FCALL commands packed by hiredis (redis-py's own packing costs ~40 us a call)."""
    try:
        import hiredis
    except ImportError:                     # pragma: no cover - redis[hiredis] is a dependency
        return []
    fn = ledger.scripts.function(name)
    return [hiredis.pack_command(("FCALL", fn, len(k), *k, *a)) for k, a in calls]


def _send(ledger, name: str, calls, packed: list[bytes]) -> list:
    """Replies of `name` for each call, in one round trip: the packed commands on one
    connection; anything unusual (replicas to wait for, a function to reload, an error
    worth a retry) goes through the runner's own pipeline, whose replays answer what ran."""
    runner = ledger.runner
    if not calls:
        return []
    if runner.wait_replicas or len(packed) != len(calls):
        return runner.with_retry(runner.pipeline, runner.client, calls, name, txn_id=None)
    from redis.exceptions import ResponseError

    from .runner import RETRYABLE, is_retryable_response
    from .scripts import is_function_missing
    pool = runner.client.connection_pool

    def once():
        conn = pool.get_connection()
        try:
            conn.send_packed_command([b"".join(packed)])
            replies = []
            for _ in packed:
                try:
                    replies.append(conn.read_response())
                except ResponseError as exc:
                    replies.append(exc)
            return replies
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)
    replies = runner.with_retry(once, txn_id=None)
    if any(isinstance(r, Exception) and (is_function_missing(r) or isinstance(r, RETRYABLE)
                                         or (isinstance(r, ResponseError) and is_retryable_response(r)))
           for r in replies):
        return runner.with_retry(runner.pipeline, runner.client, calls, name, txn_id=None)
    return replies


def _record(out: ImportOutcome, m: ImportMember, result) -> bool:
    """Count an open's answer; True when the member is (now or before) opened."""
    if isinstance(result, Exception):
        out.declined.append((m, f"{type(result).__name__}: {result}"))
        return False
    if result.applied:
        (out.replayed if result.replayed else out.created).append(m)
        return True
    why = result.status.value
    if result.replayed:     # the first answer is kept under the txn id until the retention ends
        why += f" (declined by an earlier run; txn {result.txn_id} answers so until the retention ends)"
    out.declined.append((m, why))
    return False


def _apply_chunk_fast(ledger, chunk, opens, cards, packed, out: ImportOutcome) -> None:
    from .runner import decode
    runner = ledger.runner
    replies = _send(ledger, "open_account", opens, packed[0])
    opened = []
    for m, reply in zip(chunk, replies):
        if isinstance(reply, Exception):       # this item refused (out of memory): stop, a re-run resumes
            raise runner.as_ledger_error(reply, m.txn_id)
        try:
            result = decode(reply, "open", m.account_id, m.principal_minor, m.txn_id)
        except (InvalidRequest, TxnConflict) as exc:
            result = exc
        if _record(out, m, result) and m.card:
            opened.append(m)
    if not opened:
        return
    replies = _send(ledger, "card_issue", [cards[m.account_id] for m in opened],
                    [packed[1][m.account_id] for m in opened if m.account_id in packed[1]])
    listed = []
    for m, reply in zip(opened, replies):
        if isinstance(reply, Exception):
            raise runner.as_ledger_error(reply, m.card_txn_id)
        try:
            result = decode(reply, "card_issue", m.account_id, 0, m.card_txn_id)
        except (InvalidRequest, TxnConflict) as exc:
            result = exc
        if isinstance(result, Exception) or not result.applied:
            out.declined.append((m, f"card {m.card}: " + (str(result) if isinstance(result, Exception)
                                                          else result.status.value)))
            continue
        if result.replayed:
            out.cards_replayed += 1
        else:
            out.cards_issued += 1
        listed.append(m)
    if listed:      # the account's own card list (what a charge by card is checked against)
        calls = [([ledger.schema.partition_of(m.account_id).account_cards(m.account_id)],
                  ["card", m.card, m.account_id, "active"]) for m in listed]
        for m, reply in zip(listed, _send(ledger, "identity", calls, _pack(ledger, "identity", calls))):
            if isinstance(reply, Exception):
                raise runner.as_ledger_error(reply, m.card_txn_id)


def _apply_one(ledger, m: ImportMember, out: ImportOutcome, operator: str | None) -> None:
    try:
        result = ledger.open_account(m.account_id, txn_id=m.txn_id, initial_minor=m.principal_minor,
                                     bonus_minor=m.bonus_minor, import_ref=m.ref, holder_name=m.name,
                                     phone=m.phone, cashier_id=operator)
    except (InvalidRequest, TxnConflict) as exc:
        result = exc
    if not _record(out, m, result) or not m.card:
        return
    card = ledger.issue_card(m.account_id, m.card, txn_id=m.card_txn_id, cashier_id=operator)
    if not card.applied:
        out.declined.append((m, f"card {m.card}: {card.status.value}"))
    elif card.replayed:
        out.cards_replayed += 1
    else:
        out.cards_issued += 1


# ---------------------------------------------------------------- the reconciliation sheet

def report_path_for(source: str) -> str:
    stem, _ = os.path.splitext(source)
    return stem + ".import-report.csv"


def report_rows(plan: ImportPlan, outcome: ImportOutcome | None) -> list[list[str]]:
    """The reconciliation sheet: counts and totals (yuan) of the file, the refused rows,
    what was (or, in a dry run, would be) imported, then one line per refused row."""
    def line(item, members_or_totals):
        n, p, b = members_or_totals
        return [item, str(n), format_minor(p), format_minor(b)]
    rows = [["mode", "apply" if outcome is not None else "dry-run (nothing written)", "", ""],
            ["file", plan.source, plan.encoding, ""],
            ["item", "members", "principal", "bonus"],
            line("rows in the file", (plan.rows, plan.file_principal_minor, plan.file_bonus_minor))]
    refused = len(plan.refused_lines)
    rows.append(line("refused rows (listed below; amounts that parse)",
                     (refused, plan.refused_principal_minor, plan.refused_bonus_minor)))
    rows.append(line("to import", plan.totals()))
    rows.append(line("already imported by an earlier run", plan.totals(
        m for m in plan.members if m.account_id in plan.already)))
    if outcome is not None:
        rows.append(line("opened now", plan.totals(outcome.created)))
        rows.append(line("answered replayed (opened earlier)", plan.totals(outcome.replayed)))
        rows.append(line("imported in all", plan.totals(outcome.imported)))
        rows.append(line("declined by the ledger", plan.totals(m for m, _ in outcome.declined)))
        rows.append(["cards issued now / earlier", str(outcome.cards_issued), str(outcome.cards_replayed), ""])
        done = plan.totals(outcome.imported)
    else:
        done = plan.totals()
    accepted_ok = done == plan.totals() and refused + len(plan.members) == plan.rows
    rows.append(["check: imported + refused = rows in the file", "yes" if accepted_ok else "NO", "", ""])
    rows.append([])
    rows.append(["line", "field", "value", "reason"])
    for p in plan.problems:
        rows.append([str(p.line), p.field, p.value, p.reason])
    for m, why in (outcome.declined if outcome else ()):
        rows.append([str(m.line), "ledger", m.account_id, why])
    return rows


def write_report(path: str, plan: ImportPlan, outcome: ImportOutcome | None) -> str:
    """Write the reconciliation sheet as CSV (UTF-8 with a BOM: Excel shows the Chinese)."""
    try:
        with open(path, "w", encoding="utf-8-sig", newline="") as fh:
            csv.writer(fh).writerows(report_rows(plan, outcome))
    except OSError as exc:
        raise InvalidRequest("report", f"{path}: {exc.strerror}") from None
    return path


# ---------------------------------------------------------------- template and export

def write_rows(path: str, headers: Sequence[str], rows: Iterable[Sequence], *, sheet: str = "members") -> None:
    """CSV (UTF-8 with a BOM) or .xlsx (by the name's ending). Decimal cells are numbers
    in a .xlsx (format 0.00) and their digits in a CSV."""
    try:
        _write_rows(path, headers, rows, sheet)
    except OSError as exc:
        raise InvalidRequest("file", f"{path}: {exc.strerror}") from None


def _write_rows(path: str, headers: Sequence[str], rows: Iterable[Sequence], sheet: str) -> None:
    if path.lower().endswith(".xlsx"):
        try:
            import openpyxl
        except ImportError:             # pragma: no cover - a dependency
            raise InvalidRequest("file", "writing .xlsx needs openpyxl (pip install openpyxl)") from None
        book = openpyxl.Workbook(write_only=True)
        ws = book.create_sheet(sheet)
        ws.append(list(headers))
        from openpyxl.cell import WriteOnlyCell
        for row in rows:
            cells = []
            for value in row:
                if isinstance(value, Decimal):
                    c = WriteOnlyCell(ws, value=value)
                    c.number_format = "0.00"
                    cells.append(c)
                else:
                    cells.append(value)
            ws.append(cells)
        book.save(path)
        return
    if not path.lower().endswith(".csv"):
        raise InvalidRequest("file", f"{path}: name it .csv or .xlsx")
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(headers)
        for row in rows:
            w.writerow([str(c) if c is not None else "" for c in row])


def write_template(path: str) -> str:
    """An empty file with the template's Chinese headers (会员编号, 会员卡号, 姓名, 手机号,
    余额, 赠送余额): detected without a --map."""
    write_rows(path, [TEMPLATE_HEADERS[f] for f in FIELDS], [])
    return path


EXPORT_HEADERS = ("account_id", "cards", "name", "phone", "principal", "bonus", "balance", "status")


@dataclass(frozen=True)
class ExportRow:
    account_id: str
    cards: str                  # 'card:state;card:state'
    name: str
    phone: str
    principal_minor: int
    bonus_minor: int
    status: str


def export_members(ledger, *, progress: Progress | None = None) -> list[ExportRow]:
    """Every account of the ledger (closed ones too), with its cards and their states,
    read from Redis through the key schema in pipelines (a point-in-time read per page,
    not a statement: the book of record is what reports use)."""
    client = ledger.runner.client
    ids: list[str] = []
    for part in ledger.partitions:
        ids += sorted(ledger.runner.with_retry(client.smembers, part.accounts, txn_id=None))
    cards: dict[str, list[str]] = {}
    for c in ledger.cards():
        state = "blocked" if c.status.value == "CARD_BLOCKED" else "active"
        cards.setdefault(c.account_id, []).append(f"{c.card_no}:{state}")
    out = []
    total = len(ids)
    for start in range(0, total, 1000):
        page = ids[start:start + 1000]

        def read(page=page):
            pipe = client.pipeline(transaction=False)
            for a in page:
                pipe.hmget(ledger.schema.partition_of(a).account(a), "bal", "bo", "st", "nm", "ph")
            return pipe.execute()
        for a, (bal, bo, st, nm, ph) in zip(page, ledger.runner.with_retry(read, txn_id=None)):
            if bal is None:
                continue
            bonus = int(bo or 0)
            out.append(ExportRow(a, ";".join(sorted(cards.get(a, []))), nm or "", ph or "", int(bal) - bonus, bonus,
                                 st or "active"))
        if progress:
            progress(min(start + 1000, total), total, "export")
    return out


def write_export(path: str, rows: Sequence[ExportRow]) -> str:
    def yuan(minor: int):
        return Decimal(minor).scaleb(-2) if path.lower().endswith(".xlsx") else format_minor(minor)
    write_rows(path, EXPORT_HEADERS,
               ([r.account_id, r.cards, r.name, r.phone, yuan(r.principal_minor), yuan(r.bonus_minor),
                 yuan(r.principal_minor + r.bonus_minor), r.status] for r in rows))
    return path
