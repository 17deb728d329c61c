"""Renders the docs' receipt and customer-display pictures into docs/screenshots/:
a sale receipt in English (80 mm) and in Chinese (80 mm), a refund slip (58 mm, Chinese,
marked REPRINT), and the customer display showing an amount and then a result.
Offscreen, no Redis needed (the pictures are drawn from receipts and answers as the
terminal builds them):

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/receipt_screenshots.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from desktop.customer_display import CustomerDisplay
    from desktop.outbox import RESOLVED, Op
    from desktop.receipts.model import Receipt, ReceiptContext
    from desktop.receipts.preview import save_png

    app = QApplication.instance() or QApplication([])
    out = ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    when_ms = 1_796_133_780_000          # 2026-12-01 14:03 UTC
    txn = "T1-d-5f0c2a9e8b7d4c3f9a1e6b2d7c4f8a10"
    zh = ReceiptContext("星光便利店", "北京市朝阳区建国路88号", "T1", "c1", "李娜", "zh_CN")
    en = ReceiptContext("Starlight Store", "88 Jianguo Road, Beijing", "T1", "c1", "Li Na", "en")
    sale = dict(txn_id=txn, kind="deduct", account_id="6222020200112233", amount_minor=3250,
                balance_after_minor=16_750, occurred_ms=when_ms, principal_delta_minor=-2750,
                bonus_delta_minor=-500)
    save_png(Receipt(**sale, context=en), out / "receipt-en.png", 80)
    save_png(Receipt(**sale, context=zh), out / "receipt-zh_CN.png", 80)
    refund = Receipt("T2-r-0b9e4d1c7a2f4e8d9c3b6a5f1e2d7c8b", "refund", "6222020200112233", 1200, 17_950,
                     when_ms + 86_400_000, ReceiptContext(zh.shop_name, zh.shop_address, "T2", "sup", "王伟",
                                                          "zh_CN"),
                     original_txn_id=txn, approved_by="sup", reprint=True)
    save_png(refund, out / "receipt-refund-zh_CN.png", 58)

    display = CustomerDisplay("星光便利店", "zh_CN")
    display.resize(800, 480)
    display.show()
    display.show_amount(3250)
    app.processEvents()
    display.grab().save(str(out / "customer-display-amount.png"))
    display.show_result(Op(txn, "deduct", "6222020200112233", 3250, "T1", "c1", 1, when_ms,
                           state=RESOLVED, status="APPLIED", balance_after_minor=16_750))
    app.processEvents()
    display.grab().save(str(out / "customer-display-result.png"))
    display.close()
    for name in ("receipt-en.png", "receipt-zh_CN.png", "receipt-refund-zh_CN.png",
                 "customer-display-amount.png", "customer-display-result.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
