"""Takes the README's screenshots of the main window (English and Chinese) against
the real Redis (db 3, flushed first), offscreen: three charges (one declined), a hold
on the account on screen (so the balance line shows held and available amounts and the
hold panel offers Complete sale / Release hold), and an amount typed:

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.desktop.screenshots
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    import redis
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from core import Ledger
    from core.cashiers import CashierRegistry
    from desktop import i18n
    from desktop.engine import Engine
    from desktop.main_window import MainWindow

    url = "redis://127.0.0.1:6379/3"
    redis.Redis.from_url(url).flushdb()
    ledger = Ledger.from_url(url)
    ledger.init()
    ledger.open_account("6222020000001234", txn_id="shot-open-1", initial_minor=25800)
    ledger.open_account("6222020000005678", txn_id="shot-open-2", initial_minor=1200)
    CashierRegistry(ledger.client).add("c1", "Li Na", "1234", can_top_up=True)
    app = QApplication.instance() or QApplication([])
    from tests.support.gateway import InProcessGateway
    gateway = InProcessGateway(url).start()          # the till reaches Redis only through it

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait(cond, ms: int = 5000) -> None:
        for _ in range(ms // 20):
            if cond():
                return
            pump(20)
        raise TimeoutError

    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    for lang, name in (("en", "main-window.png"), ("zh_CN", "main-window-zh_CN.png")):
        i18n.install(lang)
        with tempfile.TemporaryDirectory() as tmp:
            engine = Engine(gateway.till_ledger("T1"), "T1", Path(tmp))
            window = MainWindow(engine)
            window.resize(1280, 800)
            window.show()
            engine.start()
            wait(lambda: engine.state == "online")
            window.sign_in_page.cashier_input.setText("c1")
            window.sign_in_page.pin_input.setText("1234")
            window.sign_in_page.submit()
            wait(lambda: window.stack.currentWidget() is window.sale_page)
            page = window.sale_page
            for account, amount in (("6222020000005678", "25.00"), ("6222020000001234", "36.80"),
                                    ("6222020000001234", "12.50")):
                page.account_input.setText(account)
                page.amount_input.setText(amount)
                page.charge()
                wait(lambda: page.busy_txn is None)
            page.account_input.setText("6222020000001234")       # a pre-authorised sale
            page.amount_input.setText("50.00")
            page.hold()
            wait(lambda: page.busy_txn is None)
            page.account_input.setText("6222020000001234")
            page.look_up()
            wait(lambda: page._account is not None and page._account.held_minor > 0)
            page.amount_input.setText("8.00")
            page.amount_input.setFocus()
            pump(200)
            window.grab().save(str(out / name))
            print(out / name)
            window.close()
            engine.close()
        redis.Redis.from_url(url).flushdb()
        ledger.init()
        ledger.open_account("6222020000001234", txn_id="shot-open-1", initial_minor=25800)
        ledger.open_account("6222020000005678", txn_id="shot-open-2", initial_minor=1200)
        CashierRegistry(ledger.client).add("c1", "Li Na", "1234", can_top_up=True)
    gateway.stop()
    redis.Redis.from_url(url).flushdb()
    QCoreApplication.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
