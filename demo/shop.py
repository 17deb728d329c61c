"""The demo shop's contents and its end-to-end check.

`ensure_ledger` creates the ledger on a new Redis (or waits for the reconcile service
to restore it from the database when Redis lost it); `seed` opens the demo accounts
and the demo cashier with fixed txn ids, so a second run changes nothing. `charge_end_to_end`
makes one charge through the terminal's own engine (`desktop.engine.Engine`: local
outbox, txn id, `core.Ledger.deduct`) as terminal DEMO, waits until the reconcile
service has written it into the database and reads the row back with SQLAlchemy.
Amounts are integer minor units (fen) throughout.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from core import Ledger, Status
from core.keys import META_KEY
from core.money import format_minor

from .redis_choice import DemoError

# (account id, holder, opening balance in minor units)
DEMO_ACCOUNTS = (("D-1001", "Alice Wang", 200_00), ("D-1002", "Bo Li", 50_00), ("D-1003", "Chen Yu", 5_00))
DEMO_CASHIER_ID = "demo"
DEMO_CASHIER_NAME = "Demo Cashier"
DEMO_CASHIER_PIN = "1234"
CHECK_TERMINAL_ID = "DEMO"
CHECK_ACCOUNT_ID = "D-1001"
CHECK_AMOUNT_MINOR = 12_50
TOP_UP_BELOW_MINOR = 50_00           # the check's account is topped up when it runs low
TOP_UP_MINOR = 200_00


@dataclass(frozen=True)
class CheckResult:
    txn_id: str
    status: str
    balance_after_minor: int | None
    journal_id: str
    db_row: dict
    seconds_to_database: float


def ensure_ledger(ledger: Ledger, database_has_data: bool, timeout_s: float) -> str:
    """Make sure Redis holds a ledger. Returns what happened, for the user."""
    if ledger.client.hget(META_KEY, "partitions") is not None:
        return "ledger found in Redis"
    if not database_has_data:
        schema = ledger.init()
        return f"new ledger created ({schema.partitions} journal partition)"
    # Redis lost its data but the database has the books: the reconcile service
    # restores every account before writing cs:meta (reconcile_service.restore).
    deadline = time.monotonic() + timeout_s
    while ledger.client.hget(META_KEY, "partitions") is None:
        if time.monotonic() > deadline:
            raise DemoError(f"Redis holds no ledger and the reconcile service did not restore it "
                            f"within {timeout_s:.0f} s; see its log")
        time.sleep(0.2)
    return "ledger restored from the database by the reconcile service"


def seed(ledger: Ledger) -> list[str]:
    """Open the demo accounts and the demo cashier; lines to print."""
    from core.cashiers import CashierRegistry
    lines = []
    for account_id, holder, opening_minor in DEMO_ACCOUNTS:
        ledger.open_account(account_id, txn_id=f"demo-open-{account_id}", initial_minor=opening_minor,
                            cashier_id=DEMO_CASHIER_ID)
        info = ledger.account(account_id)
        lines.append(f"  account {account_id}  {holder:<11} balance {format_minor(info.balance_minor):>8} "
                     f"({info.status})")
    registry = CashierRegistry(ledger.client)
    if registry.get(DEMO_CASHIER_ID) is None:
        registry.add(DEMO_CASHIER_ID, DEMO_CASHIER_NAME, DEMO_CASHIER_PIN, supervisor=True, can_top_up=True)
    else:   # an earlier run made it: make sure the printed PIN is the one that works
        registry.set_disabled(DEMO_CASHIER_ID, False)
        registry.reset_pin(DEMO_CASHIER_ID, DEMO_CASHIER_PIN)
    lines.append(f"  cashier {DEMO_CASHIER_ID!r} ({DEMO_CASHIER_NAME}, supervisor, may top up)  "
                 f"PIN {DEMO_CASHIER_PIN}")
    return lines


def top_up_if_low(ledger: Ledger) -> None:
    """Keep the check's account able to pay for the check, run after run."""
    import uuid
    if ledger.balance(CHECK_ACCOUNT_ID) < TOP_UP_BELOW_MINOR:
        ledger.credit(CHECK_ACCOUNT_ID, TOP_UP_MINOR, txn_id=f"demo-topup-{uuid.uuid4().hex[:16]}",
                      cashier_id=DEMO_CASHIER_ID)


def _terminal_charge(gateway_url: str, token: str, data_dir: Path, timeout_s: float):
    """One charge through the terminal's engine, headless (Qt core only, no window), to the
    demo's ledger gateway with the check terminal's credential (as every till does)."""
    from PySide6.QtCore import QCoreApplication, QEventLoop

    from desktop.engine import ONLINE, Engine
    from gateway.client import GatewayLedger

    app = QCoreApplication.instance() or QCoreApplication(["cashier-demo"])
    deadline = time.monotonic() + timeout_s

    def wait(predicate, what: str) -> None:
        while not predicate():
            if time.monotonic() > deadline:
                raise DemoError(f"the terminal engine timed out {what}")
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            time.sleep(0.005)

    engine = Engine(GatewayLedger([gateway_url], token), CHECK_TERMINAL_ID, data_dir)
    answers: dict[str, object] = {}
    try:
        engine.opResolved.connect(lambda op: answers.__setitem__("op", op))
        engine.start()
        wait(lambda: engine.state == ONLINE, "connecting to the ledger gateway")
        engine.sign_in(DEMO_CASHIER_ID, DEMO_CASHIER_PIN, lambda s: answers.__setitem__("signin", s),
                       lambda exc: answers.__setitem__("signin", exc))
        wait(lambda: "signin" in answers, "signing in")
        signin = answers["signin"]
        if isinstance(signin, Exception) or not signin.ok:
            raise DemoError(f"the demo cashier could not sign in: {signin!r}")
        op = engine.submit("deduct", CHECK_ACCOUNT_ID, CHECK_AMOUNT_MINOR, DEMO_CASHIER_ID, shift_id=None)
        wait(lambda: "op" in answers and answers["op"].txn_id == op.txn_id, "waiting for the charge")
        return answers["op"]
    finally:
        engine.close()


def _read_entry(database_url: str, txn_id: str) -> dict | None:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            row = conn.execute(text(
                "SELECT txn_id, account_id, kind, amount_minor, balance_after_minor, terminal_id, "
                "cashier_id, journal_partition, journal_id FROM ledger_entries WHERE txn_id = :t"),
                {"t": txn_id}).mappings().first()
            return dict(row) if row else None
    except OperationalError:        # not migrated yet, or busy: the caller polls again
        return None
    finally:
        engine.dispose()


def charge_end_to_end(ledger: Ledger, gateway_url: str, token: str, database_url: str, data_dir: Path,
                      timeout_s: float, alive: Callable[[], str | None] = lambda: None) -> CheckResult:
    """`alive` answers None while the reconcile service (and the gateway) run, else why one stopped."""
    top_up_if_low(ledger)
    op = _terminal_charge(gateway_url, token, data_dir, timeout_s)
    if op.status != Status.APPLIED.value:
        raise DemoError(f"the charge was not applied: {op.status} {op.last_error}".strip())
    journal = [e for e in ledger.journal(CHECK_ACCOUNT_ID, count=50) if e.txn_id == op.txn_id]
    sent = time.monotonic()
    deadline = sent + timeout_s
    while (row := _read_entry(database_url, op.txn_id)) is None:
        if (problem := alive()) is not None:
            raise DemoError(problem)
        if time.monotonic() > deadline:
            raise DemoError(f"txn {op.txn_id} did not reach the database within {timeout_s:.0f} s: "
                            "is the reconcile service running? (see its log)")
        time.sleep(0.1)
    return CheckResult(op.txn_id, op.status, op.balance_after_minor,
                       journal[0].journal_id if journal else row["journal_id"], row,
                       time.monotonic() - sent)
