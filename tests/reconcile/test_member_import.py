"""A shop moves in (issue 29): 10,000 members with 20 bad rows imported by `cashierctl
member import`, booked by `reconcile-service run --once` into PostgreSQL. The dry run
lists exactly the 20 bad lines; --apply opens 9,980; a re-run changes nothing; Redis and
the book (accounts' principal and bonus, the entries' pd / bd, the liability report)
equal the file's totals; verify is green."""
from __future__ import annotations

import csv
import json
import random
from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select

from admin.cashierctl import main as ctl
from reconcile_service.models import Account, LedgerEntry
from reconcile_service.reports.book import liability
from reconcile_service.verify import verify
from tests.reconcile.conftest import assert_books_agree, run_cli

HEAD = ["会员编号", "会员卡号", "姓名", "手机号", "余额", "赠送余额"]


def _file(path, n=10_000, bad=20, seed=29):
    rnd = random.Random(seed)
    rows, bad_lines = [], set()
    breakers = [lambda r: r.__setitem__(4, "-1.00"), lambda r: r.__setitem__(4, "1.005"),
                lambda r: r.__setitem__(3, "12a"), lambda r: r.__setitem__(5, "abc"),
                lambda r: r.__setitem__(1, "卡 1"), lambda r: r.__setitem__(4, "1000000000.01")]
    bad_at = set(rnd.sample(range(n), bad - 2))
    for i in range(n):
        row = [f"S{i:05d}", f"77{i:06d}", rnd.choice("张王李赵") + rnd.choice("伟芳娜敏静"), f"136{i:08d}",
               f"{rnd.randint(0, 10 ** 7) // 100}.{rnd.randint(0, 99):02d}", f"{rnd.randint(0, 2000)}"]
        if i in bad_at:
            breakers[i % len(breakers)](row)
            bad_lines.add(i + 2)
        rows.append(row)
    # two duplicates: a card and a phone of earlier rows
    rows[100][1] = rows[50][1]
    rows[200][3] = rows[150][3]
    bad_lines |= {102, 202}
    assert len(bad_lines) == bad
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEAD)
        w.writerows(rows)
    good = [r for i, r in enumerate(rows) if i + 2 not in bad_lines]
    principal = sum(int(r[4].replace(".", "")) for r in good)
    bonus = sum(int(r[5]) * 100 for r in good)
    return sorted(bad_lines), good, principal, bonus


def test_ten_thousand_members_with_twenty_bad_rows_in_redis_and_in_the_book(tmp_path, redis_url, pg_url, db,
                                                                            ledger, capsys):
    ledger.init()
    path = tmp_path / "shop.csv"
    bad_lines, good, principal, bonus = _file(path)

    assert ctl(["--redis-url", redis_url, "--json", "member", "import", str(path)]) == 1
    dry = json.loads(capsys.readouterr().out)
    assert [p["line"] for p in dry["refused"]] == bad_lines
    assert all(p["field"] and p["reason"] for p in dry["refused"])
    assert dry["to_import"] == 9_980 and ledger.client.scard(ledger.partitions[0].accounts) == 0

    assert ctl(["--redis-url", redis_url, "--json", "member", "import", str(path), "--apply"]) == 1
    first = json.loads(capsys.readouterr().out)
    assert (first["created"], first["replayed"], first["declined"]) == (9_980, 0, [])
    assert (first["principal_minor"], first["bonus_minor"]) == (principal, bonus)
    journal_len = ledger.client.xlen(ledger.partitions[0].journal)

    assert ctl(["--redis-url", redis_url, "--json", "member", "import", str(path), "--apply"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert (again["created"], again["replayed"]) == (0, 9_980)
    assert ledger.client.xlen(ledger.partitions[0].journal) == journal_len

    infos = ledger.accounts([r[0] for r in good])
    assert sum(i.balance_minor - i.bonus_minor for i in infos.values()) == principal
    assert sum(i.bonus_minor for i in infos.values()) == bonus

    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db, expected_entries=2 * 9_980)      # an open and a card each
    with db.connect() as conn:
        acc = conn.execute(select(func.count(), func.sum(Account.principal_minor),
                                  func.sum(Account.bonus_minor))).one()
        ent = conn.execute(select(func.sum(LedgerEntry.principal_delta_minor),
                                  func.sum(LedgerEntry.bonus_delta_minor))
                           .where(LedgerEntry.kind == "open", LedgerEntry.txn_id.like("imp:%"))).one()
    assert (acc[0], int(acc[1]), int(acc[2])) == (9_980, principal, bonus)
    assert (int(ent[0]), int(ent[1])) == (principal, bonus)
    now = datetime.now(timezone.utc)
    book = liability(db, now - timedelta(days=1), now + timedelta(minutes=1))
    assert book.closing == (principal, bonus) and book.balanced
    # the statement names the import as its own top-up line, not "method not recorded"
    topups = {line.detail: line.principal_minor for line in book.lines if line.key == "topup"}
    assert topups.get("import") == principal and not topups.get("unspecified")
    assert verify(ledger, db).ok


def test_an_imported_bonus_is_spent_refunded_and_closed_like_a_topup_bonus(redis_url, pg_url, db, ledger):
    """Core's invariants hold for an opening bonus: a deduction takes principal first
    (the default order), a refund gives each bucket back its part, closing pays out the
    principal and forfeits the bonus, and the book agrees."""
    ledger.init()
    r = ledger.open_account("I-1", txn_id="imp:I-1", initial_minor=1_000, bonus_minor=500, import_ref="老系统 0001")
    assert r.applied and r.balance_minor == 1_500
    again = ledger.open_account("I-1", txn_id="imp:I-1", initial_minor=1_000, bonus_minor=500,
                                import_ref="老系统 0001")
    assert again.replayed and again.balance_minor == 1_500
    import pytest
    from core import TxnConflict
    with pytest.raises(TxnConflict):
        ledger.open_account("I-1", txn_id="imp:I-1", initial_minor=1_000, bonus_minor=501, import_ref="老系统 0001")
    ledger.deduct("I-1", 1_200, txn_id="d-1")                 # 1000 principal + 200 bonus
    assert ledger.account("I-1").bonus_minor == 300
    ledger.refund("I-1", 1_200, txn_id="r-1", original_txn_id="d-1")
    assert ledger.account("I-1").bonus_minor == 500
    close = ledger.close_account("I-1", txn_id="x-1")
    assert (close.payout_minor, close.bonus_forfeited_minor) == (1_000, 500)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db)
    with db.connect() as conn:
        row = conn.execute(select(LedgerEntry.amount_minor, LedgerEntry.principal_delta_minor,
                                  LedgerEntry.bonus_delta_minor).where(LedgerEntry.txn_id == "imp:I-1")).one()
    assert tuple(row) == (1_500, 1_000, 500)
    assert verify(ledger, db).ok


def test_export_from_the_book_equals_the_export_from_redis(tmp_path, redis_url, pg_url, db, ledger, capsys):
    ledger.init()
    path = tmp_path / "s.csv"
    _file(path, n=300, bad=20)
    assert ctl(["--redis-url", redis_url, "member", "import", str(path), "--apply"]) == 1
    ledger.block_card("77000007", txn_id="blk-7", reason="lost")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    capsys.readouterr()
    assert ctl(["--redis-url", redis_url, "member", "export", str(tmp_path / "redis.csv")]) == 0
    assert ctl(["--redis-url", redis_url, "member", "export", str(tmp_path / "book.csv"), "--from-book",
                "--database-url", pg_url]) == 0
    assert "from the database of record" in capsys.readouterr().out
    redis_rows = (tmp_path / "redis.csv").read_text(encoding="utf-8-sig")
    assert redis_rows == (tmp_path / "book.csv").read_text(encoding="utf-8-sig")
    assert "77000007:blocked" in redis_rows and redis_rows.count("\n") == 281
    assert ctl(["--redis-url", redis_url, "member", "export", str(tmp_path / "x.csv"), "--from-book",
                "--database-url", "postgresql://nobody@127.0.0.1:1/none"]) == 3
    assert "database_url" in capsys.readouterr().err


def test_restore_brings_imported_members_back_with_their_buckets(tmp_path, redis_url, pg_url, db, ledger):
    """Redis lost after an import: `restore` from the book gives every imported member its
    principal, bonus, card and phone back, and a re-run of the import then opens nothing
    (the accounts exist; their import records went with Redis)."""
    from core import Ledger
    ledger.init()
    path = tmp_path / "r.csv"
    _, good, principal, bonus = _file(path, n=300, bad=20)
    assert ctl(["--redis-url", redis_url, "member", "import", str(path), "--apply"]) == 1
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    back = Ledger.from_url(redis_url)
    infos = back.accounts([r[0] for r in good])
    assert sum(i.balance_minor - i.bonus_minor for i in infos.values()) == principal
    assert sum(i.bonus_minor for i in infos.values()) == bonus
    assert back.resolve_card(good[0][1]).account_id == good[0][0]
    assert back.find_members(good[0][3])[0].account_id == good[0][0]
    assert ctl(["--redis-url", redis_url, "member", "import", str(path), "--apply"]) == 1
    assert back.accounts([r[0] for r in good]) == infos          # nothing opened again
    back.close()


def test_amounts_at_the_limit_are_booked_exactly(tmp_path, redis_url, pg_url, db, ledger):
    ledger.init()
    path = tmp_path / "big.csv"
    with open(path, "w", encoding="gbk", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(HEAD)
        w.writerow(["L1", "9100001", "甲", "", "1000000000.00", "1000000000.00"])
        w.writerow(["L2", "9100002", "乙", "", "999999999.99", "0.01"])
        w.writerow(["L3", "9100003", "丙", "", "1000000000.01", "0"])       # one fen too many: refused
    assert ctl(["--redis-url", redis_url, "member", "import", str(path), "--apply"]) == 1
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    with db.connect() as conn:
        rows = dict((a, (p, b)) for a, p, b in conn.execute(
            select(Account.account_id, Account.principal_minor, Account.bonus_minor)))
    assert rows == {"L1": (10 ** 11, 10 ** 11), "L2": (10 ** 11 - 1, 1)}
    assert ledger.account("L1").balance_minor == 2 * 10 ** 11
    assert_books_agree(ledger, db)
