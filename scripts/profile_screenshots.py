"""Screenshots of the member profile (Member… > Member profile…, issue 26 item 17) in
English and Chinese at 1024x768, into docs/screenshots/: a private redis-server, a ledger
gateway in this process in front of it, a member with two cards (one blocked), top-ups
by cash and WeChat and charges at two terminals.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/profile_screenshots.py
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
    from desktop.engine import Engine
    from desktop.member_profile import MemberProfileDialog
    from desktop.main_window import MainWindow
    from tests.support.gateway import InProcessGateway
    from tests.support.servers import RedisServer

    app = QApplication.instance() or QApplication(["cashier-terminal"])
    out = ROOT / "docs" / "screenshots"
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        ledger = Ledger.from_url(server.url)
        ledger.init()
        CashierRegistry(ledger.client).add("c1", "Li Na", "1234", can_top_up=True)
        assert ledger.open_account("M-000000000901", txn_id="o-901", holder_name="王芳", phone="13912345678").applied
        assert ledger.credit("M-000000000901", 20_000, txn_id="T2-c-1", bonus_minor=4_000, terminal_id="T2").applied
        assert ledger.credit("M-000000000901", 5_000, txn_id="T7-c-1", method="wechat", terminal_id="T7").applied
        for card in ("6222020000009011", "6222020000009012"):
            assert ledger.issue_card("M-000000000901", card, txn_id=f"card-{card}").applied
        assert ledger.block_card("6222020000009011", txn_id="block-9011", reason="lost").applied
        for i, (term, amount) in enumerate((("T7", 1_250), ("T2", 3_680), ("T7", 990))):
            assert ledger.deduct("M-000000000901", amount, txn_id=f"{term}-d-{i}", terminal_id=term).applied
        gateway = InProcessGateway(server.url).start()
        engine = Engine(gateway.till_ledger("T1"), "T1", Path(tmp) / "till")
        window = MainWindow(engine)
        window.resize(1024, 740)
        engine.start()
        signed = []
        engine.sign_in("c1", "1234", signed.append, signed.append)
        deadline = time.monotonic() + 10
        while not signed and time.monotonic() < deadline:
            app.processEvents()
        view = engine._view("M-000000000901")
        for lang in ("en", "zh_CN"):
            i18n.install(lang)
            dialog = MemberProfileDialog(engine, view, window)
            dialog.resize(760, 600)
            dialog.show()
            deadline = time.monotonic() + 10
            while dialog.profile is None and time.monotonic() < deadline:
                app.processEvents()
            for _ in range(20):
                QCoreApplication.processEvents()
            dialog.grab().save(str(out / f"member-profile-1024x768-{lang}.png"))
            dialog.close()
        i18n.install("en")
        engine.close()
        gateway.stop()
        ledger.close()
    print("wrote docs/screenshots/member-profile-1024x768-{en,zh_CN}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
