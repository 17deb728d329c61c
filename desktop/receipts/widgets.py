"""The receipt bar of the sale screen: what became of the last receipt (printed, or
"Receipt not printed" and why, in words a cashier can act on), a Reprint button, a
preview of the last receipt for shops without a printer, and the entry to refunds and
reprints of earlier sales ("Earlier sale…").
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from .reasons import NOT_CONFIGURED, OUT_OF_PAPER, TIMEOUT, UNREACHABLE, UNSUPPORTED
from .service import ReceiptService


class ReceiptBar(QWidget):
    earlierRequested = Signal()
    settingsRequested = Signal()

    def __init__(self, service: ReceiptService, parent=None, *, selected_receipt=lambda: None):
        super().__init__(parent)
        self.setObjectName("receiptBar")
        self.service = service
        self.selected_receipt = selected_receipt  # the receipt of the history's selected row, if any
        self.status_label = QLabel(objectName="receiptStatus", wordWrap=True)
        self.reprint_button = QPushButton(objectName="reprintLastButton", clicked=self.reprint_last)
        self.preview_button = QPushButton(objectName="previewReceiptButton", clicked=self.preview_last)
        self.earlier_button = QPushButton(objectName="earlierSaleButton", clicked=lambda: self.earlierRequested.emit())
        self.settings_button = QPushButton(objectName="receiptSettingsButton",
                                           clicked=lambda: self.settingsRequested.emit())
        for b in (self.reprint_button, self.preview_button, self.earlier_button, self.settings_button):
            b.setProperty("role", "quiet")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.status_label, 1)
        row.addWidget(self.preview_button)
        row.addWidget(self.reprint_button)
        row.addWidget(self.earlier_button)
        row.addWidget(self.settings_button)
        self.preview_dialog: QDialog | None = None
        self._state: tuple = ("", None, "")
        service.printed.connect(lambda r: self._show("printed", r))
        service.notPrinted.connect(lambda r, reason, _detail: self._show("failed", r, reason))
        service.lastChanged.connect(lambda r: self._show("ready" if not (service.options.auto_print and
                                                                         service.config.enabled) else "printing", r))
        self.retranslate()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.reprint_button.setText(self.tr("Reprint receipt"))
        self.preview_button.setText(self.tr("Show receipt"))
        self.earlier_button.setText(self.tr("Earlier sale…"))
        self.settings_button.setText(self.tr("Printer…"))
        self._show(*self._state)

    def reason_words(self, reason: str) -> str:
        return {
            NOT_CONFIGURED: self.tr("no receipt printer is set up (Settings)."),
            UNREACHABLE: self.tr("the printer is off, unplugged or not answering. Check it, then reprint."),
            OUT_OF_PAPER: self.tr("the printer is out of paper. Load a roll, then reprint."),
            TIMEOUT: self.tr("the printer did not answer in time. Check it, then reprint."),
            UNSUPPORTED: self.tr("this kind of printer connection is not available on this computer."),
        }.get(reason, self.tr("the printer reported an error. Check it, then reprint."))

    def _show(self, state: str, receipt, reason: str = "") -> None:
        self._state = (state, receipt, reason)
        has_last = self.service.last is not None
        self.reprint_button.setEnabled(has_last and self.service.config.enabled)
        self.preview_button.setEnabled(has_last)
        tone = ""
        if state == "printed":
            text = (self.tr("Receipt reprinted.") if receipt.reprint else self.tr("Receipt printed."))
        elif state == "failed":
            text = self.tr("Receipt not printed: %1 The sale itself is done.").replace("%1", self.reason_words(reason))
            tone = "error"
        elif state == "printing":
            text = self.tr("Printing the receipt…")
        elif state == "ready":
            text = self.tr("Receipt ready: print or show it.") if self.service.config.enabled else ""
        else:
            text = ""
        self.status_label.setText(text)
        self.status_label.setProperty("tone", tone)
        self.status_label.style().unpolish(self.status_label)
        self.status_label.style().polish(self.status_label)

    def reprint_last(self) -> None:
        """Reprint the operation selected in the shift's history, else the last receipt."""
        receipt = self.selected_receipt()
        if receipt is not None:
            self.service.print(receipt.as_reprint())
            self._show("printing", receipt)
        elif self.service.reprint_last():
            self._show("printing", self.service.last)

    def preview_last(self) -> None:
        if self.service.last is not None:
            self.preview_dialog = show_preview(self.service.last, self.service.config.paper_mm,
                                               self.service.config.symbology, self)


def show_preview(receipt, paper_mm: int, symbology: str, parent=None) -> QDialog:
    """A dialog with the receipt as it prints (the PNG preview)."""
    from .preview import render_image
    dialog = QDialog(parent, objectName="receiptPreviewDialog")
    tr = lambda text: QCoreApplication.translate("ReceiptBar", text)  # noqa: E731
    dialog.setWindowTitle(tr("Receipt %1").replace("%1", receipt.txn_id))
    image = QLabel(objectName="receiptPreviewImage")
    image.setPixmap(QPixmap.fromImage(render_image(receipt, paper_mm, symbology=symbology)))
    scroll = QScrollArea()
    scroll.setWidget(image)
    close = QPushButton(tr("Close"), objectName="receiptPreviewClose", clicked=dialog.accept)
    layout = QVBoxLayout(dialog)
    layout.addWidget(scroll, 1)
    layout.addWidget(close)
    dialog.resize(image.pixmap().width() + 60, 760)
    dialog.open()
    return dialog
