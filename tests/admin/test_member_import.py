"""Moving a shop in (issue 29): `cashierctl member import` / `export` and
`core.member_import` on a real Redis. The same members read from UTF-8, UTF-8 with a BOM,
GBK and .xlsx; duplicates within the file and against the ledger; amounts at the limits,
parsed from text, never floats; a re-run changes nothing and answers replayed; an import
killed part way (a real process, SIGKILL) and re-run opens each member once; a property
test over random files with faults; the export with card states."""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from admin.cashierctl import main as ctl
from core import Ledger
from core import member_import as mi
from core.journal_codec import read_range

ROOT = Path(__file__).resolve().parents[2]
HEAD = ["会员编号", "会员卡号", "姓名", "手机号", "余额", "赠送余额"]


def write_csv(path: Path, rows, encoding="utf-8", header=HEAD) -> Path:
    with open(path, "w", encoding=encoding, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def write_xlsx(path: Path, rows, header=HEAD) -> Path:
    book = openpyxl.Workbook()
    ws = book.active
    ws.append(header)
    for r in rows:
        ws.append(list(r))
    book.save(path)
    return path


def opens_in_journal(ledger: Ledger) -> dict[str, int]:
    """How many open entries each account has in the journal."""
    counts: dict[str, int] = {}
    for part in ledger.partitions:
        for _, f in read_range(ledger.client, part.journal):
            if f.get("kind") == "open":
                counts[f["acct"]] = counts.get(f["acct"], 0) + 1
    return counts


ROWS = [["M001", "8800001", "张三", "13800138000", "100.50", "20"],
        ["M002", "8800002", "李四", "139-0000-0002", "0", "5.5"],
        ["M003", "8800003", "王五", "", "1,234.56", ""],
        ["M004", "", "赵六", "13700000004", "12", "0.01"]]


@pytest.mark.parametrize("kind", ["utf-8", "utf-8-sig", "gbk", "xlsx"])
def test_the_same_members_from_utf8_bom_gbk_and_xlsx(tmp_path, ledger, kind):
    ledger.init()
    path = write_xlsx(tmp_path / "m.xlsx", ROWS) if kind == "xlsx" else write_csv(tmp_path / "m.csv", ROWS, kind)
    table = mi.read_table(str(path))
    assert table.encoding == {"gbk": "gb18030"}.get(kind, kind)
    plan = mi.plan_import(table, None, ledger)
    assert plan.problems == []
    assert [(m.account_id, m.card, m.name, m.phone, m.principal_minor, m.bonus_minor) for m in plan.members] == [
        ("M001", "8800001", "张三", "13800138000", 10050, 2000),
        ("M002", "8800002", "李四", "13900000002", 0, 550),
        ("M003", "8800003", "王五", "", 123456, 0),
        ("M004", "", "赵六", "13700000004", 1200, 1)]
    out = mi.apply_import(plan, ledger)
    assert len(out.created) == 4 and out.cards_issued == 3
    info = ledger.account("M001")
    assert (info.balance_minor, info.bonus_minor, info.holder_name) == (12050, 2000, "张三")
    assert ledger.resolve_card("8800001").account_id == "M001"
    assert ledger.find_members("zs")[0].account_id == "M001"
    entry = [f for _, f in read_range(ledger.client, ledger.partitions[0].journal) if f.get("acct") == "M001"
             and f["kind"] == "open"][0]
    assert (entry["amt"], entry["pd"], entry["bd"], entry["imp"]) == ("12050", "10050", "2000", "M001")


def test_xlsx_number_cells_are_read_as_their_digits_not_floats(tmp_path, ledger):
    ledger.init()
    path = write_xlsx(tmp_path / "n.xlsx", [["N1", 8800100, "甲", 13800138001, 0.1, 1234567.89],
                                            ["N2", 8800101, "乙", None, 19.99, 0.3]])
    plan = mi.plan_import(mi.read_table(str(path)), None, ledger)
    assert [(m.card, m.phone, m.principal_minor, m.bonus_minor) for m in plan.members] == [
        ("8800100", "13800138001", 10, 123456789), ("8800101", "", 1999, 30)]


def test_invalid_rows_are_listed_with_line_field_and_reason(tmp_path, ledger):
    ledger.init()
    rows = [["B1", "C1", "甲", "138", "1", "0"],              # phone too short
            ["B2", "C2", "乙", "", "-5", "0"],                # negative
            ["B3", "C3", "丙", "", "1.234", "0"],             # 3 decimals
            ["B4", "C4", "丁", "", "1000000000.01", "0"],     # above the maximum
            ["B5", "C5", "戊", "", "abc", "0"],               # not an amount
            ["B6", "C 6", "己", "", "1", "0"],                # card with a space
            ["", "", "庚", "", "1", "0"],                     # no identity
            ["B8", "C8", "辛" * 65, "", "1", "0"],            # name too long
            ["B9", "C9", "壬", "", "1", "1e3"],               # bonus not an amount
            ["B10", "C10", "癸", "", "1000000000.00", "1000000000.00"],   # at the limits: fine
            ["B11", "C11", "子", "", "1", "234.56", "0"]]     # 1,234.56 unquoted: one cell too many
    path = write_csv(tmp_path / "bad.csv", rows)
    plan = mi.plan_import(mi.read_table(str(path)), None, ledger)
    got = [(p.line, p.field) for p in plan.problems]
    assert got == [(2, "phone"), (3, "principal"), (4, "principal"), (5, "principal"), (6, "principal"),
                   (7, "card"), (8, "card"), (9, "name"), (10, "bonus"), (12, "row")]
    assert "negative" in plan.problems[1].reason and "two decimals" in plan.problems[2].reason
    assert "maximum" in plan.problems[3].reason
    [m] = plan.members
    assert (m.principal_minor, m.bonus_minor) == (100_000_000_000, 100_000_000_000)
    out = mi.apply_import(plan, ledger)
    assert ledger.account("B10").balance_minor == 200_000_000_000 and ledger.account("B10").bonus_minor == 10 ** 11
    assert len(out.created) == 1


def test_duplicates_within_the_file_and_against_the_ledger(tmp_path, ledger):
    ledger.init()
    ledger.open_account("OLD-1", txn_id="o-1", holder_name="老会员", phone="13500000000")
    ledger.issue_card("OLD-1", "9900001", txn_id="c-1")
    rows = [["D1", "7700001", "甲", "13800000001", "1", "0"],
            ["D2", "7700001", "乙", "13800000002", "1", "0"],   # card of line 2
            ["D3", "7700003", "丙", "13800000001", "1", "0"],   # phone of line 2
            ["D1", "7700004", "丁", "", "1", "0"],              # reference of line 2
            ["D5", "9900001", "戊", "", "1", "0"],              # a card in the ledger
            ["D6", "7700006", "己", "13500000000", "1", "0"],   # a phone in the ledger
            ["OLD-1", "7700007", "庚", "", "1", "0"],           # an account in the ledger
            ["D8", "13800000001", "辛", "", "1", "0"],          # a card that is line 2's phone
            ["D9", "7700009", "壬", "D1", "1", "0"]]            # not a phone (letters)
    plan = mi.plan_import(mi.read_table(str(write_csv(tmp_path / "d.csv", rows))), None, ledger)
    got = {p.line: (p.field, p.kind) for p in plan.problems}
    assert got == {3: ("card", "duplicate"), 4: ("phone", "duplicate"), 5: ("ref", "duplicate"),
                   6: ("card", "taken"), 7: ("phone", "taken"), 8: ("ref", "taken"), 9: ("card", "duplicate"),
                   10: ("phone", "invalid")}
    assert "line 2" in plan.problems[0].reason
    assert [m.account_id for m in plan.members] == ["D1"]


def test_mapping_given_by_argument_or_file_and_errors_name_the_field(tmp_path, ledger, capsys):
    ledger.init()
    url = ledger_url(ledger)
    path = write_csv(tmp_path / "odd.csv", [["x1", "13800000011", "Ann", "5.00", "1.00"]],
                     header=["No", "Mobile Phone", "Customer", "Stored", "Gift"])
    assert ctl(["--redis-url", url, "member", "import", str(path)]) == 2
    assert "map.principal" in capsys.readouterr().err
    mapping = "card=No,phone=Mobile Phone,name=Customer,principal=Stored,bonus=Gift"
    assert ctl(["--redis-url", url, "member", "import", str(path), "--map", mapping]) == 0
    assert "1 members would be imported" in capsys.readouterr().out
    map_file = tmp_path / "map.txt"
    map_file.write_text(mapping.replace(",", "\n"), encoding="utf-8")
    assert ctl(["--redis-url", url, "member", "import", str(path), "--map", str(map_file), "--apply"]) == 0
    assert ledger.account("x1").balance_minor == 600
    assert ctl(["--redis-url", url, "member", "import", str(path), "--map", "cardz=No"]) == 2
    assert "map: unknown field 'cardz'" in capsys.readouterr().err
    assert ctl(["--redis-url", url, "member", "import", str(tmp_path / "none.csv")]) == 2
    assert "file:" in capsys.readouterr().err
    bad = tmp_path / "bad.xlsx"
    bad.write_bytes(b"not a zip")
    assert ctl(["--redis-url", url, "member", "import", str(bad)]) == 2
    assert "not a readable .xlsx" in capsys.readouterr().err


def ledger_url(ledger: Ledger) -> str:
    kw = ledger.client.connection_pool.connection_kwargs
    return f"redis://{kw['host']}:{kw['port']}/{kw.get('db', 0)}"


def test_template_is_detected_without_a_map(tmp_path, ledger, capsys):
    ledger.init()
    url = ledger_url(ledger)
    for name in ("t.csv", "t.xlsx"):
        assert ctl(["--redis-url", url, "member", "import", "--template", str(tmp_path / name)]) == 0
        table = mi.read_table(str(tmp_path / name))
        assert table.headers == tuple(HEAD)
        assert set(mi.resolve_mapping(table.headers)) == set(mi.FIELDS)


def test_dry_run_writes_nothing_apply_then_rerun_changes_nothing(tmp_path, ledger, capsys):
    ledger.init()
    url = ledger_url(ledger)
    path = write_csv(tmp_path / "m.csv", ROWS + [["M005", "8800005", "钱七", "", "x", "0"]], "gbk")
    assert ctl(["--redis-url", url, "member", "import", str(path)]) == 1      # one row refused
    out = capsys.readouterr().out
    assert "line 6: principal 'x'" in out and "4 members would be imported" in out
    assert ledger.client.scard(ledger.partitions[0].accounts) == 0
    journal_before = ledger.client.xlen(ledger.partitions[0].journal)
    report = tmp_path / "m.import-report.csv"
    assert report.exists()
    assert ctl(["--redis-url", url, "member", "import", str(path), "--apply"]) == 1
    assert "opened now 4" in capsys.readouterr().out
    after_first = ledger.client.xlen(ledger.partitions[0].journal)
    assert after_first == journal_before + 4 + 3          # 4 opens, 3 cards
    assert ctl(["--redis-url", url, "--json", "member", "import", str(path), "--apply",
                "--report", str(tmp_path / "again.csv")]) == 1
    import json
    data = json.loads(capsys.readouterr().out)
    assert (data["created"], data["replayed"], data["already_imported"]) == (0, 4, 4)
    assert ledger.client.xlen(ledger.partitions[0].journal) == after_first
    sheet = list(csv.reader(open(tmp_path / "again.csv", encoding="utf-8-sig")))
    by_item = {r[0]: r[1:] for r in sheet if r}
    assert by_item["rows in the file"] == ["5", "1347.06", "25.51"]
    assert by_item["imported in all"] == ["4", "1347.06", "25.51"]
    assert by_item["check: imported + refused = rows in the file"][0] == "yes"
    assert by_item["6"] == ["principal", "x", "'x' is not an amount like 12.50"]


def test_export_csv_and_xlsx_with_card_states(tmp_path, ledger, capsys):
    ledger.init()
    url = ledger_url(ledger)
    mi.apply_import(mi.plan_import(mi.read_table(str(write_csv(tmp_path / "m.csv", ROWS))), None, ledger), ledger)
    ledger.block_card("8800001", txn_id="blk", reason="lost")
    ledger.issue_card("M001", "8800901", txn_id="new-card")
    ledger.deduct("M001", 50, txn_id="spend")
    assert ctl(["--redis-url", url, "member", "export", str(tmp_path / "out.csv")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out.csv", encoding="utf-8-sig")))
    m1 = next(r for r in rows if r["account_id"] == "M001")
    assert m1 == {"account_id": "M001", "cards": "8800001:blocked;8800901:active", "name": "张三",
                  "phone": "13800138000", "principal": "100.00", "bonus": "20.00", "balance": "120.00",
                  "status": "active"}
    assert len(rows) == 4
    assert ctl(["--redis-url", url, "member", "export", str(tmp_path / "out.xlsx")]) == 0
    ws = openpyxl.load_workbook(tmp_path / "out.xlsx").worksheets[0]
    values = list(ws.iter_rows(values_only=True))
    assert values[0] == mi.EXPORT_HEADERS
    # the export reads back as an import file (numbers as yuan, cards by the first)
    assert {r[0] for r in values[1:]} == {"M001", "M002", "M003", "M004"}
    assert ctl(["--redis-url", url, "member", "export", str(tmp_path / "out.txt")]) == 2


def test_import_killed_part_way_and_rerun_opens_each_member_once(tmp_path, ledger):
    """A real `cashierctl member import --apply` killed with SIGKILL while it writes, then
    run again to the end: every member opened exactly once, totals equal the file's."""
    ledger.init()
    n = 6000
    rows = [[f"K{i:05d}", f"66{i:06d}", f"会员{i}", f"137{i:08d}", f"{i}.{i % 100:02d}", f"{i % 50}"]
            for i in range(n)]
    path = write_csv(tmp_path / "k.csv", rows)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "admin.cashierctl", "--redis-url", ledger_url(ledger), "member", "import",
           str(path), "--apply"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while ledger.client.scard(ledger.partitions[0].accounts) < 1000 and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    part_way = ledger.client.scard(ledger.partitions[0].accounts)
    assert 0 < part_way < n, part_way
    assert subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True).returncode == 0
    counts = opens_in_journal(ledger)
    assert len(counts) == n and set(counts.values()) == {1}
    infos = ledger.accounts([r[0] for r in rows])
    assert sum(i.balance_minor - i.bonus_minor for i in infos.values()) == sum(
        int(r[4].replace(".", "")) for r in rows)
    assert sum(i.bonus_minor for i in infos.values()) == sum(int(r[5]) * 100 for r in rows)
    assert len(ledger.cards()) == n


_cell = st.one_of(st.sampled_from(["", "0", "1", "12.5", "99.99", "-1", "1.234", "x", "1000000000.00"]),
                  st.integers(0, 10 ** 6).map(lambda c: f"{c // 100}.{c % 100:02d}"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 60), _cell, _cell),
                     min_size=1, max_size=60),
       cut=st.integers(0, 60), data=st.data())
def test_property_random_files_with_faults_import_each_member_once(tmp_path_factory, ledger, rows, cut, data):
    """Random files (duplicate references, cards and phones, bad amounts), an apply that
    stops after a random number of members (a crash), then full runs: every accepted
    member is opened exactly once, refused + imported rows = the file's rows, and the
    balances add up to the accepted rows' totals."""
    ledger.client.flushdb()
    ledger.init()
    tmp = tmp_path_factory.mktemp("prop")
    body = [[f"R{r}", f"C{c}", "名" if p % 3 else "", f"1390000{p:04d}" if p % 4 else "", a, b]
            for r, c, p, a, b in rows]
    path = write_csv(tmp / "p.csv", body, data.draw(st.sampled_from(["utf-8", "utf-8-sig", "gbk"])))
    table = mi.read_table(str(path))
    plan = mi.plan_import(table, None, ledger)
    assert len(plan.refused_lines) + len(plan.members) == len(body)
    crashed = mi.ImportPlan(plan.source, plan.encoding, plan.mapping, plan.rows, plan.members[:cut], [])
    mi.apply_import(crashed, ledger)
    for _ in range(2):
        again = mi.plan_import(table, None, ledger)
        assert [m.account_id for m in again.members] == [m.account_id for m in plan.members]
        out = mi.apply_import(again, ledger)
        assert out.declined == []
    assert len(out.replayed) == len(plan.members) and out.created == []
    counts = opens_in_journal(ledger)
    assert counts == {m.account_id: 1 for m in plan.members}
    infos = ledger.accounts([m.account_id for m in plan.members]) if plan.members else {}
    assert sum(i.balance_minor for i in infos.values()) == sum(m.principal_minor + m.bonus_minor
                                                                for m in plan.members)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_separated_files(tmp_path, ledger, sep):
    ledger.init()
    path = tmp_path / "s.csv"
    path.write_text(sep.join(HEAD) + "\n" + sep.join(["T1", "C1", "张三", "", "1,234.50", "0"]) + "\n",
                    encoding="utf-8")
    plan = mi.plan_import(mi.read_table(str(path)), None, ledger)
    assert [(m.account_id, m.principal_minor) for m in plan.members] == [("T1", 123450)]
    out = mi.apply_import(plan, ledger, helper_process=False, progress=lambda *a: None)
    assert len(out.created) == 1


def test_account_ids_and_txn_ids_from_references(tmp_path, ledger):
    """The account id is the reference when it is a valid id, else the card; the old
    reference is journaled either way; txn ids stay within 64 characters and never use
    the ledger's own '@' namespace."""
    ledger.init()
    long_ref = "R" * 64
    rows = [["张三-001", "8800001", "张三", "", "1", "0"],      # a Chinese reference: the card is the id
            ["王五-003", "", "王五", "", "1", "0"],              # ... and without a card: refused
            [long_ref, "8800004", "赵六", "", "1", "0"]]
    plan = mi.plan_import(mi.read_table(str(write_csv(tmp_path / "r.csv", rows))), None, ledger)
    assert [(p.line, p.field) for p in plan.problems] == [(3, "ref")]
    assert [(m.account_id, m.ref) for m in plan.members] == [("8800001", "张三-001"), (long_ref, long_ref)]
    for m in plan.members:
        for txn in (m.txn_id, m.card_txn_id):
            assert len(txn) <= 64 and "@" not in txn
    assert plan.members[1].txn_id == "imp:h" + __import__("hashlib").sha1(long_ref.encode()).hexdigest()
    mi.apply_import(plan, ledger)
    entry = [f for _, f in read_range(ledger.client, ledger.partitions[0].journal)
             if f["kind"] == "open" and f["acct"] == "8800001"][0]
    assert entry["imp"] == "张三-001" and entry["txn"] == "imp:8800001"
    assert ledger.resolve_card("8800001").account_id == "8800001"


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_a_title_above_the_header_is_skipped_and_lines_stay_the_files(tmp_path, ledger, kind):
    ledger.init()
    rows = [["会员列表（导出于 2026-12-01）"], [], HEAD, ["T1", "C1", "张三", "", "1", "0"], ["T2", "C2", "李四", "", "x", "0"]]
    if kind == "csv":
        path = tmp_path / "t.csv"
        with open(path, "w", encoding="gbk", newline="") as fh:
            csv.writer(fh).writerows(rows)
    else:
        path = write_xlsx(tmp_path / "t.xlsx", rows[1:], header=rows[0])
    plan = mi.plan_import(mi.read_table(str(path)), None, ledger)
    assert plan.mapping["principal"] == "余额" and plan.rows == 2
    assert [m.line for m in plan.members] == [4] and [(p.line, p.field) for p in plan.problems] == [(5, "principal")]


def test_operator_is_recorded_one_member_at_a_time_and_checked_first(tmp_path, ledger, capsys):
    ledger.init()
    url = ledger_url(ledger)
    path = write_csv(tmp_path / "o.csv", ROWS)
    assert ctl(["--redis-url", url, "member", "import", str(path), "--apply", "--operator", "bad id"]) == 2
    assert "operator" in capsys.readouterr().err
    assert ledger.client.scard(ledger.partitions[0].accounts) == 0
    seen = []
    out = mi.apply_import(mi.plan_import(mi.read_table(str(path)), None, ledger), ledger, operator="boss",
                          progress=lambda done, total, phase: seen.append((done, total, phase)))
    assert len(out.created) == 4 and seen[-1] == (4, 4, "apply")
    entry = [f for _, f in read_range(ledger.client, ledger.partitions[0].journal) if f["kind"] == "open"][0]
    assert entry["cash"] == "boss"


def test_connections_killed_during_apply_each_member_once(tmp_path, ledger):
    """Redis drops the importer's connections again and again while it writes (CLIENT
    KILL): each pipeline is retried with the same txn ids, replays answer what ran, and
    every member is opened and given its card exactly once."""
    import threading

    import redis as redis_py
    ledger.init()
    n = 3000
    rows = [[f"F{i:05d}", f"44{i:06d}", f"会员{i}", f"135{i:08d}", f"{i}.01", "2"] for i in range(n)]
    plan = mi.plan_import(mi.read_table(str(write_csv(tmp_path / "f.csv", rows))), None, ledger)
    kw = ledger.client.connection_pool.connection_kwargs
    killer = redis_py.Redis(host=kw["host"], port=kw["port"], db=kw.get("db", 0))
    stop = threading.Event()
    kills = []

    def kill():
        while not stop.is_set():
            kills.append(killer.client_kill_filter(_type="normal", skipme=True))
            time.sleep(0.03)
    t = threading.Thread(target=kill)
    t.start()
    try:
        out = mi.apply_import(plan, ledger)
    finally:
        stop.set()
        t.join()
        killer.close()
    assert sum(kills) > 0
    assert out.declined == [] and len(out.created) + len(out.replayed) == n
    assert opens_in_journal(ledger) == {r[0]: 1 for r in rows}
    cards = [f["card"] for _, f in read_range(ledger.client, ledger.partitions[0].journal) if f["kind"] == "card_issue"]
    assert sorted(cards) == sorted(r[1] for r in rows)
