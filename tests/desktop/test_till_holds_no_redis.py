"""Issue 24: a till PC holds no Redis login and its code imports no Redis client; what a
till keeps (its settings file, its outbox, its logs) is worth only its signed-in
cashiers' rights at the gateway.

The attacks are made with the till's own files after a real shift: the credential read
from its settings file, the txn ids read from its outbox, a session captured from another
till, and every refusal leaves the money as it was."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from desktop.settings import TerminalSettings

from .conftest import CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_of_the_till_imports_a_redis_client():
    """Every module under desktop/ imported in a fresh interpreter: redis-py is not loaded."""
    probe = ("import pkgutil, importlib, sys, desktop\n"
             "names = [m.name for m in pkgutil.walk_packages(desktop.__path__, 'desktop.')\n"
             "         if not m.name.endswith('__main__')]   # (that one starts the terminal)\n"
             "for n in names:\n"
             "    importlib.import_module(n)\n"
             "print(len(names), sorted(m for m in sys.modules if m == 'redis' or m.startswith('redis.')))\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    count, loaded = done.stdout.strip().split(" ", 1)
    assert int(count) > 30 and loaded == "[]", done.stdout
    # and no source file of the till names the client at all (a lazy import would hide from the probe)
    sources = [p for p in (ROOT / "desktop").rglob("*.py")]
    naming = [str(p.relative_to(ROOT)) for p in sources
              if any(line.lstrip().startswith(("import redis", "from redis")) for line in p.read_text().splitlines())]
    assert naming == []


def _post(url: str, path: str, token: str, body: dict, session: str = "") -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", **({"X-Cashier-Session": session} if session else {})}
    return httpx.post(f"{url}/v1{path}", json=body, headers=headers, timeout=5)


def test_what_a_till_keeps_changes_no_money_beyond_its_cashiers_rights(qtbot, make_terminal, gateways, redis_url,
                                                                       ledger, registry, tmp_path):
    ledger.init()
    open_account(ledger, "AT-1", 10_000)
    settings = TerminalSettings(tmp_path / "till.ini")
    gateway = gateways.for_url(redis_url)
    settings.save("T1", [gateway.url], "en", token=gateway.enroll("T1"))
    window = make_terminal(redis_url, settings=settings, data_dir=tmp_path / "till-data")
    sign_in(qtbot, window)
    page = window.sale_page
    page.account_input.setText("AT-1")
    page.look_up()
    qtbot.waitUntil(lambda: page._account is not None, timeout=5000)
    page.amount_input.setText("12.00")
    page.charge()
    qtbot.waitUntil(lambda: window.engine.pending_count == 0 and page.busy_txn is None, timeout=5000)
    other = gateways.till_ledger(redis_url, "T2")
    assert other.sign_in(SUPERVISOR, SUPERVISOR_PIN).ok
    window.engine.close()

    # everything the till PC holds, as files
    held = [tmp_path / "till.ini", *sorted((tmp_path / "till-data").rglob("*"))]
    text = b"".join(p.read_bytes() for p in held if p.is_file()).decode("utf-8", errors="replace")
    assert "redis://" not in text and "rediss://" not in text          # no Redis address, no Redis login
    token = TerminalSettings(tmp_path / "till.ini").token
    with sqlite3.connect(tmp_path / "till-data" / "outbox.sqlite3") as db:
        (sale_txn,), = db.execute("SELECT txn_id FROM ops WHERE kind = 'deduct'").fetchall()
    balance = ledger.balance("AT-1")
    assert balance == 8_800

    refused = {
        # the credential alone: no cashier, no money
        "no session": _post(gateway.url, "/ops/deduct", token, {"txn_id": "T1-d-new1", "account_id": "AT-1",
                                                                 "amount_minor": 100}),
        # a supervisor's session captured from another till
        "another till's session": _post(gateway.url, "/ops/credit", token,
                                        {"txn_id": "T1-c-new2", "account_id": "AT-1", "amount_minor": 500_000},
                                        other.sessions[SUPERVISOR]),
        # a correction (internal kind) with the till's own credential and a guessed id
        "internal kind": _post(gateway.url, "/ops/compensate", token,
                               {"txn_id": "@cmp:x", "account_id": "AT-1", "amount_minor": 5_000_000}),
        # the outbox's sale sent again as another terminal's
        "claims another terminal": _post(gateway.url, "/ops/deduct", token,
                                         {"txn_id": sale_txn, "account_id": "AT-1", "amount_minor": 1200,
                                          "terminal_id": "T2"}),
    }
    for what, answer in refused.items():
        assert answer.status_code in (400, 401, 403, 404), (what, answer.status_code, answer.text)
        assert "Traceback" not in answer.text
    # the outbox's own sale replayed on the credential alone: its first answer, nothing new applied
    replay = _post(gateway.url, "/ops/deduct", token, {"txn_id": sale_txn, "account_id": "AT-1", "amount_minor": 1200})
    assert replay.status_code == 200 and replay.json()["replayed"] is True, replay.text
    assert ledger.balance("AT-1") == balance
    # the same id with another amount is a conflict, never a second charge
    conflict = _post(gateway.url, "/ops/deduct", token, {"txn_id": sale_txn, "account_id": "AT-1",
                                                         "amount_minor": 120_000})
    assert conflict.status_code in (403, 409), conflict.text
    # revoked: the till's credential is refused everywhere within the gateway's cache time
    gateway.gateway.terminals.revoke("T1")
    qtbot.waitUntil(lambda: _post(gateway.url, "/ops/deduct", token, {
        "txn_id": "T1-d-new3", "account_id": "AT-1", "amount_minor": 100}).status_code == 401, timeout=6000)
    assert ledger.balance("AT-1") == balance
    other.close()


@pytest.mark.parametrize("who", [CASHIER])
def test_a_signed_out_cashiers_session_is_ended_on_the_gateway(qtbot, terminal, ledger, who):
    sign_in(qtbot, terminal, who, CASHIER_PIN)
    session = terminal.engine.ledger.sessions[who]
    terminal.sign_out()
    # the sign-out reached the gateway: the captured session is dead there
    gateway_url = terminal.engine.gateway_urls[0]
    token = terminal.engine.ledger._token

    def dead() -> bool:
        answer = httpx.get(f"{gateway_url}/v1/promotions", headers={"Authorization": f"Bearer {token}",
                                                                    "X-Cashier-Session": session}, timeout=5)
        return answer.status_code == 401 and json.loads(answer.text)["error"] == "session_invalid"
    qtbot.waitUntil(dead, timeout=5000)
