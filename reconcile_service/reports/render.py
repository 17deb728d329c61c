"""Rendering the reports as text (a terminal), CSV (a spreadsheet; UTF-8 with a BOM so
Excel opens Chinese correctly) and PDF (fpdf2, with the Noto Sans CJK font of Debian's
fonts-noto-cjk so Chinese prints), in English (`en`) or Chinese (`zh_CN`). Amounts in
yuan with two decimals (core.money.format_minor); times in the shop's time zone.

Liability rows are signed as they count: what takes from the liability (spent, paid out
on a card close) is negative, so opening + the rows = closing, line by line.
"""
from __future__ import annotations

import csv
import io
import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from core.members import PAYMENT_METHODS
from core.money import format_minor

from .book import Liability, Statement

LANGS = ("en", "zh_CN")
CJK_FONT_PATHS = ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                  "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf")
CJK_SC_INDEX = 2     # "Noto Sans CJK SC" in the collection

LABELS = {
    "en": {
        "liability_title": "Stored-value liability", "period": "Period", "generated": "Generated",
        "item": "Item", "principal": "Principal", "bonus": "Bonus", "total": "Total",
        "opening": "Opening balance", "topup": "Top-ups", "bonus_granted": "Bonus granted",
        "spent": "Spent", "refunds": "Refunds", "closes": "Card closes (paid out / bonus forfeited)",
        "corrections": "Corrections", "other": "Other", "closing": "Closing balance",
        "check": "Check: sum of account balances at period end", "ok": "OK", "mismatch": "MISMATCH",
        "entries": "Entries in period", "m_cash": "cash", "m_wechat": "WeChat Pay", "m_alipay": "Alipay",
        "m_bank_card": "bank card", "m_other": "other method", "m_unspecified": "method not recorded",
        "m_import": "imported from the old system",
        "statement_title": "Account statement", "account": "Account", "holder": "Holder", "status": "Status",
        "time": "Time", "terminal": "Terminal", "cashier": "Cashier", "kind": "Kind", "amount": "Amount",
        "balance_after": "Balance after", "txn": "Txn", "method": "Method", "duplicate": "applied twice",
        "balance_now": "Balance in the database now",
        "shifts_title": "Shift closes", "shift": "Shift", "closed_by": "Closed by", "opened": "Opened",
        "closed": "Closed", "sales": "Sales", "refunds_col": "Refunds", "topups": "Top-ups", "count": "n",
        "none": "none", "topups_by_method": "Top-ups by method", "cash_expected": "Cash expected",
        "debts_title": "Open offline debts", "made_at": "Sold offline", "settled_at": "Settled",
        "debt_left": "Debt left", "debt_open": "Open debt of the account",
        "spent_split": "Spent principal / bonus", "float": "Float", "cash_in_out": "Cash in / out",
        "counted": "Counted", "over_short": "Over / short",
        "discrepancies_title": "Open discrepancies", "id": "ID", "found": "Found", "cause": "Cause",
        "evidence": "Evidence", "chain_head": "Chain head (partition: row, hash)",
        # the back-office page's dashboard and charts
        "home": "Home", "dashboard": "Today", "charts": "Charts", "today": "Today",
        "sales_today": "Sales (spent)", "topups_today": "Top-ups", "liability_now": "Liability at the end of today",
        "chart_sales": "Daily sales", "chart_topups": "Top-ups by method and bonus granted",
        "chart_liability": "Liability over time", "chart_tills": "Per terminal and per cashier",
        "chart_members": "Top members", "chart_promotions": "Promotions' cost",
        "by_day": "Day", "by_week": "Week", "by_month": "Month",
        "spent_principal": "Spent from principal", "spent_bonus": "Spent from bonus",
        "closing_principal": "Principal owed", "closing_bonus": "Bonus outstanding",
        "topups_with_bonus": "Top-ups that earned a bonus", "topups_without_bonus": "Top-ups without bonus",
        "bonus_per_100": "Bonus per ¥100 topped up", "by_terminal": "Sales per terminal",
        "by_cashier": "Sales per cashier", "top_members": "Members who spent most", "member": "Member",
        "tills_seen": "Tills in the book today", "last_entry": "Last entry", "open_discrepancies": "Open discrepancies",
        "all_discrepancies": "all", "period_shown": "Periods shown", "no_terminal": "(no terminal)",
        "no_cashier": "(no cashier)", "entries_n": "Entries",
        # split-tender sales (issue 31)
        "spent_sale_card": "Spent: card legs of split-tender sales", "split_tenders": "Split sales: card / other tenders",
        "m_card": "card", "change": "change", "given_back": "given back",
        "other_tenders": "Split sales paid besides the card (not stored value)",
    },
    "zh_CN": {
        "liability_title": "储值负债表", "period": "期间", "generated": "生成时间",
        "item": "项目", "principal": "本金", "bonus": "赠送金", "total": "合计",
        "opening": "期初余额", "topup": "充值", "bonus_granted": "赠送金发放",
        "spent": "消费", "refunds": "退款", "closes": "销卡（退还本金 / 作废赠送金）",
        "corrections": "更正", "other": "其他", "closing": "期末余额",
        "check": "核对：期末全部账户余额之和", "ok": "一致", "mismatch": "不一致",
        "entries": "期间流水笔数", "m_cash": "现金", "m_wechat": "微信支付", "m_alipay": "支付宝",
        "m_bank_card": "银行卡", "m_other": "其他方式", "m_unspecified": "未记录支付方式",
        "m_import": "从旧系统导入",
        "statement_title": "账户对账单", "account": "账户", "holder": "持卡人", "status": "状态",
        "time": "时间", "terminal": "终端", "cashier": "收银员", "kind": "类型", "amount": "金额",
        "balance_after": "交易后余额", "txn": "交易号", "method": "支付方式", "duplicate": "重复入账",
        "balance_now": "数据库当前余额",
        "shifts_title": "交班记录", "shift": "班次", "closed_by": "交班人", "opened": "开班",
        "closed": "交班", "sales": "消费", "refunds_col": "退款", "topups": "充值", "count": "笔",
        "none": "无", "topups_by_method": "充值（按支付方式）", "cash_expected": "应有现金",
        "debts_title": "未结离线欠款", "made_at": "离线消费时间", "settled_at": "结算时间",
        "debt_left": "产生欠款", "debt_open": "账户未结欠款",
        "spent_split": "消费 本金 / 赠送金", "float": "备用金", "cash_in_out": "存入 / 取出现金",
        "counted": "实点现金", "over_short": "长短款",
        "discrepancies_title": "未解决差异", "id": "编号", "found": "发现时间", "cause": "原因",
        "evidence": "证据", "chain_head": "链头（分区：行号，哈希）",
        "home": "首页", "dashboard": "今日", "charts": "图表", "today": "今日",
        "sales_today": "销售（消费）", "topups_today": "充值", "liability_now": "今日结束时的负债",
        "chart_sales": "每日销售", "chart_topups": "充值（按支付方式）与赠送金",
        "chart_liability": "负债走势", "chart_tills": "按终端与收银员",
        "chart_members": "消费最多的会员", "chart_promotions": "促销成本",
        "by_day": "日", "by_week": "周", "by_month": "月",
        "spent_principal": "消费 本金", "spent_bonus": "消费 赠送金",
        "closing_principal": "应付本金", "closing_bonus": "未用赠送金",
        "topups_with_bonus": "带赠送的充值", "topups_without_bonus": "无赠送的充值",
        "bonus_per_100": "每充值¥100赠送", "by_terminal": "各终端销售",
        "by_cashier": "各收银员销售", "top_members": "消费最多的会员", "member": "会员",
        "tills_seen": "今日账本中的终端", "last_entry": "最后一笔", "open_discrepancies": "未解决差异",
        "all_discrepancies": "全部", "period_shown": "显示期间", "no_terminal": "（无终端）",
        "no_cashier": "（无收银员）", "entries_n": "笔数",
        "spent_sale_card": "消费：组合支付的储值卡部分", "split_tenders": "组合支付：储值卡 / 其他支付",
        "m_card": "储值卡", "change": "找零", "given_back": "已退",
        "other_tenders": "组合支付中储值卡以外的支付（不计入储值）",
    },
}
KIND_LABELS = {"zh_CN": {"open": "开户", "credit": "充值", "deduct": "消费", "capture": "预授权完成",
                         "refund": "退款", "compensate": "更正", "close": "销卡", "hold": "预授权",
                         "void": "预授权撤销", "hold_expire": "预授权过期", "freeze": "冻结",
                         "unfreeze": "解冻", "restore": "恢复", "member_update": "修改会员资料", "offline": "离线消费",
                         "offline_debt": "离线消费（欠款）"}}


def label(lang: str, key: str) -> str:
    return LABELS[lang].get(key, key)


def method_label(lang: str, method: str) -> str:
    return LABELS[lang].get(f"m_{method}", method)


def kind_label(lang: str, kind: str) -> str:
    return KIND_LABELS.get(lang, {}).get(kind, kind)


def yuan(minor: int | None) -> str:
    return "" if minor is None else format_minor(minor)


def money(minor: int | None) -> str:
    """¥1,234.56 (the page's way; exact, formatted only here)."""
    if minor is None:
        return ""
    whole, cents = divmod(abs(int(minor)), 100)
    return f"{'-' if minor < 0 else ''}¥{whole:,}.{cents:02d}"


def local(ts: datetime | None, zone: ZoneInfo) -> str:
    if ts is None:
        return ""
    t = ts.astimezone(zone)      # formatted by hand: strftime costs a statement page ~10 ms
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"


# ---------------------------------------------------------------- tables

def liability_table(rep: Liability, lang: str, zone: ZoneInfo) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, footer lines) of a liability report."""
    L = lambda k: label(lang, k)
    rows = [[L("opening"), yuan(rep.opening[0]), yuan(rep.opening[1]), yuan(sum(rep.opening))]]
    for line in rep.lines:
        name = L(line.key) + (f" ({method_label(lang, line.detail)})" if line.detail else "")
        p, b = line.signed()
        rows.append([name, yuan(p), yuan(b), yuan(p + b)])
    rows.append([L("closing"), yuan(rep.closing[0]), yuan(rep.closing[1]), yuan(sum(rep.closing))])
    at_end = rep.balances_at_end
    rows.append([L("check"), yuan(at_end[0]), yuan(at_end[1]), yuan(sum(at_end))])
    footer = [f"{L('period')}: {local(rep.start, zone)} .. {local(rep.end, zone)} ({zone.key})",
              f"{L('entries')}: {rep.entries}"]
    if rep.chain_heads:     # the book's heads on paper (reconcile_service/anchors.py)
        footer.append(f"{L('chain_head')}: " + "  ".join(
            f"{h['journal_partition']}: {h['chain_seq']} {h['hash_digits']}" for h in rep.chain_heads))
    if rep.other_tenders:    # split sales' other tenders: money taken, not stored value
        footer.append(f"{L('other_tenders')}: " + "; ".join(
            f"{L('m_' + m)} {yuan(a)}" for m, a in rep.other_tenders.items()))
    # the check line last: the back-office page shows footer[-1] as the verdict
    footer.append(f"{L('check')}: {L('ok') if rep.balanced else L('mismatch')}")
    return [L("item"), L("principal"), L("bonus"), L("total")], rows, footer


def statement_table(st: Statement, lang: str, zone: ZoneInfo) -> tuple[list[str], list[list[str]], list[str]]:
    L = lambda k: label(lang, k)
    header = [L("time"), L("terminal"), L("cashier"), L("kind"), L("amount"), L("principal"), L("bonus"),
              L("balance_after"), L("method"), L("txn")]
    rows = [[local(r["occurred_at"], zone), r["terminal_id"] or "", r["cashier_id"] or "",
             kind_label(lang, r["kind"]) + (f" ({L('duplicate')})" if r["duplicate"] else ""),
             yuan(r["amount_minor"]), yuan(r["principal_delta_minor"]), yuan(r["bonus_delta_minor"]),
             yuan(r["balance_after_minor"]), method_label(lang, r["method"]) if r["method"] else "", r["txn_id"]]
            for r in st.rows]
    footer = [f"{L('account')}: {st.account_id}  {L('holder')}: {st.holder_name or ''}  {L('status')}: {st.status}",
              f"{L('period')}: {local(st.start, zone) or '-'} .. {local(st.end, zone) or '-'} ({zone.key})",
              f"{L('opening')}: {yuan(st.opening_minor)}  {L('closing')}: {yuan(st.closing_minor)}  "
              f"{L('balance_now')}: {yuan(st.balance_minor)}"]
    return header, rows, footer


def debts_table(rows: list[dict], lang: str, zone: ZoneInfo) -> tuple[list[str], list[list[str]], list[str]]:
    L = lambda k: label(lang, k)
    header = [L("account"), L("txn"), L("terminal"), L("cashier"), L("made_at"), L("settled_at"), L("debt_left"),
              L("debt_open")]
    body = [[r["account_id"], r["txn_id"], r["terminal_id"] or "", r["cashier_id"] or "", local(r["made_at"], zone),
             local(r["occurred_at"], zone), yuan(r["debt_delta_minor"]), yuan(r["open_minor"])] for r in rows]
    accounts = {r["account_id"]: r["open_minor"] for r in rows}
    return header, body, [f"{L('debts_title')}: {len(accounts) or L('none')}"
                          + (f" ({yuan(sum(accounts.values()))})" if accounts else "")]


def shifts_table(rows: list[dict], lang: str, zone: ZoneInfo) -> tuple[list[str], list[list[str]], list[str]]:
    L = lambda k: label(lang, k)
    header = [L("terminal"), L("shift"), L("cashier"), L("closed_by"), L("opened"), L("closed"),
              f"{L('sales')} ({L('count')})", L("sales"), f"{L('refunds_col')} ({L('count')})", L("refunds_col"),
              f"{L('topups')} ({L('count')})", L("topups")]
    header += [L("topups_by_method"), L("bonus_granted"), L("spent_split"), L("float"), L("cash_in_out"),
               L("cash_expected"), L("counted"), L("over_short"), L("split_tenders")]
    body = [[r["terminal_id"], str(r["shift_no"]), r["cashier_id"] or "", r["closed_by"],
             local(r["opened_at"], zone), local(r["closed_at"], zone), str(r["sales_count"]), yuan(r["sales_minor"]),
             str(r["refunds_count"]), yuan(r["refunds_minor"]), str(r["topups_count"]), yuan(r["topups_minor"])]
            + _shift_member_cells(r["record"], L) for r in rows]
    return header, body, [f"{L('shifts_title')}: {len(rows) or L('none')}"]


def _shift_member_cells(record: dict, L) -> list[str]:
    """The member and drawer totals a terminal put in its Z record (issue 14: top-ups per
    payment method, bonus granted, spending per bucket; issue 26: the drawer's opening
    float, cash in / out, cash expected, counted and over/short, positive when over);
    blank where a record made before them lacks one."""
    by_method = "; ".join(f"{L('m_' + m)} {yuan(record[f'topups_{m}_minor'])}"
                          for m in PAYMENT_METHODS if record.get(f"topups_{m}_minor"))
    cell = lambda k: yuan(record[k]) if isinstance(record.get(k), int) else ""
    split = (f"{yuan(record['spent_principal_minor'])} / {yuan(record['spent_bonus_minor'])}"
             if isinstance(record.get("spent_principal_minor"), int) and isinstance(record.get("spent_bonus_minor"), int)
             else "")
    in_out = (f"{yuan(record['cash_in_minor'])} / {yuan(record['cash_out_minor'])}"
              if isinstance(record.get("cash_in_minor"), int) and isinstance(record.get("cash_out_minor"), int)
              else "")
    return [by_method, cell("bonus_granted_minor"), split, cell("drawer_float_minor"), in_out,
            cell("cash_expected_minor"), cell("drawer_counted_minor"), cell("over_short_minor"),
            _split_tender_cell(record, L)]


def _split_tender_cell(record: dict, L) -> str:
    """Split-tender sales of a Z record (issue 31, core.sales Z_* keys): the card legs, each
    other tender, the change handed back and what was given back per tender; '' when none."""
    parts = []
    if isinstance(record.get("sale_card_minor"), int) and record["sale_card_minor"]:
        parts.append(f"{L('m_card')} {yuan(record['sale_card_minor'])}")
    parts += [f"{L('m_' + m)} {yuan(record[f'tenders_{m}_minor'])}" for m in PAYMENT_METHODS
              if isinstance(record.get(f"tenders_{m}_minor"), int) and record[f"tenders_{m}_minor"]]
    if isinstance(record.get("change_minor"), int) and record["change_minor"]:
        parts.append(f"{L('change')} {yuan(record['change_minor'])}")
    parts += [f"{L('given_back')} {L('m_' + m)} {yuan(record[f'tender_refunds_{m}_minor'])}" for m in PAYMENT_METHODS
              if isinstance(record.get(f"tender_refunds_{m}_minor"), int) and record[f"tender_refunds_{m}_minor"]]
    return "; ".join(parts)


def discrepancies_table(rows: list[dict], lang: str, zone: ZoneInfo) -> tuple[list[str], list[list[str]], list[str]]:
    import json
    L = lambda k: label(lang, k)
    header = [L("id"), L("kind"), L("account"), L("txn"), L("found"), L("status"), L("cause"), L("evidence")]
    body = [[str(r["id"]), r["kind"], r["account_id"] or "", r["txn_id"] or "", local(r["found_at"], zone),
             r["status"], r["cause"], json.dumps(r["evidence"], ensure_ascii=False, sort_keys=True)]
            for r in rows]
    return header, body, [f"{L('discrepancies_title')}: {len(rows) or L('none')}"]


BREAKDOWN_SECTIONS = ("spent", "refunds", "topup", "bonus_granted")


def breakdown_table(sums: dict, by: str, lang: str) -> tuple[list[str], list[list[str]], list[str]]:
    """A period's sums per terminal / cashier / promotion (book.breakdown): spent (from
    both buckets, positive), refunds, top-ups' principal, bonus granted, entries."""
    L = lambda k: label(lang, k)
    first = {"terminal": L("terminal"), "cashier": L("cashier"), "promotion": L("item")}[by]
    header = [first, L("sales"), L("spent_principal"), L("spent_bonus"), L("refunds"), L("topups"),
              L("bonus_granted"), L("entries_n")]
    rows = []
    for key in sorted(sums):
        v = sums[key]
        get = lambda s, i: v.get(s, [0, 0, 0])[i]
        name = L(f"topups_{key}") if by == "promotion" else (key or L(f"no_{by}"))
        rows.append([name, yuan(-get("spent", 0) - get("spent", 1)), yuan(-get("spent", 0)), yuan(-get("spent", 1)),
                     yuan(get("refunds", 0) + get("refunds", 1)), yuan(get("topup", 0)), yuan(get("topup", 1)),
                     str(sum(x[2] for x in v.values()))])
    return header, rows, [f"{first}: {len(rows) or L('none')}"]


def members_table(rows: list[dict], lang: str) -> tuple[list[str], list[list[str]], list[str]]:
    L = lambda k: label(lang, k)
    header = [L("account"), L("holder"), L("spent"), L("principal"), L("bonus"), L("count")]
    body = [[r["account_id"], r["holder_name"] or "", yuan(r["spent_minor"]), yuan(r["principal_minor"]),
             yuan(r["bonus_minor"]), str(r["entries"])] for r in rows]
    return header, body, [f"{L('top_members')}: {len(rows) or L('none')}"]


# ---------------------------------------------------------------- formats

def as_text(title: str, header: list[str], rows: list[list[str]], footer: list[str]) -> str:
    from unicodedata import east_asian_width
    width = lambda s: sum(2 if east_asian_width(c) in "WF" else 1 for c in s)
    cols = [max([width(h)] + [width(r[i]) for r in rows]) for i, h in enumerate(header)]
    cols = [min(c, 60) for c in cols]

    def fmt(cells):
        out = []
        for i, c in enumerate(cells):
            c = c if width(c) <= 60 else c[:57] + "..."
            pad = " " * max(0, cols[i] - width(c))
            out.append(pad + c if i and _numeric(c) else c + pad)
        return "  ".join(out).rstrip()
    lines = [title, "", fmt(header), "  ".join("-" * c for c in cols)]
    lines += [fmt(r) for r in rows]
    lines += [""] + footer
    return "\n".join(lines) + "\n"


def _numeric(text: str) -> bool:
    return bool(text) and text.lstrip("-").replace(".", "", 1).isdigit()


def as_csv(header: list[str], rows: list[list[str]], footer: list[str]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(header)
    w.writerows(rows)
    for line in footer:
        w.writerow([line])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def cjk_font() -> str | None:
    override = os.environ.get("CASHIER_REPORT_FONT")
    for path in ((override,) if override else ()) + CJK_FONT_PATHS:
        if path and Path(path).exists():
            return path
    return None


def _cells_wide(text: str) -> int:
    """How many Latin-letter widths `text` takes: a Chinese character takes two (a column
    sized by len() alone is too narrow for one and the PDF cannot be drawn)."""
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def as_pdf(title: str, header: list[str], rows: list[list[str]], footer: list[str]) -> bytes:
    """A landscape A4 table. Without the CJK font (fonts-noto-cjk) only Latin text prints,
    so a Chinese report then refuses with a clear message instead of boxes."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos
    from fpdf.fonts import FontFace

    font = cjk_font()
    text = "".join([title, *header, *footer, *(c for r in rows for c in r)])
    if font is None and any(ord(c) > 0xFF for c in text):
        raise RuntimeError("PDF with Chinese text needs the Noto Sans CJK font: install fonts-noto-cjk "
                           "(or set CASHIER_REPORT_FONT to an OTF/TTC with CJK glyphs)")
    pdf = FPDF(orientation="L", unit="mm", format="A4")
    pdf.set_auto_page_break(True, margin=12)
    if font:
        pdf.add_font("cjk", fname=font, collection_font_number=CJK_SC_INDEX if font.endswith(".ttc") else 0)
        family = "cjk"
    else:
        family = "helvetica"
    pdf.add_page()
    pdf.set_font(family, size=14)
    pdf.cell(0, 8, title, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font(family, size=8)
    usable = pdf.w - pdf.l_margin - pdf.r_margin
    weights = [max(4, _cells_wide(h), *(min(_cells_wide(r[i]), 40) for r in rows)) for i, h in enumerate(header)]
    scale = usable / max(1, sum(weights))
    widths = [w * scale for w in weights]
    with pdf.table(col_widths=widths, text_align=["LEFT" if not rows or not _numeric(rows[0][i]) else "RIGHT"
                                                   for i in range(len(header))],
                   line_height=4.5, first_row_as_headings=True,
                   headings_style=FontFace(emphasis=None, fill_color=(225, 230, 240))) as table:
        table.row(header)
        for r in rows:
            table.row(r)
    pdf.ln(3)
    for line in footer:
        pdf.multi_cell(0, 5, line, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    return bytes(pdf.output())


def render(kind: str, fmt: str, title: str, table: tuple[list[str], list[list[str]], list[str]]) -> bytes:
    header, rows, footer = table
    if fmt == "csv":
        return as_csv(header, rows, footer)
    if fmt == "pdf":
        return as_pdf(title, header, rows, footer)
    return as_text(title, header, rows, footer).encode("utf-8")
