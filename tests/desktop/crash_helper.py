"""Runs a real terminal (engine + main window, offscreen) in its own process for the
crash test: signs in, makes one answered sale (K-0, ¥0.01), waits for the test's "go" file, charges, prints
"PENDING <txn id>" once the charge (or, with KIND=hold, the hold) is being checked,
and then runs until killed.

    python -m tests.desktop.crash_helper GATEWAY_URL DATA_DIR ACCOUNT AMOUNT [KIND]

The terminal's credential comes in the environment (CASHIER_TERMINAL_TOKEN), as a till's would.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from tests.desktop.conftest import CASHIER, CASHIER_PIN, FAST

    from gateway.client import GatewayLedger
    from tests.desktop.conftest import TILL_TIMEOUT_S

    url, data_dir, account, amount = sys.argv[1:5]
    kind = sys.argv[5] if len(sys.argv) > 5 else "deduct"
    app = QApplication([])
    ledger = GatewayLedger([url], os.environ["CASHIER_TERMINAL_TOKEN"], timeout_s=TILL_TIMEOUT_S)
    engine = Engine(ledger, "T9", Path(data_dir), **FAST)
    window = MainWindow(engine)
    window.show()
    engine.start()
    go_file = Path(data_dir) / "go"
    state = {"charged": False, "warm": None}

    def step():
        page = window.sale_page
        if window.stack.currentWidget() is not window.sale_page:
            if not window.sign_in_page._busy and engine.state == "online":
                window.sign_in_page.cashier_input.setText(CASHIER)
                window.sign_in_page.pin_input.setText(CASHIER_PIN)
                window.sign_in_page.submit()
            return
        if state["warm"] is None:
            # One answered sale first, so that the next request on the wire is the charge.
            page.account_input.setText("K-0")
            page.amount_input.setText("0.01")
            page.charge()
            state["warm"] = "sent"
            return
        if page.busy_txn is not None and not state["charged"]:
            return
        if not go_file.exists():
            print("READY", flush=True) if not state.get("ready") else None
            state["ready"] = True
            return
        if not state["charged"]:
            state["charged"] = True
            page.account_input.setText(account)
            page.amount_input.setText(amount)
            page.hold() if kind == "hold" else page.charge()

    engine.opUncertain.connect(lambda op: print(f"PENDING {op.txn_id}", flush=True))
    timer = QTimer(interval=50, timeout=step)
    timer.start()
    app.exec()


if __name__ == "__main__":
    main()
