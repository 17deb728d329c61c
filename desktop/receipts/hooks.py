"""What receipts add to the terminal's main window, in one place, so the terminal's own
code needs one call (`install(window, settings)`):

- a receipt for every applied charge, completed sale, refund, top-up and card close the
  engine resolves in this run (printed at once with `auto_print`), and the receipt bar
  in the status bar: printed / "Receipt not printed" with the reason, Reprint, Show;
- "Earlier sale…": refund or reprint any sale of the refund window, from any terminal;
- the customer display, when the setting turns it on.

Operations that an earlier run left unresolved and that resolve after a restart get
no automatic slip: their customer has gone; the cashier can reprint them from the
history.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QLocale, QObject

from core.history import History
from core.kinds import RECEIPT_NUMBER_PATTERN

from .config import customer_display_options, printer_config, receipt_options
from .earlier import EarlierSaleDialog
from .service import ReceiptService
from .widgets import ReceiptBar

log = logging.getLogger(__name__)

# The terminal's txn ids (desktop.engine.new_txn_id): '<terminal>-<kind letter>-<32 hex>',
# letters from core.kinds (the money kinds and the card close, 退卡).
RECEIPT_NUMBER = re.compile(RECEIPT_NUMBER_PATTERN)


def _ui_language() -> str:
    """The language the terminal shows now (i18n.install sets the default locale)."""
    return "zh_CN" if QLocale().language() == QLocale.Language.Chinese else "en"


class _CloseWatcher(QObject):
    """When the main window closes: let a receipt being printed finish, close the display."""

    def __init__(self, hook, parent):
        super().__init__(parent)
        self.hook = hook

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Close:
            self.hook.service.wait(10_000)
            if self.hook.customer_display is not None:
                self.hook.customer_display.close()
        return False


@dataclass
class ReceiptsHook:
    service: ReceiptService
    bar: ReceiptBar
    customer_display: object | None = None
    settings: object | None = None           # the QSettings store, when the terminal has one


def _place_actions(page, actions) -> None:
    """Reprint / Earlier sale… go in the row above the shift's history, left of Top up…
    (found through the top-up button); without such a row, under the sale card."""
    layout = page.layout()
    for i in range(layout.count()):
        row = layout.itemAt(i).layout()
        if row is not None and row.indexOf(page.top_up_button) >= 0:
            row.insertWidget(row.indexOf(page.top_up_button), actions)
            return
    layout.insertWidget(1, actions)


def install(window, settings=None) -> ReceiptsHook:
    q = getattr(settings, "q", None)
    engine, page = window.engine, window.sale_page
    service = ReceiptService(engine.terminal_id, settings=q, ui_language=_ui_language,
                             history=History(engine.ledger), parent=window)

    def selected_receipt():
        op = page._selected_op()
        return service.receipt_for(op, window.cashier) if op is not None else None
    bar = ReceiptBar(service, window.statusBar(), selected_receipt=selected_receipt)
    window.statusBar().insertWidget(1, bar, 1)   # after the connection status; shown on the sale screen
    window.stack.currentChanged.connect(lambda _i: bar.setVisible(window.stack.currentWidget() is page))
    bar.setVisible(window.stack.currentWidget() is page)
    _place_actions(page, bar.actions)

    def resolved(op) -> None:
        if not op.recovered:
            service.operation_resolved(op, window.cashier)
    engine.opResolved.connect(resolved)

    window.earlier_dialog = None

    def open_earlier() -> None:
        if window.cashier is None:
            return
        window.earlier_dialog = EarlierSaleDialog(page, service, window,
                                                  refund_window_s=service.options.refund_window_s)
        window.earlier_dialog.open()
    bar.earlierRequested.connect(open_earlier)
    window.open_earlier = open_earlier

    def open_receipt(number: str) -> None:
        open_earlier()
        window.earlier_dialog.number_input.setText(number)
        window.earlier_dialog.load(number)

    def receipt_typed() -> None:
        """A receipt number typed (or scanned) into the account field: open that sale."""
        number = page.account_input.text().strip()
        if window.cashier is None or not RECEIPT_NUMBER.fullmatch(number):
            return
        page.account_input.clear()           # the account look-up's answer is then ignored
        page.balance_label.clear()
        open_receipt(number)
    page.account_input.returnPressed.connect(receipt_typed)
    detector = getattr(window, "scan_detector", None)     # the window's keyboard-wedge scanner
    if detector is not None:
        card_scanned = detector.on_scan

        def scanned(code: str) -> None:
            """A receipt's code scanned anywhere on the sale screen opens that sale; any
            other code is a card, as before."""
            if window.cashier is not None and RECEIPT_NUMBER.fullmatch(code):
                open_receipt(code)
            else:
                card_scanned(code)
        detector.on_scan = scanned

    hook = ReceiptsHook(service, bar, None, q)
    window.installEventFilter(_CloseWatcher(hook, window))
    window.receipt_settings_dialog = None
    if q is not None:
        def open_settings() -> None:
            from .printer_settings import PrinterSettingsDialog
            window.receipt_settings_dialog = PrinterSettingsDialog(q, service, window)
            window.receipt_settings_dialog.accepted.connect(lambda: apply_settings(window, hook))
            window.receipt_settings_dialog.open()
        bar.settingsRequested.connect(open_settings)
        window.open_receipt_settings = open_settings
    bar.settings_button.setVisible(q is not None)
    apply_settings(window, hook)
    window.receipts = service
    return hook


def apply_settings(window, hook: ReceiptsHook) -> None:
    """(Re)read the settings: printer, receipt options, customer display on or off."""
    q, service = hook.settings, hook.service
    if q is not None:
        service.config, service.options = printer_config(q), receipt_options(q)
    options = customer_display_options(q) if q is not None else None
    if hook.customer_display is not None:
        hook.customer_display.close()
        hook.customer_display.deleteLater()
        hook.customer_display = None
    if options is not None and options.enabled:
        from ..customer_display import CustomerDisplay
        display = CustomerDisplay(service.options.shop_name, options.language)
        display.watch(window.engine, window.sale_page)
        display.place(options.screen)
        hook.customer_display = display
    window.customer_display = hook.customer_display
    hook.bar.retranslate()
