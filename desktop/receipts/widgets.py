"""The receipt bar of the terminal: what became of the last receipt (printed, or
"Receipt not printed" and why, in words a cashier can act on), a Reprint button (a
preview of the receipt for shops without a printer), and the entry to refunds and
reprints of earlier sales ("Earlier sale…") and to the printer's settings.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from .reasons import NOT_CONFIGURED, OUT_OF_PAPER, TIMEOUT, UNREACHABLE, UNSUPPORTED
from .service import ReceiptService
from ..i18n import Retranslates


class ReceiptBar(Retranslates, QWidget):
    """Sits in the main window's status bar (the sale screen has no row to spare at
    1024x768): a short status with the whole reason in its tooltip and Printer…. Its
    buttons Reprint receipt (Show receipt when no printer is set up) and Earlier sale…
    live in `actions`, a widget the hook puts in the row above the shift's history."""
    earlierRequested = Signal()
    settingsRequested = Signal()

    def __init__(self, service: ReceiptService, parent=None, *, selected_receipt=lambda: None):
        super().__init__(parent)
        self.setObjectName("receiptBar")
        self.service = service
        self.selected_receipt = selected_receipt  # the receipt of the history's selected row, if any
        self.status_label = QLabel(objectName="receiptStatus")
        self.reprint_button = QPushButton(objectName="reprintLastButton", clicked=self.reprint_last)
        self.earlier_button = QPushButton(objectName="earlierSaleButton", clicked=lambda: self.earlierRequested.emit())
        self.settings_button = QPushButton(objectName="receiptSettingsButton",
                                           clicked=lambda: self.settingsRequested.emit())
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status_label, 1)
        row.addWidget(self.settings_button)
        self.actions = QWidget(objectName="receiptActions")
        actions_row = QHBoxLayout(self.actions)
        actions_row.setContentsMargins(0, 0, 0, 0)
        actions_row.addWidget(self.reprint_button)
        actions_row.addWidget(self.earlier_button)
        for b in (self.reprint_button, self.earlier_button, self.settings_button):
            b.setProperty("role", "quiet")
        self.preview_dialog: QDialog | None = None
        self._state: tuple = ("", None, "")
        service.printed.connect(lambda r: self._show("printed", r))
        service.notPrinted.connect(lambda r, reason, _detail: self._show("failed", r, reason))
        service.lastChanged.connect(lambda r: self._show("printing" if service.options.auto_print
                                                         and service.config.enabled else "ready", r))
        self.retranslate()

    def retranslate(self) -> None:
        self.earlier_button.setText(self.tr("Earlier sale…  (F3)"))
        self.settings_button.setText(self.tr("Printer…"))
        self._show(*self._state)

    def reason_words(self, reason: str) -> tuple[str, str]:
        """(a few words for the status bar, the whole reason and what to do)."""
        return {
            NOT_CONFIGURED: (self.tr("no printer set up"), self.tr("No receipt printer is set up (Printer…).")),
            UNREACHABLE: (self.tr("printer offline"),
                          self.tr("The printer is off, unplugged or not answering. Check it, then reprint.")),
            OUT_OF_PAPER: (self.tr("out of paper"), self.tr("The printer is out of paper. Load a roll, then reprint.")),
            TIMEOUT: (self.tr("printer not answering"),
                      self.tr("The printer did not answer in time. Check it, then reprint.")),
            UNSUPPORTED: (self.tr("printer type not available"),
                          self.tr("This kind of printer connection is not available on this computer.")),
        }.get(reason, (self.tr("printer error"), self.tr("The printer reported an error. Check it, then reprint.")))

    def _show(self, state: str, receipt, reason: str = "") -> None:
        self._state = (state, receipt, reason)
        printer = self.service.config.enabled
        self.reprint_button.setText(self.tr("Reprint receipt  (F4)") if printer else self.tr("Show receipt  (F4)"))
        self.reprint_button.setEnabled(self.service.last is not None)
        tone, tip = "", ""
        if state == "printed":
            text = (self.tr("Receipt reprinted.") if receipt.reprint else self.tr("Receipt printed."))
        elif state == "failed":
            short, tip = self.reason_words(reason)
            text = self.tr("Receipt not printed: %1").replace("%1", short)
            tip = tip + " " + self.tr("The sale itself is done.")
            tone = "error"
        elif state == "printing":
            text = self.tr("Printing the receipt…")
        else:
            text = ""
        self.status_label.setText(text)
        self.status_label.setToolTip(tip)
        self.status_label.setProperty("tone", tone)
        self.status_label.style().unpolish(self.status_label)
        self.status_label.style().polish(self.status_label)

    def customer_left(self) -> None:
        """The next customer: "Receipt printed." was the last one's (a slip that did not
        print stays said until it is reprinted)."""
        if self._state[0] == "printed":
            self._show("", None)

    def reprint_last(self) -> None:
        """Reprint the receipt selected in the shift's history, else the last one (or,
        with no printer set up, show it)."""
        receipt = self.selected_receipt() or self.service.last
        if receipt is None:
            return
        receipt = self.service.again(receipt)          # REPRINT only when printed before
        if not self.service.config.enabled:
            self.preview_dialog = show_preview(receipt, self.service.config.paper_mm,
                                               self.service.config.symbology, self)
            return
        self.service.print(receipt)
        self._show("printing", receipt)


TITLE_BAR_ROOM_PX = 60        # what a window manager's title bar and a panel may take of the screen


def show_preview(receipt, paper_mm: int, symbology: str, parent=None) -> QDialog:
    """A dialog with the receipt as it prints (the PNG preview)."""
    from .preview import render_image
    dialog = QDialog(parent, objectName="receiptPreviewDialog")
    translate = QCoreApplication.translate     # a literal context, so lupdate finds the texts
    dialog.setWindowTitle(translate("ReceiptBar", "Receipt %1").replace("%1", receipt.txn_id))
    image = QLabel(objectName="receiptPreviewImage")
    image.setPixmap(QPixmap.fromImage(render_image(receipt, paper_mm, symbology=symbology)))
    scroll = QScrollArea()
    scroll.setWidget(image)
    close = QPushButton(translate("ReceiptBar", "Close"), objectName="receiptPreviewClose", clicked=dialog.accept)
    layout = QVBoxLayout(dialog)
    layout.addWidget(scroll, 1)
    layout.addWidget(close)
    # the slip's whole width beside the vertical scroll bar, and no taller than the screen
    # leaves under a window manager's title bar (issue 26 item 14: 760 px on a 768 px screen)
    margins = layout.contentsMargins()
    width = (image.pixmap().width() + scroll.verticalScrollBar().sizeHint().width() + 2 * scroll.frameWidth()
             + margins.left() + margins.right() + 8)
    screen = (parent.screen() if parent is not None else dialog.screen()).availableGeometry()
    dialog.resize(min(max(width, image.pixmap().width() + 60), screen.width()),
                  min(760, screen.height() - TITLE_BAR_ROOM_PX))
    dialog.open()
    return dialog
