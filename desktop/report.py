"""The shift report: counts and sums of a shift's operations by kind and by cashier,
shown when a shift closes and printed, saved as PDF (QPrinter) or saved as CSV.

Only approved operations count in the sums (a decline moves no money); declines
are counted on their own line. Sums are integers in minor units; the net is
charges plus completed sales (captures) minus refunds, top-ups are listed apart
(money taken in at the till). Holds and released holds are listed by kind too, but
they move no money: a hold only reserves it until a capture takes it. Holds made in
the shift and still open at its close are listed on their own line.
"""
from __future__ import annotations

import csv
import html
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QEvent, QLocale
from PySide6.QtGui import QPageSize, QTextDocument
from PySide6.QtWidgets import QDialog, QFileDialog, QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout

from . import money
from .outbox import Op, Shift
from .texts import kind_words

KIND_ORDER = ("deduct", "capture", "refund", "credit", "hold", "void")
MONEY_MOVING_KINDS = ("deduct", "capture", "refund", "credit")


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
    open_holds: Tally = field(default_factory=Tally)

    @property
    def net_minor(self) -> int:
        """Charges and completed sales minus refunds (what the shift took from accounts)."""
        return (self.by_kind["deduct"].sum_minor + self.by_kind["capture"].sum_minor
                - self.by_kind["refund"].sum_minor)


def build_report(shift: Shift, ops: list[Op], open_holds: list[Op] = ()) -> ShiftReport:
    """`open_holds`: holds of this shift that were still open when it closed."""
    report = ShiftReport(shift, {k: Tally() for k in KIND_ORDER})
    for hold in open_holds:
        report.open_holds.add(hold.amount_minor)
    cashiers: dict[str, dict[str, Tally]] = defaultdict(lambda: {k: Tally() for k in KIND_ORDER})
    for op in ops:
        if op.pending:
            report.pending_count += 1
        elif op.applied:
            report.by_kind[op.kind].add(op.amount_minor)
            cashiers[op.cashier_id][op.kind].add(op.amount_minor)
        else:
            report.declined_count += 1
    report.by_cashier = dict(sorted(cashiers.items()))
    return report


def write_csv(report: ShiftReport, path: Path) -> None:
    """One row per (cashier or ALL, kind): counts and sums in minor units and in yuan."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["shift_id", "terminal_id", "opened_ms", "closed_ms", "cashier_id", "kind",
                    "count", "sum_minor", "sum_yuan"])
        s = report.shift
        rows = [("ALL", k, t) for k, t in report.by_kind.items()]
        rows += [(c, k, t) for c, kinds in report.by_cashier.items() for k, t in kinds.items() if t.count]
        for cashier, kind, t in rows:
            w.writerow([s.shift_id, s.terminal_id, s.opened_ms, s.closed_ms or "", cashier, kind,
                        t.count, t.sum_minor, money.format_plain(t.sum_minor)])
        w.writerow([s.shift_id, s.terminal_id, s.opened_ms, s.closed_ms or "", "ALL", "declined",
                    report.declined_count, 0, "0.00"])
        w.writerow([s.shift_id, s.terminal_id, s.opened_ms, s.closed_ms or "", "ALL", "open_holds",
                    report.open_holds.count, report.open_holds.sum_minor,
                    money.format_plain(report.open_holds.sum_minor)])
        w.writerow([s.shift_id, s.terminal_id, s.opened_ms, s.closed_ms or "", "ALL", "net",
                    "", report.net_minor, money.format_plain(report.net_minor)])


def _time(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms else "—"


class ShiftReportDialog(QDialog):
    """Shows a closed shift's report with Print, Save PDF and Save CSV."""

    def __init__(self, report: ShiftReport, parent=None):
        super().__init__(parent)
        self.setObjectName("shiftReportDialog")
        self.report = report
        self.view = QTextBrowser(objectName="reportView")
        self.print_button = QPushButton(objectName="printButton", clicked=self.print_report)
        self.pdf_button = QPushButton(objectName="pdfButton", clicked=lambda: self._ask_and_save("pdf"))
        self.csv_button = QPushButton(objectName="csvButton", clicked=lambda: self._ask_and_save("csv"))
        self.close_button = QPushButton(objectName="closeReportButton", clicked=self.accept)
        self.message = QLabel(objectName="reportMessage", wordWrap=True)
        buttons = QHBoxLayout()
        for b in (self.print_button, self.pdf_button, self.csv_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.resize(720, 640)
        self.retranslate()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Shift report"))
        self.print_button.setText(self.tr("Print…"))
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
        parts = ["<h2>" + html.escape(self.tr("Shift report")) + "</h2>",
                 "<p>" + html.escape(self.tr("Terminal %1, shift %2").replace("%1", r.shift.terminal_id)
                                     .replace("%2", str(r.shift.shift_id))) + "<br>"
                 + html.escape(self.tr("Opened %1 by %2").replace("%1", _time(r.shift.opened_ms))
                               .replace("%2", r.shift.opened_by)) + "<br>"
                 + html.escape(self.tr("Closed %1").replace("%1", _time(r.shift.closed_ms))) + "</p>",
                 f"<h3>{html.escape(all_cashiers)}</h3>",
                 "<table cellspacing='0' cellpadding='6' border='1'>" + head(cols)]
        for kind, t in r.by_kind.items():
            label = kind_words(kind) + ("" if kind in MONEY_MOVING_KINDS else " " + reserved)
            parts.append(f"<tr><td>{html.escape(label)}</td><td>{t.count}</td><td>{fmt(t.sum_minor)}</td></tr>")
        parts.append(f"<tr><td>{html.escape(declined)}</td><td>{r.declined_count}</td><td></td></tr>")
        parts.append(f"<tr><td><b>{html.escape(net)}</b></td><td></td>"
                     f"<td><b>{fmt(r.net_minor)}</b></td></tr></table>")
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
        for cashier, kinds in r.by_cashier.items():
            for kind, t in kinds.items():
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
