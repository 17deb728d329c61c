"""Issue 26 (the till, third pass): money never goes to a customer who is not on screen,
dialogs open with the right field focused and Enter doing the right thing, the
customer display never takes the keyboard. Offscreen pytest-qt, real Redis (db 3)."""
from __future__ import annotations

from dataclasses import replace

from desktop.receipts.model import Receipt, ReceiptContext, plain_text

ZH = ReceiptContext("星光便利店", "", "T1", "c1", "李娜", "zh_CN")
EN = replace(ZH, shop_name="Starlight Store", language="en")


# ---------------------------------------------------------------- item 4: the 退卡 slip

def _close_slip(ctx) -> str:
    receipt = Receipt("T1-x-0123456789abcdef0123456789abcdef", "close", "M-1002", 23000, 0,
                      1_796_000_000_000, ctx, principal_delta_minor=-23000, bonus_delta_minor=-2000)
    return plain_text(receipt, 48)


def test_close_slip_pays_out_the_principal_and_forfeits_the_bonus_on_its_own_line():
    text = _close_slip(EN)
    paid = [line for line in text.splitlines() if line.startswith("Paid out")]
    assert len(paid) == 1 and paid[0].endswith("¥230.00")
    assert "of which" not in text                      # the bonus was never paid out
    forfeited = [line for line in text.splitlines() if line.startswith("Bonus forfeited")]
    assert len(forfeited) == 1 and forfeited[0].endswith("¥20.00")
    zh = _close_slip(ZH)
    assert "其中赠送" not in zh and "其中本金" not in zh
    assert any(line.startswith("赠送金额作废") and line.endswith("¥20.00") for line in zh.splitlines())
