"""The terminal probe of part 8, run as its own process (``python -m bench.terminal_probe
URL CHARGES``) so that Qt never lives in the bench's forking parent: on Qt's offscreen
platform it builds the real main window (`desktop.engine.Engine` + `MainWindow`, the
production defaults), times constructing and showing it and the time until the
connection status is online, signs in a cashier created with
`core.cashiers.CashierRegistry`, then for each charge types account and amount, clicks
`chargeButton` (QTest, like pytest-qt's qtbot) and polls the event loop until
`resultLabel` shows the decision ("Approved: ..."), the way `qtbot.waitUntil` does but
polling every 0.2 ms instead of 10 ms. Prints one JSON line: times in seconds and the
per-charge latencies in milliseconds; amounts are integer minor units (1 per charge).
The terminal reaches URL the way a till does, through a ledger gateway (`gateway.app`
under uvicorn in a thread of this process, gateway/in_thread.py, on a free loopback port; the terminal
enrolled there), so a charge's latency includes the gateway's HTTP round trip.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time

PROBE_STARTED_S = time.perf_counter()
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CASHIER, PIN, ACCOUNT = "c1", "1234", "TERM-BENCH-1"
INITIAL_MINOR = 100_000_000
POLL_S = 0.0002


def wait_until(app, predicate, timeout_s: float = 10.0) -> None:
    deadline = time.perf_counter() + timeout_s
    while not predicate():
        app.processEvents()
        if time.perf_counter() > deadline:
            raise TimeoutError("terminal did not reach the expected state")
        time.sleep(POLL_S)


def main(url: str, charges: int) -> dict:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from core import Ledger
    from core.cashiers import CashierRegistry
    from desktop.engine import ONLINE, Engine
    from desktop.main_window import MainWindow
    from gateway.app import Gateway
    from gateway.client import GatewayLedger
    from gateway.in_thread import serve_in_thread, stop
    from core.terminals import TerminalRegistry
    imported_s = time.perf_counter() - PROBE_STARTED_S

    ledger = Ledger.from_url(url)
    ledger.init()
    assert ledger.open_account(ACCOUNT, txn_id=f"open-{ACCOUNT}", initial_minor=INITIAL_MINOR).applied
    CashierRegistry(ledger.client).add(CASHIER, "Bench Cashier", PIN)
    server, gateway_url = serve_in_thread(Gateway(ledger))
    token = TerminalRegistry(ledger.client).enroll("TBENCH")

    app = QApplication.instance() or QApplication(["cashier-terminal-bench"])
    with tempfile.TemporaryDirectory(prefix="cashier-bench-terminal-") as data_dir:
        t0 = time.perf_counter()
        engine = Engine(GatewayLedger([gateway_url], token), "TBENCH", data_dir)
        window = MainWindow(engine)
        window.show()
        engine.start()
        app.processEvents()
        construct_show_s = time.perf_counter() - t0
        wait_until(app, lambda: engine.state == ONLINE)
        online_s = time.perf_counter() - t0

        page = window.sign_in_page
        page.cashier_input.setText(CASHIER)
        page.pin_input.setText(PIN)
        QTest.mouseClick(page.sign_in_button, Qt.MouseButton.LeftButton)
        wait_until(app, lambda: window.stack.currentWidget() is window.sale_page)
        float_dialog = getattr(getattr(window, "drawer_hook", None), "float_dialog", None)
        if float_dialog is not None and float_dialog.isVisible():       # the shift's opening float
            float_dialog.amount_input.setText("0")
            QTest.mouseClick(float_dialog.confirm_button, Qt.MouseButton.LeftButton)
            wait_until(app, lambda: not float_dialog.isVisible())

        sale = window.sale_page
        button = window.findChild(object, "chargeButton")
        label = window.findChild(object, "resultLabel")
        latencies_ms = []
        for _ in range(charges):
            sale.account_input.setText(ACCOUNT)
            sale.amount_input.setText("0.01")
            app.processEvents()
            before = label.text()
            started = time.perf_counter()
            QTest.mouseClick(button, Qt.MouseButton.LeftButton)
            wait_until(app, lambda: sale.busy_txn is None and label.text() != before
                       and label.text().startswith("Approved"))
            latencies_ms.append((time.perf_counter() - started) * 1000)
        balance = ledger.balance(ACCOUNT)
        window.close()
        engine.close()
    stop(server)
    ledger.close()
    return {"imported_s": imported_s, "construct_show_s": construct_show_s, "online_s": online_s,
            "latencies_ms": latencies_ms, "exact": balance == INITIAL_MINOR - charges}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
