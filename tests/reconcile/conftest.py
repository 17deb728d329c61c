"""Fixtures and helpers of the reconcile service tests: a fresh PostgreSQL database per
test, the CLI run in-process or as a real subprocess, a mixed workload on the real
Redis, and the check that the books agree (Redis == database == sum of entries)."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from core import DeductRequest, Ledger
from core.keys import CONSUMER_GROUP
from reconcile_service.cli import main as cli_main
from reconcile_service.models import Account, DuplicateEntry, LedgerEntry
from tests.support import fault_daemon
from tests.support.postgres import fresh_database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pg_url():
    with fresh_database() as url:
        yield url


@pytest.fixture
def db(pg_url):
    engine = create_engine(pg_url)
    yield engine
    engine.dispose()


def run_cli(*args: str, redis_url: str, database_url: str | None, extra_env: dict | None = None) -> int:
    """The CLI in this process (fast); signal handlers it installs are put back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    env_before = dict(os.environ)
    os.environ["CASHIER_REDIS_URL"] = redis_url
    if database_url:
        os.environ["CASHIER_DATABASE_URL"] = database_url
    os.environ.update(extra_env or {})
    try:
        return cli_main([*args, "--metrics-port", "0", "--log-format", "text"]
                        if args and args[0] == "run" else list(args))
    finally:
        os.environ.clear()
        os.environ.update(env_before)
        for s, h in saved.items():
            signal.signal(s, h)


def spawn(*args: str, redis_url: str, database_url: str | None, env: dict | None = None,
          log_path: Path | None = None) -> subprocess.Popen:
    """The CLI as a real process (`python -m reconcile_service`), for signals and kill -9;
    with the journal's fault point in `env`, through tests.support.fault_daemon (which
    arms it: the production daemon reads no such variable)."""
    module = fault_daemon.MODULE if fault_daemon.FAULT_ENV in (env or {}) else "reconcile_service"
    full_env = dict(os.environ, CASHIER_REDIS_URL=redis_url, PYTHONPATH=str(ROOT), **(env or {}))
    if database_url:
        full_env["CASHIER_DATABASE_URL"] = database_url
    out = open(log_path, "ab") if log_path else subprocess.DEVNULL
    return subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=full_env,
                            stdout=out, stderr=subprocess.STDOUT)


def open_accounts(ledger: Ledger, count: int, initial_minor: int = 100_000, prefix: str = "A") -> list[str]:
    ids = [f"{prefix}-{i:05d}" for i in range(count)]
    for a in ids:
        assert ledger.open_account(a, txn_id=f"open-{a}", initial_minor=initial_minor).applied
    return ids


def workload(ledger: Ledger, accounts: list[str], ops: int, *, seed: int, tag: str = "w") -> int:
    """Mixed operations; answers how many were applied (each applied op = one journal entry)."""
    rng = random.Random(seed)
    applied = 0
    deducted: list[tuple[str, str, int]] = []
    i = 0
    while i < ops:
        roll = rng.random()
        if roll < 0.6:   # a batch of deductions in one pipeline, like a busy till
            n = min(50, ops - i)
            reqs = [DeductRequest(rng.choice(accounts), rng.randint(1, 900), f"{tag}-d-{i + k}",
                                  terminal_id="T1", cashier_id="c1") for k in range(n)]
            for req, res in zip(reqs, ledger.deduct_many(reqs)):
                if getattr(res, "applied", False):
                    applied += 1
                    deducted.append((req.account_id, req.txn_id, req.amount_minor))
            i += n
            continue
        a = rng.choice(accounts)
        if roll < 0.8:
            applied += ledger.credit(a, rng.randint(1, 2000), txn_id=f"{tag}-c-{i}").applied
        elif roll < 0.9 and deducted:
            acct, txn, amt = rng.choice(deducted)
            applied += ledger.refund(acct, max(1, amt // 3), txn_id=f"{tag}-r-{i}", original_txn_id=txn).applied
        elif roll < 0.95:
            applied += ledger.freeze(a, txn_id=f"{tag}-f-{i}").applied
        else:
            applied += ledger.unfreeze(a, txn_id=f"{tag}-u-{i}").applied
        i += 1
    return applied


def redis_accounts(ledger: Ledger) -> dict:
    ids = [a for p in ledger.partitions for a in ledger.account_ids(p)]
    return ledger.accounts(ids)


def assert_books_agree(ledger: Ledger, engine, *, expected_entries: int | None = None) -> dict:
    """Every Redis account: Redis balance == accounts.balance_minor == sum of its entries
    (+ recorded duplicates), same status; nothing left unacknowledged in any partition."""
    live = redis_accounts(ledger)
    with engine.connect() as conn:
        rows = {r.account_id: r for r in conn.execute(select(Account.account_id, Account.balance_minor,
                                                             Account.status))}
        sums: dict[str, int] = {}
        for table in (LedgerEntry, DuplicateEntry):
            for acct, total in conn.execute(select(table.account_id, func.sum(table.amount_minor))
                                            .group_by(table.account_id)):
                sums[acct] = sums.get(acct, 0) + int(total)
        entries = conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
    assert set(live) == set(rows), "accounts differ between Redis and the database"
    for acct, info in live.items():
        assert info is not None
        assert rows[acct].balance_minor == info.balance_minor, acct
        assert sums.get(acct, 0) == info.balance_minor == ledger.balance(acct), acct
        assert rows[acct].status == info.status, acct
    for part in ledger.partitions:
        group = next(g for g in ledger.client.xinfo_groups(part.journal) if g["name"] == CONSUMER_GROUP)
        assert group["pending"] == 0
    if expected_entries is not None:
        assert entries == expected_entries
    return {"accounts": len(rows), "redis_accounts": len(live), "entries": entries}
