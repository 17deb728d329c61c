"""Renders the docs' cash-drawer pictures into docs/screenshots/: the Z slip (58 mm,
Chinese) and the X slip (80 mm, English) as the receipt printer prints them, and the
Cash in / cash out dialog, the close-shift dialog with the drawer counted (short) and
the X report, in English and Chinese. Offscreen, no Redis needed: the shift's figures
are rows of a throw-away outbox, the report is built from them as the terminal does:

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/drawer_screenshots.py
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class _Till:
    """What the drawer's dialogs read of the engine: its outbox."""

    def __init__(self, outbox):
        self.outbox = outbox


def main() -> int:
    from dataclasses import replace

    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from desktop import i18n
    from desktop.drawer import CashMoveDialog
    from desktop.outbox import Op, Outbox
    from desktop.receipts.preview import render_items
    from desktop.receipts.shift_slip import slip_layout
    from desktop.report import CloseShiftDialog, ShiftReportDialog, build_report
    from desktop.style import style_sheet

    app = QApplication.instance() or QApplication([])
    app.setStyleSheet(style_sheet(1.0))
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        outbox = Outbox(Path(tmp) / "outbox.sqlite3")
        shift = outbox.open_shift("T1", "c1")
        sid, t0 = shift.shift_id, shift.opened_ms
        outbox.add_drawer(sid, "float", 50_000, "c1")
        for i, (kind, account, amount, method) in enumerate((
                ("deduct", "M-0001", 3_250, ""), ("deduct", "M-0002", 12_800, ""),
                ("credit", "M-0003", 20_000, "cash"), ("credit", "M-0001", 10_000, "wechat"))):
            op = Op(f"T1-{kind[0]}-{i}", kind, account, amount, "T1", "c1", sid, t0 + i, method=method)
            outbox.add(op)
            outbox.resolve(op.txn_id, "APPLIED", 10_000)
        outbox.add_drawer(sid, "cash_in", 10_000, "c1", reason="change")
        outbox.add_drawer(sid, "cash_out", 30_000, "c1", reason="safe_drop", approved_by="sup")
        outbox.add_drawer(sid, "cash_out", 1_850, "c1", reason="expense", note="清洁用品")
        till = _Till(outbox)
        cashier = type("Cashier", (), {"cashier_id": "c1", "name": "李娜", "supervisor": False})()
        open_report = build_report(shift, outbox.ops_of_shift(sid), drawer=outbox.drawer_of_shift(sid))
        closed = replace(shift, closed_ms=t0 + 8 * 3_600_000, closed_by="c1")
        outbox.add_drawer(sid, "count", 48_000, "c1")
        closed_report = build_report(closed, outbox.ops_of_shift(sid), drawer=outbox.drawer_of_shift(sid))
        saved = []
        for name, report, columns, lang in (("drawer-z-slip-58mm-zh_CN.png", closed_report, 32, "zh_CN"),
                                            ("drawer-x-slip-80mm-en.png", open_report, 48, "en")):
            items = slip_layout(report, columns, lang, shop_name="星光便利店" if lang == "zh_CN" else "Starlight Store",
                                printed_ms=t0 + 4 * 3_600_000)
            render_items(items, columns).save(str(out / name), "PNG")
            saved.append(name)
        for lang in ("en", "zh_CN"):
            i18n.install(lang)
            cash = CashMoveDialog(till, shift, cashier, 20_000, direction="cash_out")
            cash.amount_input.setText("300.00")
            cash.reason_buttons["safe_drop"].setChecked(True)
            close = CloseShiftDialog(till, open_report, cashier, needs_supervisor=False)
            close.counted_input.setText("480.00")
            x_report = ShiftReportDialog(open_report)
            for dialog, name in ((cash, f"drawer-cash-out-{lang}.png"), (close, f"drawer-close-count-{lang}.png"),
                                 (x_report, f"drawer-x-report-{lang}.png")):
                dialog.show()
                QCoreApplication.processEvents()
                dialog._fit_height() if hasattr(dialog, "_fit_height") else None
                QCoreApplication.processEvents()
                dialog.grab().save(str(out / name))
                dialog.close()
                saved.append(name)
        outbox.close()
    i18n.install("en")
    for name in saved:
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
