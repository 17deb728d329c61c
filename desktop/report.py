"""The shift report: counts and sums of a shift's operations by kind and by cashier,
shown when a shift closes and printed, saved as PDF (QPrinter) or saved as CSV.

Only approved operations count in the sums (a decline moves no money); operations a
supervisor abandoned (too old to re-send) are counted and summed on their own line; declines
are counted on their own line. Sums are integers in minor units; the net is
charges plus completed sales (captures) minus refunds, top-ups are listed apart
(money taken in at the till). Holds and released holds are listed by kind too, but
they move no money: a hold only reserves it until a capture takes it. Holds made in
the shift and still open at its close are listed on their own line. The CSV is for
people: local times, kinds in words, sums in yuan (and in fen for machines).
Top-ups are also totalled by payment method with the bonus granted; charges and
completed sales are split into what they took from the principal and from the bonus
(refunds into what they gave back), from the bucket split the ledger answered; cards
closed (退卡) count the cash paid out. The cash drawer (the outbox's drawer table,
desktop/drawer.py): the opening float, cash in and cash out, and the drawer counted at
close; the cash expected in the drawer is the float plus the cash top-ups minus the cash
paid out on card closes plus cash in minus cash out, and over/short is the count minus
that. `shift_totals` turns a report into the Z record the terminal journals
(core/shifts.py), the drawer's figures included. The same report of a shift still open
is the X report (mid-shift, nothing closed).
`CloseShiftDialog` is the confirmation before a shift closes: the totals so far, the
drawer counted (the typed total, over/short shown before confirming), and the
supervisor's id and PIN when the cashier may not close the shift alone.
"""
from __future__ import annotations

import csv
import html
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLocale, Signal
from PySide6.QtGui import QPageSize, QTextDocument
from PySide6.QtWidgets import (QDialog, QFileDialog, QFormLayout, QFrame, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QTextBrowser, QVBoxLayout)

from core import kinds
from core.members import PAYMENT_METHODS
from core.sales import TENDER_METHODS
from core.shifts import ShiftTotals

from . import money
from .till_dialog import TillDialog
from .keypad import Keypad
from .supervisor_fields import SupervisorFields
from .outbox import ABANDONED, DrawerEntry, Op, Shift, now_ms
from .texts import amount_error_words, drawer_reason_words, kind_words, method_words
from .i18n import Retranslates

# from core.kinds: the rows that move money, then the holds and releases (reserved only)
MONEY_MOVING_KINDS = kinds.TILL_MONEY_MOVING_KINDS
KIND_ORDER = MONEY_MOVING_KINDS + tuple(k for k in kinds.MONEY_KINDS if k not in MONEY_MOVING_KINDS)
COUNTED_KINDS = kinds.MEMBER_COUNTED_KINDS      # member operations: counted, no money moves
SUMMARY_MAX_HEIGHT = 300                         # px of the close dialog's totals before they scroll


@dataclass
class Tally:
    count: int = 0
    sum_minor: int = 0

    def add(self, amount_minor: int) -> None:
        self.count += 1
        self.sum_minor += amount_minor


@dataclass
class ShiftReport:
    shift: Shift
    by_kind: dict[str, Tally] = field(default_factory=dict)
    by_cashier: dict[str, dict[str, Tally]] = field(default_factory=dict)
    declined_count: int = 0
    pending_count: int = 0
    offline_debt_minor: int = 0          # the offline debts the shift's settled offline sales left
    abandoned: Tally = field(default_factory=Tally)   # too old to re-send, given up by a supervisor
    open_holds: Tally = field(default_factory=Tally)
    topups_by_method: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in PAYMENT_METHODS})
    bonus_granted_minor: int = 0
    spent_principal_minor: int = 0      # charges + completed sales, from the principal
    spent_bonus_minor: int = 0          # ... from the bonus
    refunded_principal_minor: int = 0
    refunded_bonus_minor: int = 0
    bonus_forfeited_minor: int = 0      # closes: the bonus that lapsed
    split_unknown_count: int = 0        # applied charges/refunds whose split could not be read
    split_unknown_ops: list[tuple[str, str]] = field(default_factory=list)   # their (kind, txn id)
    members: dict[str, int] = field(default_factory=lambda: {k: 0 for k in COUNTED_KINDS})
    float_minor: int = 0                # the drawer's opening float
    float_entered: bool = False
    cash_in: Tally = field(default_factory=Tally)      # cash put into the drawer (paid-in)
    cash_out: Tally = field(default_factory=Tally)     # cash taken out (paid-out)
    counted_minor: int | None = None    # the drawer counted at close (the last count)
    drawer: list[DrawerEntry] = field(default_factory=list)
    # split-tender sales (issue 31): the card legs are by_kind["sale"]; their other tenders
    # (cash net of the change handed back), the change, and their refunds apart
    tenders_by_method: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in TENDER_METHODS})
    change_minor: int = 0
    split_refund_card: Tally = field(default_factory=Tally)    # card legs given back (to the card)
    tender_refunds_by_method: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in TENDER_METHODS})

    @property
    def cash_expected_minor(self) -> int:
        """Cash expected in the drawer: the float, plus cash top-ups, minus cash paid out
        on card closes, plus cash in, minus cash out, plus the cash tenders of split sales
        (what was handed over less the change) minus the cash given back of them."""
        return (self.float_minor + self.topups_by_method["cash"].sum_minor - self.by_kind["close"].sum_minor
                + self.cash_in.sum_minor - self.cash_out.sum_minor
                + self.tenders_by_method["cash"].sum_minor - self.tender_refunds_by_method["cash"].sum_minor)

    @property
    def over_short_minor(self) -> int | None:
        """Counted minus expected (over when positive, short when negative); None: not counted."""
        return None if self.counted_minor is None else self.counted_minor - self.cash_expected_minor

    @property
    def net_minor(self) -> int:
        """Charges (offline ones settled included), completed sales and split sales' card legs
        minus refunds (what the shift took from accounts)."""
        return (self.by_kind["deduct"].sum_minor + self.by_kind["offline"].sum_minor
                + self.by_kind["capture"].sum_minor + self.by_kind["sale"].sum_minor
                - self.by_kind["refund"].sum_minor - self.split_refund_card.sum_minor)


def build_report(shift: Shift, ops: list[Op], open_holds: list[Op] = (),
                 drawer: list[DrawerEntry] = ()) -> ShiftReport:
    """`open_holds`: holds of this shift that were still open when it closed;
    `drawer`: the shift's drawer movements (Outbox.drawer_of_shift)."""
    report = ShiftReport(shift, {k: Tally() for k in KIND_ORDER})
    add_drawer(report, drawer)
    for hold in open_holds:
        report.open_holds.add(hold.amount_minor)
    cashiers: dict[str, dict[str, Tally]] = defaultdict(lambda: {k: Tally() for k in KIND_ORDER})
    for op in ops:
        if op.kind in kinds.BOOK_ONLY_KINDS:
            continue                      # the Z record itself
        if op.pending:
            report.pending_count += 1
        elif op.status == ABANDONED:
            report.abandoned.add(op.amount_minor)
        elif op.applied and op.kind in COUNTED_KINDS:
            report.members[op.kind] += 1
        elif op.applied:
            report.by_kind[op.kind].add(op.amount_minor)
            if op.kind == "offline":
                report.offline_debt_minor += op.debt_minor
            cashiers[op.cashier_id][op.kind].add(op.amount_minor)
            _add_buckets(report, op)
            _add_tenders(report, op)
        else:
            report.declined_count += 1
    report.by_cashier = dict(sorted(cashiers.items()))
    return report


def add_drawer(report: ShiftReport, drawer: list[DrawerEntry]) -> None:
    """The drawer's movements into `report`: the float, cash in / out, the last count."""
    report.drawer = list(drawer)
    for entry in drawer:
        if entry.kind == "float":
            report.float_minor, report.float_entered = entry.amount_minor, True
        elif entry.kind == "cash_in":
            report.cash_in.add(entry.amount_minor)
        elif entry.kind == "cash_out":
            report.cash_out.add(entry.amount_minor)
        elif entry.kind == "count":
            report.counted_minor = entry.amount_minor


def _add_tenders(report: ShiftReport, op: Op) -> None:
    """A split sale's other tenders and change, or a split sale's refund's parts."""
    d = op.details
    if op.kind == "sale":
        for method, amount_minor in d.get("tenders", {}).items():
            report.tenders_by_method.setdefault(method, Tally()).add(amount_minor)
        report.change_minor += d.get("change_minor", 0)
    elif op.kind == "tender_refund":
        if d.get("card_minor"):
            report.split_refund_card.add(d["card_minor"])
        for method, amount_minor in d.get("tenders", {}).items():
            report.tender_refunds_by_method.setdefault(method, Tally()).add(amount_minor)


def _add_buckets(report: ShiftReport, op: Op) -> None:
    section = kinds.KINDS[op.kind].book_section     # the report's buckets are the book's sections
    if section == "topup":
        report.topups_by_method.setdefault(op.method or "cash", Tally()).add(op.amount_minor)
        report.bonus_granted_minor += op.bonus_minor
    elif section == "close":
        report.bonus_forfeited_minor += -(op.bonus_delta_minor or 0)
    elif op.kind in kinds.SPLIT_KINDS:
        if op.principal_delta_minor is None or op.bonus_delta_minor is None:
            report.split_unknown_count += 1
            report.split_unknown_ops.append((op.kind, op.txn_id))
        elif section == "refund":
            report.refunded_principal_minor += op.principal_delta_minor
            report.refunded_bonus_minor += op.bonus_delta_minor
        else:
            report.spent_principal_minor += -op.principal_delta_minor
            report.spent_bonus_minor += -op.bonus_delta_minor


def shift_totals(report: ShiftReport) -> tuple[ShiftTotals, dict[str, int]]:
    """The Z record of a report (core.shifts.close_shift's `totals` and `extra_totals`):
    sales = charges + completed sales, top-ups = principal taken in; the rest by name."""
    k = report.by_kind
    totals = ShiftTotals(sales_count=k["deduct"].count + k["offline"].count + k["capture"].count + k["sale"].count,
                         sales_minor=(k["deduct"].sum_minor + k["offline"].sum_minor + k["capture"].sum_minor
                                      + k["sale"].sum_minor),
                         refunds_count=k["refund"].count + report.split_refund_card.count,
                         refunds_minor=k["refund"].sum_minor + report.split_refund_card.sum_minor,
                         topups_count=k["credit"].count, topups_minor=k["credit"].sum_minor)
    # offline sales settled in this shift (issue 27): how many, how much, the debt they left
    extra = {"offline_count": k["offline"].count, "offline_minor": k["offline"].sum_minor,
             "offline_debt_minor": report.offline_debt_minor}
    # split sales (issue 31): the card legs, the other tenders, the change, and their refunds
    extra.update(sale_count=k["sale"].count, sale_card_minor=k["sale"].sum_minor, change_minor=report.change_minor,
                 split_refund_card_minor=report.split_refund_card.sum_minor)
    for method, t in report.tenders_by_method.items():
        extra[f"tenders_{method}_minor"] = t.sum_minor
    for method, t in report.tender_refunds_by_method.items():
        extra[f"tender_refunds_{method}_minor"] = t.sum_minor
    for method, t in report.topups_by_method.items():
        extra[f"topups_{method}_count"] = t.count
        extra[f"topups_{method}_minor"] = t.sum_minor
    extra.update(bonus_granted_minor=report.bonus_granted_minor,
                 spent_principal_minor=report.spent_principal_minor, spent_bonus_minor=report.spent_bonus_minor,
                 refunded_principal_minor=report.refunded_principal_minor,
                 refunded_bonus_minor=report.refunded_bonus_minor, split_unknown_count=report.split_unknown_count,
                 closes_count=k["close"].count, closes_paid_out_minor=k["close"].sum_minor,
                 bonus_forfeited_minor=report.bonus_forfeited_minor,
                 cash_expected_minor=report.cash_expected_minor, declined_count=report.declined_count,
                 abandoned_count=report.abandoned.count, abandoned_minor=report.abandoned.sum_minor,
                 holds_open_count=report.open_holds.count, holds_open_minor=report.open_holds.sum_minor,
                 members_opened_count=report.members["open"], cards_replaced_count=report.members["card_replace"],
                 drawer_float_minor=report.float_minor, cash_in_count=report.cash_in.count,
                 cash_in_minor=report.cash_in.sum_minor, cash_out_count=report.cash_out.count,
                 cash_out_minor=report.cash_out.sum_minor)
    if report.counted_minor is not None:
        extra.update(drawer_counted_minor=report.counted_minor, over_short_minor=report.over_short_minor)
    return totals, extra


def member_lines(report: ShiftReport, loc: QLocale) -> list[tuple[str, str]]:
    """(label, value) lines of the member part of a report: top-ups by method, bonus,
    the spending split (an operation whose split is unknown named by kind and receipt
    number), closes."""
    fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
    lines = [(QCoreApplication.translate("ShiftReportDialog", "Top-ups by %1").replace("%1", method_words(m)), f"{tally.count} · {fmt(tally.sum_minor)}")
             for m, tally in report.topups_by_method.items() if tally.count]
    lines.append((QCoreApplication.translate("ShiftReportDialog", "Bonus granted"), fmt(report.bonus_granted_minor)))
    lines.append((QCoreApplication.translate("ShiftReportDialog", "Spent from principal"), fmt(report.spent_principal_minor)))
    lines.append((QCoreApplication.translate("ShiftReportDialog", "Spent from bonus"), fmt(report.spent_bonus_minor)))
    if report.refunded_principal_minor or report.refunded_bonus_minor:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Refunded to principal · to bonus"), f"{fmt(report.refunded_principal_minor)} · "
                      f"{fmt(report.refunded_bonus_minor)}"))
    if report.by_kind["close"].count:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Accounts closed: cash paid out"), f"{report.by_kind['close'].count} · "
                      f"{fmt(report.by_kind['close'].sum_minor)}"))
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Bonus forfeited"), fmt(report.bonus_forfeited_minor)))
    lines += split_lines(report, loc)
    if report.members["open"] or report.members["card_replace"]:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Members opened · cards replaced"),
                      f"{report.members['open']} · {report.members['card_replace']}"))
    if report.split_unknown_count:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Operations whose principal/bonus split is unknown"), str(report.split_unknown_count)))
        for kind, txn_id in report.split_unknown_ops:        # each named: kind and receipt number
            lines.append(("  " + kind_words(kind), txn_id))
    return lines


def split_lines(report: ShiftReport, loc: QLocale) -> list[tuple[str, str]]:
    """Split-tender sales (issue 31), card tenders apart from the others: the card legs,
    each other tender, the change handed back, and what their refunds gave back."""
    fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
    sale = report.by_kind["sale"]
    if not sale.count and not report.split_refund_card.count and not any(
            x.count for x in report.tender_refunds_by_method.values()):
        return []
    lines = [(QCoreApplication.translate("ShiftReportDialog", "Card + other payment: from the card"), f"{sale.count} · {fmt(sale.sum_minor)}")]
    lines += [(QCoreApplication.translate("ShiftReportDialog", "Card + other payment: by %1").replace("%1", method_words(m)),
               f"{tally.count} · {fmt(tally.sum_minor)}") for m, tally in report.tenders_by_method.items() if tally.count]
    if report.change_minor:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Change handed back"), fmt(report.change_minor)))
    if report.split_refund_card.count:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Refunded to the card (card + other payments)"),
                      f"{report.split_refund_card.count} · {fmt(report.split_refund_card.sum_minor)}"))
    lines += [(QCoreApplication.translate("ShiftReportDialog", "Given back by %1 (card + other payments)").replace("%1", method_words(m)),
               f"{tally.count} · {fmt(tally.sum_minor)}") for m, tally in report.tender_refunds_by_method.items()
              if tally.count]
    return lines


def over_short_words(over_short_minor: int, loc: QLocale) -> str:
    """'Over ¥1.00', 'Short ¥2.50' or 'Even' (the drawer matches)."""
    if over_short_minor > 0:
        return QCoreApplication.translate("ShiftReportDialog", "Over %1").replace("%1", money.format_minor(over_short_minor, loc))
    if over_short_minor < 0:
        return QCoreApplication.translate("ShiftReportDialog", "Short %1").replace("%1", money.format_minor(-over_short_minor, loc))
    return QCoreApplication.translate("ShiftReportDialog", "Even")


def drawer_lines(report: ShiftReport, loc: QLocale) -> list[tuple[str, str]]:
    """(label, value) lines of the cash drawer: float, cash in, cash out, cash top-ups and
    cash paid out, the cash expected, and the count with over/short once counted."""
    fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
    lines = [(QCoreApplication.translate("ShiftReportDialog", "Opening float"), fmt(report.float_minor) if report.float_entered else
              fmt(0) + " " + QCoreApplication.translate("ShiftReportDialog", "(not entered)")),
             (QCoreApplication.translate("ShiftReportDialog", "Cash top-ups"), fmt(report.topups_by_method["cash"].sum_minor)),
             (QCoreApplication.translate("ShiftReportDialog", "Cash paid out on card closes"), fmt(report.by_kind["close"].sum_minor)),
             (QCoreApplication.translate("ShiftReportDialog", "Cash in"), f"{report.cash_in.count} · {fmt(report.cash_in.sum_minor)}"),
             (QCoreApplication.translate("ShiftReportDialog", "Cash out"), f"{report.cash_out.count} · {fmt(report.cash_out.sum_minor)}")]
    if report.tenders_by_method["cash"].count or report.tender_refunds_by_method["cash"].count:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Cash of card + other payments (less change, less given back)"),
                      fmt(report.tenders_by_method["cash"].sum_minor - report.tender_refunds_by_method["cash"].sum_minor)))
    lines.append((QCoreApplication.translate("ShiftReportDialog", "Cash expected in the drawer"), fmt(report.cash_expected_minor)))
    if report.counted_minor is not None:
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Counted"), fmt(report.counted_minor)))
        lines.append((QCoreApplication.translate("ShiftReportDialog", "Over / short"), over_short_words(report.over_short_minor, loc)))
    return lines


def closed_by_words(closed_by: str | None) -> str:
    """The outbox's closed_by ('c2', or 'c2+sup' when a supervisor approved) in words."""
    if not closed_by:
        return "—"
    cashier, _, supervisor = closed_by.partition("+")
    if not supervisor:
        return cashier
    return (QCoreApplication.translate("ShiftReportDialog", "%1, approved by %2")
            .replace("%1", cashier).replace("%2", supervisor))


def write_csv(report: ShiftReport, path: Path) -> None:
    """One row per (cashier or all, kind): the kind in words, the count, the sum in
    yuan and in fen; the shift's times are local date and time, not epoch ms."""
    with open(path, "w", newline="", encoding="utf-8-sig") as f:     # BOM: spreadsheets read UTF-8
        w = csv.writer(f)
        t = QCoreApplication.translate
        w.writerow([t("ShiftReportDialog", "Shift"), t("ShiftReportDialog", "Terminal"),
                    t("ShiftReportDialog", "Opened"), t("ShiftReportDialog", "Opened by"),
                    t("ShiftReportDialog", "Closed"), t("ShiftReportDialog", "Closed by"),
                    t("ShiftReportDialog", "Cashier"), t("ShiftReportDialog", "Kind"),
                    t("ShiftReportDialog", "Count"), t("ShiftReportDialog", "Sum (yuan)"),
                    t("ShiftReportDialog", "Sum (fen)")])
        s = report.shift
        head = [s.shift_id, s.terminal_id, _time(s.opened_ms, seconds=True), s.opened_by,
                _time(s.closed_ms, seconds=True), closed_by_words(s.closed_by)]
        everyone = QCoreApplication.translate("ShiftReportDialog", "All cashiers")
        rows = [(everyone, kind_words(k), t) for k, t in report.by_kind.items()]
        rows += [(c, kind_words(k), t) for c, by_kind in report.by_cashier.items() for k, t in by_kind.items()
                 if t.count]
        for cashier, kind, t in rows:
            w.writerow(head + [cashier, kind, t.count, money.format_plain(t.sum_minor), t.sum_minor])
        w.writerow(head + [everyone, QCoreApplication.translate("ShiftReportDialog", "Declined"), report.declined_count, "0.00", 0])
        w.writerow(head + [everyone, QCoreApplication.translate("ShiftReportDialog", "Abandoned (too old to re-send)"),
                           report.abandoned.count, money.format_plain(report.abandoned.sum_minor), report.abandoned.sum_minor])
        w.writerow(head + [everyone, QCoreApplication.translate("ShiftReportDialog", "Holds still open"), report.open_holds.count,
                           money.format_plain(report.open_holds.sum_minor), report.open_holds.sum_minor])
        w.writerow(head + [everyone, QCoreApplication.translate("ShiftReportDialog", "Net (charges and completed sales minus refunds)"), "",
                           money.format_plain(report.net_minor), report.net_minor])
        for method, tally in report.topups_by_method.items():
            w.writerow(head + [everyone, QCoreApplication.translate("ShiftReportDialog", "Top-ups by %1").replace("%1", method_words(method)), tally.count,
                               money.format_plain(tally.sum_minor), tally.sum_minor])
        for label, value in ((QCoreApplication.translate("ShiftReportDialog", "Bonus granted"), report.bonus_granted_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Spent from principal"), report.spent_principal_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Spent from bonus"), report.spent_bonus_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Refunded to principal"), report.refunded_principal_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Refunded to bonus"), report.refunded_bonus_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Bonus forfeited"), report.bonus_forfeited_minor),
                             *[(QCoreApplication.translate("ShiftReportDialog", "Card + other payment: by %1")
                                .replace("%1", method_words(m)), tally.sum_minor)
                               for m, tally in report.tenders_by_method.items() if tally.count],
                             *([(QCoreApplication.translate("ShiftReportDialog", "Change handed back"), report.change_minor)]
                               if report.change_minor else []),
                             *[(QCoreApplication.translate("ShiftReportDialog", "Given back by %1 (card + other payments)")
                                .replace("%1", method_words(m)), tally.sum_minor)
                               for m, tally in report.tender_refunds_by_method.items() if tally.count],
                             (QCoreApplication.translate("ShiftReportDialog", "Opening float"), report.float_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Cash in"), report.cash_in.sum_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Cash out"), report.cash_out.sum_minor),
                             (QCoreApplication.translate("ShiftReportDialog", "Cash expected in the drawer"), report.cash_expected_minor)):
            w.writerow(head + [everyone, label, "", money.format_plain(value), value])
        if report.counted_minor is not None:
            for label, value in ((QCoreApplication.translate("ShiftReportDialog", "Counted"), report.counted_minor),
                                 (QCoreApplication.translate("ShiftReportDialog", "Over / short"), report.over_short_minor)):
                w.writerow(head + [everyone, label, "", money.format_plain(value), value])


def _time(ms: int | None, *, seconds: bool = False) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M" + (":%S" if seconds else "")) if ms else "—"


class ShiftReportDialog(Retranslates, QDialog):
    """Shows a closed shift's report (or, for a shift still open, the X report) with
    Print, Save PDF and Save CSV, and Print slip (the Z / X slip on the receipt printer)
    when the window has a drawer hook (desktop/drawer.py)."""

    def __init__(self, report: ShiftReport, parent=None):
        super().__init__(parent)
        self.report = report
        self.is_x = report.shift.closed_ms is None
        self.setObjectName("xReportDialog" if self.is_x else "shiftReportDialog")
        self.drawer_hook = getattr(parent, "drawer_hook", None)
        self.view = QTextBrowser(objectName="reportView")
        self.print_button = QPushButton(objectName="printButton", clicked=self.print_report)
        self.pdf_button = QPushButton(objectName="pdfButton", clicked=lambda: self._ask_and_save("pdf"))
        self.csv_button = QPushButton(objectName="csvButton", clicked=lambda: self._ask_and_save("csv"))
        self.slip_button = QPushButton(objectName="printSlipButton", clicked=self.print_slip)
        self.slip_button.setVisible(self.drawer_hook is not None)
        self.close_button = QPushButton(objectName="closeReportButton", clicked=self.accept)
        self.message = QLabel(objectName="reportMessage", wordWrap=True)
        buttons = QHBoxLayout()
        for b in (self.print_button, self.slip_button, self.pdf_button, self.csv_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.resize(720, 640)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("X report (shift still open)") if self.is_x else self.tr("Shift report"))
        self.print_button.setText(self.tr("Print…"))
        self.slip_button.setText(self.tr("Print slip"))
        self.pdf_button.setText(self.tr("Save as PDF…"))
        self.csv_button.setText(self.tr("Save as CSV…"))
        self.close_button.setText(self.tr("Close"))
        self.view.setHtml(self.html())

    def html(self) -> str:
        r, loc = self.report, QLocale()
        fmt = lambda m: html.escape(money.format_minor(m, loc))  # noqa: E731
        head = lambda cells: "<tr>" + "".join(f"<th align='left'>{html.escape(c)}</th>" for c in cells) + "</tr>"  # noqa: E731
        cols = [self.tr("Kind"), self.tr("Count"), self.tr("Sum")]
        all_cashiers, declined = self.tr("All cashiers"), self.tr("Declined")
        net, by_cashier = self.tr("Net (charges and completed sales minus refunds)"), self.tr("By cashier")
        reserved = self.tr("(reserved only)")
        title = self.tr("X report (shift still open)") if self.is_x else self.tr("Shift report")
        parts = ["<h2>" + html.escape(title) + "</h2>",
                 "<p>" + html.escape(self.tr("Terminal %1, shift %2").replace("%1", r.shift.terminal_id)
                                     .replace("%2", str(r.shift.shift_id))) + "<br>"
                 + html.escape(self.tr("Opened %1 by %2").replace("%1", _time(r.shift.opened_ms))
                               .replace("%2", r.shift.opened_by)) + "<br>"
                 + html.escape(self.tr("As of %1: the shift is still open").replace("%1", _time(now_ms()))
                               if self.is_x else
                               self.tr("Closed %1 by %2").replace("%1", _time(r.shift.closed_ms))
                               .replace("%2", closed_by_words(r.shift.closed_by))) + "</p>",
                 f"<h3>{html.escape(all_cashiers)}</h3>",
                 "<table cellspacing='0' cellpadding='6' border='1'>" + head(cols)]
        for kind, t in r.by_kind.items():
            label = kind_words(kind) + ("" if kind in MONEY_MOVING_KINDS else " " + reserved)
            parts.append(f"<tr><td>{html.escape(label)}</td><td>{t.count}</td><td>{fmt(t.sum_minor)}</td></tr>")
        parts.append(f"<tr><td>{html.escape(declined)}</td><td>{r.declined_count}</td><td></td></tr>")
        if r.abandoned.count:
            abandoned = self.tr("Abandoned (too old to re-send)")
            parts.append(f"<tr><td>{html.escape(abandoned)}</td><td>{r.abandoned.count}</td>"
                         f"<td>{fmt(r.abandoned.sum_minor)}</td></tr>")
        parts.append(f"<tr><td><b>{html.escape(net)}</b></td><td></td>"
                     f"<td><b>{fmt(r.net_minor)}</b></td></tr></table>")
        parts.append(f"<h3><a name='drawer'></a>{html.escape(self.tr('Cash drawer'))}</h3>"
                     "<table cellspacing='0' cellpadding='6' border='1'>")
        for label, value in drawer_lines(r, loc):
            parts.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(value)}</td></tr>")
        parts.append("</table>")
        moves = [e for e in r.drawer if e.kind in ("cash_in", "cash_out")]
        if moves:
            parts.append("<table cellspacing='0' cellpadding='6' border='1'>"
                         + head([self.tr("Time"), self.tr("Kind"), self.tr("Sum"), self.tr("Reason"),
                                 self.tr("Cashier")]))
            for e in moves:
                kind = self.tr("Cash in") if e.kind == "cash_in" else self.tr("Cash out")
                who = e.cashier_id + (f" / {e.approved_by}" if e.approved_by else "")
                reason = drawer_reason_words(e.reason) + (f": {e.note}" if e.note else "")
                parts.append(f"<tr><td>{_time(e.created_ms)}</td><td>{html.escape(kind)}</td>"
                             f"<td>{fmt(e.amount_minor)}</td><td>{html.escape(reason)}</td>"
                             f"<td>{html.escape(who)}</td></tr>")
            parts.append("</table>")
        member_cards = self.tr("Member cards")
        parts.append(f"<h3><a name='members'></a>{html.escape(member_cards)}</h3>"
                     "<table cellspacing='0' cellpadding='6' border='1'>")
        for label, value in member_lines(r, loc):
            parts.append(f"<tr><td>{html.escape(label)}</td><td>{html.escape(value)}</td></tr>")
        parts.append("</table>")
        if r.open_holds.count:
            parts.append("<p><b>" + html.escape(
                self.tr("%1 hold(s) of this shift still open (%2): complete or release them in the next shift.")
                .replace("%1", str(r.open_holds.count)).replace("%2", money.format_minor(r.open_holds.sum_minor, loc)))
                + "</b></p>")
        if r.pending_count:
            parts.append("<p><b>" + html.escape(self.tr("%1 operation(s) still being checked are not counted.")
                                                 .replace("%1", str(r.pending_count))) + "</b></p>")
        parts.append(f"<h3>{html.escape(by_cashier)}</h3>")
        parts.append("<table cellspacing='0' cellpadding='6' border='1'>" + head([self.tr("Cashier"), *cols]))
        for cashier, by_kind in r.by_cashier.items():
            for kind, t in by_kind.items():
                if t.count:
                    parts.append(f"<tr><td>{html.escape(cashier)}</td><td>{html.escape(kind_words(kind))}</td>"
                                 f"<td>{t.count}</td><td>{fmt(t.sum_minor)}</td></tr>")
        parts.append("</table>")
        return "".join(parts)

    def document(self) -> QTextDocument:
        doc = QTextDocument()
        doc.setHtml(self.html())
        return doc

    def save_pdf(self, path: Path) -> None:
        from PySide6.QtPrintSupport import QPrinter
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
        printer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
        printer.setOutputFileName(str(path))
        self.document().print_(printer)

    def save_csv(self, path: Path) -> None:
        write_csv(self.report, Path(path))

    def print_slip(self) -> None:
        """The Z slip (the X slip for a shift still open) on the receipt printer."""
        if self.drawer_hook is not None:
            self.message.setText(self.drawer_hook.print_slip(self.report))

    def print_report(self) -> None:
        from PySide6.QtPrintSupport import QPrintDialog, QPrinter
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        dialog = QPrintDialog(printer, self)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.document().print_(printer)
            self.message.setText(self.tr("Sent to the printer."))

    def _ask_and_save(self, kind: str) -> None:
        name = f"shift-{self.report.shift.terminal_id}-{self.report.shift.shift_id}.{kind}"
        filter_ = self.tr("PDF files (*.pdf)") if kind == "pdf" else self.tr("CSV files (*.csv)")
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save the shift report"), name, filter_)
        if not path:
            return
        try:
            (self.save_pdf if kind == "pdf" else self.save_csv)(Path(path))
        except OSError as exc:
            self.message.setText(self.tr("Could not save: %1").replace("%1", exc.strerror or str(exc)))
            return
        self.message.setText(self.tr("Saved: %1").replace("%1", path))


class CloseShiftDialog(TillDialog):
    """Close shift…: the shift's totals so far, the drawer counted (a typed total; the
    cash expected and over/short shown as it is typed) and Close shift / Cancel. With
    `needs_supervisor` (the cashier neither opened the shift nor is a supervisor) a
    supervisor's id and PIN are asked for too. Once confirmed, the count is saved in
    the outbox's drawer table (the Z record carries it); `closeConfirmed(approved_by)`:
    '' or the approving supervisor."""
    closeConfirmed = Signal(str)

    def __init__(self, engine, report: ShiftReport, cashier, *, needs_supervisor: bool, parent=None):
        super().__init__(parent)
        self.setObjectName("closeShiftDialog")
        self.engine = engine
        self.report = report
        self.cashier = cashier
        self.needs_supervisor = needs_supervisor
        self.summary = QLabel(objectName="closeShiftSummary", wordWrap=True)
        # the totals scroll when a busy shift has many lines: the count and the buttons stay on a 768 px screen
        self.summary_area = QScrollArea(objectName="closeShiftSummaryArea", widgetResizable=True,
                                        frameShape=QFrame.Shape.NoFrame)
        self.summary_area.setWidget(self.summary)
        self.who = QLabel(objectName="closeShiftWho", wordWrap=True)
        self.counted_label = QLabel()
        self.counted_input = QLineEdit(objectName="closeShiftCountedInput")
        self.counted_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.over_short = QLabel(objectName="closeShiftOverShort", wordWrap=True)
        self.counted_input.textChanged.connect(lambda _t: self._show_over_short())
        self.pieces: dict[int, int] = {}         # the count by denomination, when made so
        self.denominations_button = QPushButton(objectName="closeShiftDenominationsButton",
                                                clicked=self.count_by_denomination)
        self.denomination_dialog = None
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="closeShiftMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="closeShiftConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="closeShiftCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button, self.denominations_button)
        form = QFormLayout()
        counted_row = QHBoxLayout()
        counted_row.addWidget(self.counted_input, 1)
        counted_row.addWidget(self.denominations_button)
        form.addRow(self.counted_label, counted_row)
        self.supervisor.add_to(form)
        self.supervisor.set_visible(needs_supervisor)
        # touch-only tills: digits into the field with the cursor (the count by default)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.counted_input))
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary_area)
        layout.addWidget(self.who)
        layout.addLayout(form)
        layout.addWidget(self.over_short)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)
        self.retranslate()
        (self.supervisor_input if needs_supervisor else self.counted_input).setFocus()

    def retranslate(self) -> None:
        r, loc = self.report, QLocale()
        fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
        self.setWindowTitle(self.tr("Close shift"))
        lines = [self.tr("Close shift %1 of terminal %2?").replace("%1", str(r.shift.shift_id))
                 .replace("%2", r.shift.terminal_id)]
        for kind in MONEY_MOVING_KINDS:
            t = r.by_kind[kind]
            lines.append(f"{kind_words(kind)}: {t.count} · {fmt(t.sum_minor)}")
        lines.append(self.tr("Declined: %1").replace("%1", str(r.declined_count)))
        if r.open_holds.count:
            lines.append(self.tr("Holds still open: %1 · %2").replace("%1", str(r.open_holds.count))
                         .replace("%2", fmt(r.open_holds.sum_minor)))
        lines.append(self.tr("Net: %1").replace("%1", fmt(r.net_minor)))
        lines += [f"{label}: {value}" for label, value in member_lines(r, loc)]
        lines.append(self.tr("Drawer: float %1 · cash in %2 · cash out %3")
                     .replace("%1", fmt(r.float_minor)).replace("%2", fmt(r.cash_in.sum_minor))
                     .replace("%3", fmt(r.cash_out.sum_minor)))
        self.summary.setText("\n".join(lines))
        self.summary_area.setFixedHeight(min(self.summary.heightForWidth(max(self.width(), 480) - 40) + 4,
                                             SUMMARY_MAX_HEIGHT))
        self.counted_label.setText(self.tr("Cash counted in the drawer"))
        self.denominations_button.setText(self.tr("By denomination…"))
        self._show_over_short()
        if self.needs_supervisor:
            self.who.setText(self.tr("Shift opened by %1: closing it needs a supervisor.")
                             .replace("%1", r.shift.opened_by))
        else:
            self.who.setText(self.tr("Closed by %1.").replace("%1", self.cashier.cashier_id))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Close shift"))
        self.cancel_button.setText(self.tr("Cancel"))

    def count_by_denomination(self):
        from .drawer import DenominationDialog
        self.denomination_dialog = DenominationDialog(self, self.pieces)
        self.denomination_dialog.counted.connect(self._counted_by_denomination)
        self.denomination_dialog.open()
        return self.denomination_dialog

    def _counted_by_denomination(self, total_minor: int, pieces: dict) -> None:
        self.counted_input.setText(money.format_plain(total_minor))
        self.pieces = dict(pieces)             # after setText: a typed change forgets them
        self.counted_input.setFocus()

    def counted_minor(self) -> int | None:
        """The typed count (0 allowed), or None while it is not an amount."""
        try:
            return money.parse_cash_minor(self.counted_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return None

    def _show_over_short(self) -> None:
        if self.pieces and self.counted_minor() != sum(m * n for m, n in self.pieces.items()):
            self.pieces = {}                   # the total typed over: not that count any more
        loc = QLocale()
        expected = money.format_minor(self.report.cash_expected_minor, loc)
        counted = self.counted_minor()
        if counted is None:
            self.over_short.setText(self.tr("Cash expected: %1. Count the drawer and type the total.")
                                    .replace("%1", expected))
            return
        self.over_short.setText(self.tr("Cash expected: %1 · counted: %2 · %3").replace("%1", expected)
                                .replace("%2", money.format_minor(counted, loc))
                                .replace("%3", over_short_words(counted - self.report.cash_expected_minor, loc)))

    def confirm(self) -> None:
        try:
            self.counted = money.parse_cash_minor(self.counted_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.fail(self.tr("Count the drawer and type the total (0 if it is empty).")
                      if exc.reason == money.EMPTY else amount_error_words(exc.reason), self.counted_input)
            return
        if not self.needs_supervisor:
            self._approved("")
            return
        self.ask_supervisor(self.engine, self.supervisor, self._approved)

    def _approved(self, supervisor_id: str) -> None:
        shift = self.report.shift
        detail = json.dumps({"pieces": {str(m): n for m, n in sorted(self.pieces.items(), reverse=True)}}) \
            if self.pieces else ""
        self.engine.outbox.add_drawer(shift.shift_id, "count", self.counted, self.cashier.cashier_id,
                                      approved_by=supervisor_id, detail=detail)
        self.accept()
        self.closeConfirmed.emit(supervisor_id)
