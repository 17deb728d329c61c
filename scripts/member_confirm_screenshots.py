"""Screenshots of the member's own confirmation at the till (issue 31 items 6 and 7) into
docs/screenshots/: the member-PIN dialog (asked, and after a wrong PIN) in English and
Chinese, the customer display showing the amount to confirm, and the member-code
enrolment showing its QR once. A private redis-server, a ledger gateway in this process
in front of it, offscreen:

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/member_confirm_screenshots.py
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

    from core import Ledger
    from core.cashiers import CashierRegistry
    from desktop import i18n
    from desktop.customer_display import CustomerDisplay
    from desktop.engine import Engine
    from desktop.engine_confirm import ConfirmationRefusal
    from desktop.main_window import MainWindow
    from desktop.member_confirm import MemberPinDialog, refusal_words
    from desktop.member_security import MemberCodeEnrolDialog
    from desktop.outbox import Op
    from tests.support.gateway import InProcessGateway
    from tests.support.servers import RedisServer

    app = QApplication.instance() or QApplication(["cashier-terminal"])
    out = ROOT / "docs" / "screenshots"

    def settle(until=lambda: True, timeout_s: float = 10) -> None:
        deadline = time.monotonic() + timeout_s
        while not until() and time.monotonic() < deadline:
            app.processEvents()
        for _ in range(20):
            QCoreApplication.processEvents()

    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger.from_url(server.url)
        ledger.init()
        registry = CashierRegistry(ledger.client)
        registry.add("c1", "Li Na", "1234", can_top_up=True)
        registry.add("sup", "Wang Wei", "9876", supervisor=True)
        assert ledger.open_account("M-000000000931", txn_id="o-931", holder_name="李娜").applied
        gateway = InProcessGateway(server.url).start()
        engine = Engine(gateway.till_ledger("T1"), "T1", Path(tmp) / "till")
        window = MainWindow(engine)
        window.resize(1024, 740)
        engine.start()
        signed = []
        engine.sign_in("c1", "1234", signed.append, signed.append)
        settle(lambda: bool(signed))
        for lang in ("en", "zh_CN"):
            i18n.install(lang)
            dialog = MemberPinDialog(8_650, "deduct", parent=window)
            dialog.show()
            dialog.pin_input.setText("246")
            settle()
            dialog.grab().save(str(out / f"member-pin-dialog-{lang}.png"))
            dialog.close()
            dialog = MemberPinDialog(8_650, "deduct", refusal_words(ConfirmationRefusal("pin", "wrong_pin", 3)),
                                     parent=window)
            dialog.show()
            settle()
            dialog.grab().save(str(out / f"member-pin-wrong-{lang}.png"))
            dialog.close()
            enrol = MemberCodeEnrolDialog(engine, "M-000000000931", window)
            enrol.show()
            enrol.supervisor_input.setText("sup")
            enrol.pin_input.setText("9876")
            enrol.confirm()
            settle(lambda: enrol.enrolled)
            enrol.grab().save(str(out / f"member-code-qr-{lang}.png"))
            enrol.close()
        i18n.install("en")
        display = CustomerDisplay("星光便利店", "zh_CN")
        display.show()
        display.show_confirm(Op("T1-d-shot", "deduct", "M-000000000931", 8_650, "T1", "c1", 1, 0))
        settle()
        display.grab().save(str(out / "customer-display-confirm.png"))
        display.close()
        engine.close()
        gateway.stop()
        ledger.close()
    print("wrote docs/screenshots/member-pin-{dialog,wrong}-*.png, member-code-qr-*.png, customer-display-confirm.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
