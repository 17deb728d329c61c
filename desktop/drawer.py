"""The cash drawer at the till: the opening float, cash in / cash out, the X report and
the shift's Z / X slips, added to the main window in one call (`install(window, settings)`).

- Opening float: a sign-in that opens a new shift asks for the cash the drawer starts
  with (`FloatDialog`; 0 allowed, typed like every amount, desktop/money.py). Cancelled,
  it is asked again at the next sign-in to the same shift; the report says "not entered".
- Cash in / cash out (paid-in / paid-out): Cash drawer… (F10) on the sale screen
  (`CashMoveDialog`): the amount, a reason (a choice, and words of one's own: required
  for "Other") and, above the setting drawer/approval_above_minor (fen; default ¥200),
  a supervisor's id and PIN (SupervisorDialog, checked by the gateway as a till-local
  approval). These movements change no member's balance: they are rows of the outbox's
  drawer table (desktop/outbox.py), never sent to the ledger; the shift report and the
  Z record it journals (core/shifts.py, through the outbox) add them up.
- Close shift: the close dialog (desktop/report.py CloseShiftDialog) asks for the
  drawer counted (the typed total, or By denomination…: `DenominationDialog`) and shows
  the cash expected and over/short before confirming.
- X report (F11 on the sale screen, or X report in the Cash in / cash out dialog): the
  report of the shift still open (nothing closed), printable.
- Slips: Print slip in the report dialogs prints the Z slip (closed) or the X slip
  (open) on the receipt printer (desktop/receipts/shift_slip.py, 58 or 80 mm), or
  shows it when no printer is set up; a closed shift's Z slip prints by itself when
  receipts print by themselves (receipts/auto_print).
"""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QCoreApplication, QLocale, Qt, Signal
from PySide6.QtGui import QIntValidator, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (QDialog, QFormLayout, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QScrollArea, QVBoxLayout, QWidget)

from . import money
from .i18n import Retranslates
from .keypad import Keypad
from .texts import DRAWER_REASONS, amount_error_words, drawer_reason_words
from .till_dialog import SupervisorDialog, TillDialog

log = logging.getLogger(__name__)

DEFAULT_APPROVAL_ABOVE_MINOR = 20_000       # ¥200: cash in / out above this needs a supervisor
MAX_NOTE_LEN = 120


def approval_above_minor(settings) -> int:
    """INI key drawer/approval_above_minor (fen, 0: every movement needs a supervisor)."""
    if settings is None:
        return DEFAULT_APPROVAL_ABOVE_MINOR
    return settings.int_setting("drawer/approval_above_minor", DEFAULT_APPROVAL_ABOVE_MINOR, 0, 10 ** 11)


def _parse(field: QLineEdit) -> int:
    return money.parse_cash_minor(field.text(), decimal_point=QLocale().decimalPoint())


class FloatDialog(TillDialog):
    """The opening float of a new shift: the cash the drawer starts with (0 allowed)."""

    def __init__(self, engine, shift, cashier, parent=None):
        super().__init__(parent)
        self.setObjectName("floatDialog")
        self.engine, self.shift, self.cashier = engine, shift, cashier
        self.hint = QLabel(objectName="floatHint", wordWrap=True)
        self.amount_label = QLabel()
        self.amount_input = QLineEdit(objectName="floatAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.message = QLabel(objectName="floatMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="floatConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="floatCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.amount_input))
        form = QFormLayout()
        form.addRow(self.amount_label, self.amount_input)
        self.keypad_layout(self.hint, form, buttons=self.button_row(), min_width_px=480)
        self.retranslate()
        self.amount_input.setFocus()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Opening float"))
        self.hint.setText(self.tr("Shift %1 opens: count the cash in the drawer and type it (0 if it is empty).")
                          .replace("%1", str(self.shift.shift_id)))
        self.amount_label.setText(self.tr("Opening float"))
        self.confirm_button.setText(self.tr("Start the shift"))
        self.cancel_button.setText(self.tr("Later"))

    def confirm(self) -> None:
        try:
            amount = _parse(self.amount_input)
        except money.AmountError as exc:
            self.fail(self.tr("Type the float (0 if the drawer is empty).") if exc.reason == money.EMPTY
                      else amount_error_words(exc.reason), self.amount_input)
            return
        try:
            self.engine.outbox.add_drawer(self.shift.shift_id, "float", amount, self.cashier.cashier_id)
        except ValueError:
            pass                       # entered meanwhile (another sign-in): the first one counts
        log.info("shift %d opening float %d by %s", self.shift.shift_id, amount, self.cashier.cashier_id)
        self.accept()


class CashMoveDialog(TillDialog):
    """Cash in / cash out: direction, amount, reason (and a note); a supervisor above
    `approval_above_minor`. Records a drawer row of the shift (no ledger operation).
    Its X report button closes it and asks for the X report (`xReportRequested`)."""
    xReportRequested = Signal()

    def __init__(self, engine, shift, cashier, approval_above_minor: int, parent=None, *, direction="cash_out"):
        super().__init__(parent)
        self.setObjectName("cashMoveDialog")
        self.engine, self.shift, self.cashier = engine, shift, cashier
        self.approval_above_minor = approval_above_minor
        self.supervisor_dialog: SupervisorDialog | None = None
        self.recorded = None
        self.hint = QLabel(objectName="cashMoveHint", wordWrap=True)
        direction_row, self.direction_buttons = self.choice_row(("cash_in", "cash_out"), "cashMove_", direction)
        reason_row, self.reason_buttons = self.choice_row(DRAWER_REASONS, "cashMoveReason_", "change")
        self.amount_input = QLineEdit(objectName="cashMoveAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.note_input = QLineEdit(objectName="cashMoveNoteInput")
        self.note_input.setMaxLength(MAX_NOTE_LEN)
        self.direction_label, self.amount_label, self.reason_label, self.note_label = (QLabel() for _ in range(4))
        self.message = QLabel(objectName="cashMoveMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="cashMoveConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="cashMoveCancelButton", clicked=self.reject)
        self.x_button = QPushButton(objectName="xReportButton", clicked=self._x_report)
        self.quiet_buttons(self.confirm_button, self.cancel_button, self.x_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.amount_input))
        form = QFormLayout()
        form.addRow(self.direction_label, direction_row)
        form.addRow(self.amount_label, self.amount_input)
        form.addRow(self.reason_label, reason_row)
        form.addRow(self.note_label, self.note_input)
        buttons = self.button_row()
        buttons.insertWidget(0, self.x_button)
        self.keypad_layout(self.hint, form, buttons=buttons, min_width_px=700)
        self.retranslate()
        self.amount_input.setFocus()

    @property
    def direction(self) -> str:
        return self.checked_choice(self.direction_buttons)

    @property
    def reason(self) -> str:
        return self.checked_choice(self.reason_buttons)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Cash in / cash out"))
        self.hint.setText(self.tr("Cash put into or taken out of the drawer (no member's balance changes). "
                                  "Above %1 a supervisor approves.")
                          .replace("%1", money.format_minor(self.approval_above_minor, QLocale())))
        self.direction_label.setText(self.tr("Drawer"))
        self.direction_buttons["cash_in"].setText(self.tr("Cash in"))
        self.direction_buttons["cash_out"].setText(self.tr("Cash out"))
        self.amount_label.setText(self.tr("Amount"))
        self.reason_label.setText(self.tr("Reason"))
        for reason, b in self.reason_buttons.items():
            b.setText(drawer_reason_words(reason))
        self.note_label.setText(self.tr("Note"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.x_button.setText(self.tr("X report  (F11)"))
        self.choice_changed()

    def choice_changed(self) -> None:
        action = self.tr("Cash in") if self.direction == "cash_in" else self.tr("Cash out")
        self.confirm_button.setText(self.with_choice(action, drawer_reason_words(self.reason)))

    def _x_report(self) -> None:
        self.reject()
        self.xReportRequested.emit()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_F11:
            self._x_report()
            return
        super().keyPressEvent(event)

    def confirm(self) -> None:
        try:
            amount = money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.fail(amount_error_words(exc.reason), self.amount_input)
            return
        note = " ".join(self.note_input.text().split())
        if self.reason == "other" and not note:
            self.fail(self.tr("Say what the cash is for (Note)."), self.note_input)
            return
        if amount > self.approval_above_minor:
            self.supervisor_dialog = SupervisorDialog(
                self.engine, self.tr("%1 of %2 needs a supervisor (above %3).")
                .replace("%1", self.tr("Cash in") if self.direction == "cash_in" else self.tr("Cash out"))
                .replace("%2", money.format_minor(amount, QLocale()))
                .replace("%3", money.format_minor(self.approval_above_minor, QLocale())),
                self, not_allowed=(self.cashier.cashier_id,), kind="drawer")
            self.supervisor_dialog.approvedBy.connect(lambda sup: self._record(amount, note, sup))
            self.supervisor_dialog.open()
            return
        self._record(amount, note, "")

    def _record(self, amount: int, note: str, approved_by: str) -> None:
        self.recorded = self.engine.outbox.add_drawer(self.shift.shift_id, self.direction, amount,
                                                      self.cashier.cashier_id, reason=self.reason, note=note,
                                                      approved_by=approved_by)
        log.info("shift %d %s %d (%s) by %s%s", self.shift.shift_id, self.direction, amount, self.reason,
                 self.cashier.cashier_id, f" approved by {approved_by}" if approved_by else "")
        self.accept()


DENOMINATIONS_MINOR = (10_000, 5_000, 2_000, 1_000, 500, 100, 50, 10)    # ¥100 … ¥0.1 notes and coins
MAX_PIECES = 99_999


class DenominationDialog(TillDialog):
    """The drawer counted note by note: how many of each denomination; the total (in
    fen, integer arithmetic only) goes back to the close dialog with the pieces
    (`counted(total_minor, {denomination_minor: pieces})`)."""
    counted = Signal(int, object)

    def __init__(self, parent=None, pieces: dict[int, int] | None = None):
        super().__init__(parent)
        self.setObjectName("denominationDialog")
        self.inputs: dict[int, QLineEdit] = {}
        self.labels: dict[int, QLabel] = {}
        grid = QGridLayout()
        for i, minor in enumerate(DENOMINATIONS_MINOR):
            field = QLineEdit(objectName=f"denomination_{minor}")
            field.setMaxLength(len(str(MAX_PIECES)))
            field.setValidator(QIntValidator(0, MAX_PIECES, field))
            if pieces and pieces.get(minor):
                field.setText(str(pieces[minor]))
            field.textChanged.connect(lambda _t: self._show_total())
            self.inputs[minor], self.labels[minor] = field, QLabel()
            grid.addWidget(self.labels[minor], i % 4, (i // 4) * 2)
            grid.addWidget(field, i % 4, (i // 4) * 2 + 1)
        self.total = QLabel(objectName="denominationTotal")
        self.message = QLabel(objectName="denominationMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="denominationConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="denominationCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.inputs[DENOMINATIONS_MINOR[0]]), with_point=False)
        self.keypad_layout(grid, self.total, buttons=self.button_row(), min_width_px=520)
        self.retranslate()

    def pieces(self) -> dict[int, int]:
        return {minor: int(f.text()) for minor, f in self.inputs.items() if f.text().isdigit() and int(f.text())}

    def total_minor(self) -> int:
        return sum(minor * n for minor, n in self.pieces().items())

    def _show_total(self) -> None:
        self.total.setText(self.tr("Total: %1").replace("%1", money.format_minor(self.total_minor(), QLocale())))

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Count by denomination"))
        for minor, label in self.labels.items():
            label.setText(money.format_minor(minor, loc) + " ×")
        self.confirm_button.setText(self.tr("Use this total"))
        self.cancel_button.setText(self.tr("Cancel"))
        self._show_total()

    def confirm(self) -> None:
        self.accept()
        self.counted.emit(self.total_minor(), self.pieces())


class SlipPreview(QDialog):
    """The slip as it would print (drawn like the receipt preview), for a till without a
    receipt printer; `text` is the same slip as text."""

    def __init__(self, items: list, columns: int, text: str, parent=None):
        from .receipts.preview import render_items
        super().__init__(parent)
        self.setObjectName("slipPreview")
        self.text = text
        self.setWindowTitle(QCoreApplication.translate("DrawerActions", "Slip"))
        picture = QLabel(objectName="slipPreviewImage")
        picture.setPixmap(QPixmap.fromImage(render_items(items, columns)))
        picture.setToolTip(text)
        area = QScrollArea(objectName="slipPreviewArea")
        area.setWidget(picture)
        area.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        close = QPushButton(QCoreApplication.translate("DrawerActions", "Close"), objectName="slipPreviewClose",
                            clicked=self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(area)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        self.resize(min(picture.pixmap().width() + 60, 700), 640)


class DrawerActions(Retranslates, QWidget):
    """Cash drawer… (F10) in the row above the shift's history (the row has room for one
    more button at 1024 px): it opens Cash in / cash out, whose X report button (also F11
    on the sale screen) shows the X report."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("drawerActions")
        self.cash_button = QPushButton(objectName="cashMoveButton")
        self.cash_button.setProperty("role", "quiet")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.cash_button)
        self.retranslate()

    def retranslate(self) -> None:
        self.cash_button.setText(self.tr("Cash drawer…  (F10)"))


class DrawerHook:
    """What the drawer added to a main window (MainWindow.drawer_hook)."""

    def __init__(self, window, settings=None):
        self.window = window
        self.settings = settings
        self.float_dialog: FloatDialog | None = None
        self.cash_dialog: CashMoveDialog | None = None
        self.x_report_dialog = None
        self.slip_preview: SlipPreview | None = None
        page = window.sale_page
        self.actions = DrawerActions()
        page.add_history_action(self.actions)
        self.actions.cash_button.clicked.connect(lambda: self.open_cash_move())
        self.shortcuts = (QShortcut(QKeySequence(Qt.Key.Key_F10), page, activated=self.actions.cash_button.click),
                          QShortcut(QKeySequence(Qt.Key.Key_F11), page, activated=self.open_x_report))
        # after the window's own slot: the shift is open, the sale screen shown
        window.sign_in_page.signedIn.connect(self.ask_float)

    @property
    def approval_above_minor(self) -> int:
        return approval_above_minor(self.settings)

    def _ready(self) -> bool:
        w = self.window
        return w.cashier is not None and w.shift is not None and w.stack.currentWidget() is w.sale_page

    def ask_float(self, _cashier=None) -> FloatDialog | None:
        """A shift without its opening float (it has just opened): ask for it."""
        w = self.window
        if not self._ready() or w.engine.outbox.has_float(w.shift.shift_id):
            return None
        self.float_dialog = FloatDialog(w.engine, w.shift, w.cashier, w)
        self.float_dialog.finished.connect(self._back_to_sale)
        self.float_dialog.open()
        return self.float_dialog

    def _back_to_sale(self, _result=None) -> None:
        """After the float: the cursor in the account field, as after any sign-in."""
        w = self.window
        if w.cashier is not None and w.stack.currentWidget() is w.sale_page:
            w.activateWindow()
            w.sale_page.account_input.setFocus()

    def open_cash_move(self, direction: str = "cash_out") -> CashMoveDialog | None:
        w = self.window
        if not self._ready():
            return None
        self.cash_dialog = CashMoveDialog(w.engine, w.shift, w.cashier, self.approval_above_minor, w,
                                          direction=direction if direction in ("cash_in", "cash_out") else "cash_out")
        self.cash_dialog.xReportRequested.connect(self.open_x_report)
        self.cash_dialog.open()
        return self.cash_dialog

    def open_x_report(self):
        """The X report: the open shift's report so far (nothing is closed)."""
        from .report import ShiftReportDialog
        w = self.window
        if not self._ready():
            return None
        self.x_report_dialog = ShiftReportDialog(w._shift_report(w.shift), w)
        self.x_report_dialog.open()
        return self.x_report_dialog

    # ---------------------------------------------------------------- slips

    def _service(self):
        return self.window.receipt_hooks.service

    def slip_items(self, report, columns: int | None = None) -> list:
        from .receipts.shift_slip import slip_layout
        service = self._service()
        return slip_layout(report, columns or service.config.columns, service.language,
                           shop_name=service.options.shop_name, printed_ms=int(time.time() * 1000))

    def print_slip(self, report) -> str:
        """Print the report's Z / X slip (or show it when no printer is set up); the words
        for the report dialog."""
        from .receipts.shift_slip import slip_text
        service = self._service()
        if not service.config.enabled:
            columns, now = service.config.columns, int(time.time() * 1000)
            self.slip_preview = SlipPreview(self.slip_items(report, columns), columns,
                                            slip_text(report, columns, service.language,
                                                      shop_name=service.options.shop_name, printed_ms=now),
                                            self.window)
            self.slip_preview.open()
            return QCoreApplication.translate("DrawerActions", "No receipt printer is set up: the slip is shown instead.")
        dialog = self.window.report_dialog if report.shift.closed_ms is not None else self.x_report_dialog

        def said(text: str) -> None:
            if dialog is not None:
                dialog.message.setText(text)
        service.print_items(self.slip_items(report), lambda: said(QCoreApplication.translate("DrawerActions", "Slip printed.")),
                            lambda _reason, detail: said(QCoreApplication.translate("DrawerActions", "Slip not printed: %1").replace("%1", detail)))
        return QCoreApplication.translate("DrawerActions", "Printing the slip…")

    def shift_closed(self, report) -> None:
        """A shift closed: its Z slip prints by itself when receipts do."""
        service = self._service()
        if service.options.auto_print and service.config.enabled:
            self.print_slip(report)


def install(window, settings=None) -> DrawerHook:
    return DrawerHook(window, settings)
