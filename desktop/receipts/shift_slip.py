"""The shift's slips on the receipt printer: the Z slip (a shift closed) and the X slip
(a shift still open: the figures so far, nothing closed), both from the shift report
(desktop/report.py): the operations by kind, the net, and the cash drawer (opening
float, cash top-ups, cash paid out on card closes, cash in, cash out, the cash expected
in the drawer and, once counted, the count and over/short), laid out for 58 mm (32
columns) or 80 mm (48 columns) paper as the receipt's Line / RULE items, in the
receipts' language (receipts/texts.py: the slips' words are the receipts', not Qt's).
"""
from __future__ import annotations

from datetime import datetime

from .. import money
from ..i18n import locale_of
from .model import RULE, Line, _pair, wrap
from .texts import language_of, text

SLIP_KINDS = ("deduct", "capture", "refund", "credit", "close")


def _when(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else "-"


def _counted(count: int, amount: str) -> str:
    """'(2) ¥160.50': ASCII only around the amount (a middle dot is one column here but
    two on a GB18030 printer, which would push the amount off the line)."""
    return f"({count}) {amount}"


def slip_layout(report, columns: int, language: str = "zh_CN", *, shop_name: str = "",
                printed_ms: int | None = None) -> list:
    """The Z slip (the report's shift closed) or X slip (still open) of `report`
    (desktop.report.ShiftReport) as Line / RULE items for `columns` columns."""
    lang = language_of(language)
    loc = locale_of(lang)
    t = lambda key: text(lang, key)  # noqa: E731
    fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
    shift = report.shift
    closed = shift.closed_ms is not None
    out: list = []
    if shop_name:
        out += [Line(part, "center", True, True) for part in wrap(shop_name, columns // 2)]
    out.append(RULE)
    out.append(Line(t("slip.z_title" if closed else "slip.x_title"), "center", True))
    out += _pair(t("terminal"), shift.terminal_id, columns)
    out += _pair(t("slip.shift"), str(shift.shift_id), columns)
    out += _pair(t("slip.opened"), _when(shift.opened_ms), columns)
    out += _pair(t("slip.opened_by"), shift.opened_by, columns)
    if closed:
        out += _pair(t("slip.closed"), _when(shift.closed_ms), columns)
        out += _pair(t("slip.closed_by"), (shift.closed_by or "").replace("+", " / "), columns)
    else:
        out += _pair(t("slip.printed"), _when(printed_ms), columns)
    out.append(RULE)
    for kind in SLIP_KINDS:
        tally = report.by_kind[kind]
        out += _pair(t(f"slip.kind.{kind}"), _counted(tally.count, fmt(tally.sum_minor)), columns)
    out += _pair(t("slip.declined"), str(report.declined_count), columns)
    out += _pair(t("slip.net"), fmt(report.net_minor), columns, bold=True)
    out.append(RULE)
    out.append(Line(t("slip.drawer"), "center", True))
    out += _pair(t("slip.float"), fmt(report.float_minor), columns)
    out += _pair(t("slip.cash_topups"), fmt(report.topups_by_method["cash"].sum_minor), columns)
    out += _pair(t("slip.closes_paid_out"), fmt(report.by_kind["close"].sum_minor), columns)
    out += _pair(t("slip.cash_in"), _counted(report.cash_in.count, fmt(report.cash_in.sum_minor)), columns)
    out += _pair(t("slip.cash_out"), _counted(report.cash_out.count, fmt(report.cash_out.sum_minor)), columns)
    out += _pair(t("slip.expected"), fmt(report.cash_expected_minor), columns, bold=True)
    if report.counted_minor is not None:
        out += _pair(t("slip.counted"), fmt(report.counted_minor), columns, bold=True)
        diff = report.over_short_minor
        words = (t("slip.over") + " " + fmt(diff) if diff > 0 else
                 t("slip.short") + " " + fmt(-diff) if diff < 0 else t("slip.even"))
        out += _pair(t("slip.over_short"), words, columns, bold=True)
    out.append(RULE)
    if closed:
        out.append(Line())
        out += _pair(t("slip.signature"), "_" * max(4, columns // 2), columns)
    else:
        out += [Line(part, "center") for part in wrap(t("slip.x_note"), columns)]
    out.append(Line())
    return out


def slip_text(report, columns: int, language: str = "zh_CN", **options) -> str:
    """The slip as text (logs, tests, the preview when no printer is set up)."""
    from .model import display_width
    rows = []
    for item in slip_layout(report, columns, language, **options):
        if item == RULE:
            rows.append("-" * columns)
            continue
        width = columns // 2 if item.big else columns
        pad = max(0, width - display_width(item.text))
        rows.append(item.text if item.align == "left" else
                    " " * (pad // 2) + item.text if item.align == "center" else " " * pad + item.text)
    return "\n".join(rows)
