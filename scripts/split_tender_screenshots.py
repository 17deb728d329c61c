"""Screenshots of the split-tender sale at the till (issue 31 items 1-5) into
docs/screenshots/, in English and Chinese: the split dialog (card part, the rest in cash,
cash handed over, the change shown large), the sale screen after a declined card leg
saying what the customer still owes, and the receipt of a split sale with every tender
and the change. A private redis-server, a ledger gateway in this process in front of it,
a real Engine and MainWindow (1024x768), offscreen:

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/split_tender_screenshots.py
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from desktop import i18n

    app = QApplication.instance() or QApplication(["cashier-terminal"])
    out = ROOT / "docs" / "screenshots"
    saved = []

    def settle(until=lambda: True, timeout_s: float = 10) -> None:
        deadline = time.monotonic() + timeout_s
        while not until() and time.monotonic() < deadline:
            app.processEvents()
        for _ in range(20):
            QCoreApplication.processEvents()

    def shot(widget, name: str) -> None:
        settle()
        widget.grab().save(str(out / name))
        saved.append(name)

    for lang in ("en", "zh_CN"):
        i18n.install(lang)
        _shoot(lang, settle, shot, saved)
    i18n.install("en")
    for name in saved:
        print(out / name)
    return 0


def _shoot(lang, settle, shot, saved) -> None:
    """One language: its own redis-server, gateway, till and shift."""
    from core import Ledger
    from core.cashiers import CashierRegistry
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.receipts.model import ReceiptContext, receipt_for_op
    from desktop.receipts.preview import save_png
    from tests.support.gateway import InProcessGateway
    from tests.support.servers import RedisServer

    out = ROOT / "docs" / "screenshots"
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger.from_url(server.url)
        ledger.init()
        CashierRegistry(ledger.client).add("c1", "Li Na", "1234", can_top_up=True)
        gateway = InProcessGateway(server.url).start()
        engine = Engine(gateway.till_ledger("T1"), "T1", Path(tmp) / "till")
        window = MainWindow(engine)
        window.resize(1024, 740)
        window.show()
        engine.start()
        page = window.sale_page
        window.sign_in_page.cashier_input.setText("c1")            # as the cashier does: opens a shift
        window.sign_in_page.pin_input.setText("1234")
        window.sign_in_page.sign_in_button.click()
        settle(lambda: window.stack.currentWidget() is page and engine.state == "online")
        settle(lambda: window.drawer_hook.float_dialog is not None and window.drawer_hook.float_dialog.isVisible(), 3)
        float_dialog = window.drawer_hook.float_dialog
        if float_dialog is not None and float_dialog.isVisible():
            float_dialog.amount_input.setText("200.00")
            float_dialog.confirm_button.click()
            settle(lambda: not float_dialog.isVisible())

        def split(account: str, bill: str):
            page.account_input.setText(account)
            page.look_up()
            settle(lambda: page._account is not None and page._account.account_id == account)
            page.amount_input.setText(bill)
            page.f1.activated.emit()                      # F1: the rest in cash
            settle(lambda: getattr(window, "split_dialog", None) is not None and window.split_dialog.isVisible())
            return window.split_dialog

        def pay(dialog):
            dialog.confirm_button.click()
            settle(lambda: not dialog.isVisible() and page.busy_txn is None)
            return [op for op in engine.outbox.ops_of_shift(window.shift.shift_id) if op.kind == "sale"][-1]

        paid, declined = "M-000000000930", "M-000000000931"
        assert ledger.open_account(paid, txn_id=f"o-{paid}", holder_name="王芳").applied
        assert ledger.credit(paid, 3_850, txn_id=f"c-{paid}").applied
        assert ledger.open_account(declined, txn_id=f"o-{declined}", holder_name="张伟").applied
        assert ledger.credit(declined, 1_000, txn_id=f"c-{declined}").applied
        # (1) card ¥38.50 + the rest in cash ¥13.50, ¥20.00 handed over: change ¥6.50
        dialog = split(paid, "52.00")
        dialog.tendered_input.setText("20.00")
        dialog.tendered_input.textEdited.emit("20.00")
        shot(dialog, f"split-tender-dialog-{lang}.png")
        op = pay(dialog)
        assert op.applied, op
        # (3) its receipt: the total, the card, the cash, the cash handed over, the change
        context = ReceiptContext(*(("星光便利店", "北京市朝阳区建国路88号", "T1", "c1", "李娜", "zh_CN")
                                   if lang == "zh_CN" else
                                   ("Starlight Store", "88 Jianguo Road, Beijing", "T1", "c1", "Li Na", "en")))
        save_png(receipt_for_op(op, context), out / f"split-tender-receipt-{lang}.png", 80)
        saved.append(f"split-tender-receipt-{lang}.png")
        # (2) a declined card leg: the balance dropped after the look-up, nothing is recorded
        dialog = split(declined, "52.00")
        assert ledger.deduct(declined, 900, txn_id=f"elsewhere-{declined}").applied
        op = pay(dialog)
        assert op.status == "INSUFFICIENT_FUNDS", op
        shot(window, f"split-tender-declined-{lang}.png")
        window.close()
        engine.close()
        gateway.stop()
        ledger.close()


if __name__ == "__main__":
    sys.exit(main())
