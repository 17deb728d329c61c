"""The words printed on a receipt and shown on the customer display, in English and
Simplified Chinese.

These are not Qt translations on purpose: the receipt's language and the customer's
language are settings of their own (a shop may print Chinese slips while the cashier's
screen is in English), so both texts are needed in one process at once. The cashier's
own screens keep using Qt's tr() and desktop/translations.
"""
from __future__ import annotations

LANGUAGES = ("en", "zh_CN")

_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "title.deduct": "SALE",
        "title.capture": "SALE (COMPLETED HOLD)",
        "title.refund": "REFUND SLIP",
        "title.credit": "TOP-UP",
        "title.close": "CARD CLOSED",
        "title.test": "*** TEST PRINT ***",
        "test_note": "Printer test: not a sale, no money moved",
        "reprint": "*** REPRINT ***",
        "time": "Time",
        "terminal": "Terminal",
        "cashier": "Cashier",
        "card": "Card",
        "amount": "Amount",
        "refund_amount": "Refunded",
        "paid_out": "Paid out",
        "from_principal": "  of which principal",
        "from_bonus": "  of which bonus",
        "bonus_forfeited": "Bonus forfeited",
        "method": "Paid by",
        "balance_after": "Balance after",
        "refund_of": "Refund of receipt",
        "approved_by": "Approved by",
        "receipt_number": "Receipt number",
        "thanks": "Thank you!",
        "keep": "Keep this slip for refunds",
        "method.cash": "Cash",
        "method.wechat": "WeChat Pay",
        "method.alipay": "Alipay",
        "method.bank_card": "Bank card",
        "method.other": "Other",
        # customer display
        "display.welcome": "Welcome",
        "display.to_pay": "To pay",
        "display.to_refund": "Refund",
        "display.to_top_up": "Top-up",
        "display.approved": "Paid",
        "display.refunded": "Refunded",
        "display.topped_up": "Topped up",
        "display.declined": "Not paid",
        "display.refund_declined": "Refund not done",
        "display.top_up_declined": "Top-up not done",
        "display.balance": "Balance",
        "display.checking": "Please wait…",
        "display.insufficient": "Balance too low",
        "display.frozen": "Card blocked: please ask the cashier",
        "display.other_decline": "Please ask the cashier",
    },
    "zh_CN": {
        "title.deduct": "消费小票",
        "title.capture": "消费小票（预授权完成）",
        "title.refund": "退款单",
        "title.credit": "充值小票",
        "title.close": "销卡凭证",
        "title.test": "*** 打印测试 ***",
        "test_note": "打印机测试：非交易小票，未发生任何金额",
        "reprint": "*** 重打 ***",
        "time": "时间",
        "terminal": "终端",
        "cashier": "收银员",
        "card": "卡号",
        "amount": "金额",
        "refund_amount": "退款金额",
        "paid_out": "退还本金",
        "from_principal": "  其中本金",
        "from_bonus": "  其中赠送",
        "bonus_forfeited": "赠送金额作废",
        "method": "支付方式",
        "balance_after": "余额",
        "refund_of": "原小票号",
        "approved_by": "审批人",
        "receipt_number": "小票号",
        "thanks": "谢谢惠顾！",
        "keep": "退款请保留此小票",
        "method.cash": "现金",
        "method.wechat": "微信支付",
        "method.alipay": "支付宝",
        "method.bank_card": "银行卡",
        "method.other": "其他",
        "display.welcome": "欢迎光临",
        "display.to_pay": "应付金额",
        "display.to_refund": "退款金额",
        "display.to_top_up": "充值金额",
        "display.approved": "支付成功",
        "display.refunded": "退款成功",
        "display.topped_up": "充值成功",
        "display.declined": "支付未成功",
        "display.refund_declined": "退款未成功",
        "display.top_up_declined": "充值未成功",
        "display.balance": "余额",
        "display.checking": "请稍候…",
        "display.insufficient": "余额不足",
        "display.frozen": "卡已冻结，请咨询收银员",
        "display.other_decline": "请咨询收银员",
    },
}


def language_of(setting: str | None) -> str:
    """'en' or 'zh_CN' (anything else, including 'system' resolved elsewhere, is English)."""
    return setting if setting in LANGUAGES else "en"


def text(lang: str, key: str) -> str:
    return _TEXTS[language_of(lang)].get(key) or _TEXTS["en"][key]
