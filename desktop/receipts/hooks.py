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
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut


# The terminal's txn ids (desktop.engine.new_txn_id: '<terminal>-<kind letter>-<32 hex>')
# are recognised by the sale screen, which hands them here (SalePage.receiptRequested).
from ..sale import RECEIPT_NUMBER  # noqa: F401  (still importable from here)
from .config import customer_display_options, printer_config, receipt_options
from .earlier import EarlierSaleDialog
from .service import ReceiptService
from .widgets import ReceiptBar

log = logging.getLogger(__name__)



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
    """What receipts added to a main window; the window reads its service, dialogs and
    customer display from here (MainWindow.receipts, .earlier_dialog, ...)."""
    service: ReceiptService
    bar: ReceiptBar
    customer_display: object | None = None
    settings: object | None = None           # the QSettings store, when the terminal has one
    earlier_dialog: EarlierSaleDialog | None = None
    settings_dialog: object | None = None    # the printer settings dialog, when open
    supervisor_dialog: object | None = None  # the supervisor's approval asked before it opens
    open_earlier: Callable[[], None] = lambda: None
    open_settings: Callable[[], None] | None = None
    shortcuts: tuple = ()                    # F3 Earlier sale…, F4 Reprint (on the sale screen)


def install(window, settings=None) -> ReceiptsHook:
    """Connect receipts to `window`'s signals (the engine's resolved operations, the
    sale screen's receipt numbers, the receipt bar's buttons); nothing is set on the
    window: it reads what it needs from the hook answered."""
    q = getattr(settings, "q", None)
    engine, page = window.engine, window.sale_page
    service = ReceiptService(engine.terminal_id, settings=q, ui_language=_ui_language,
                             history=engine.history, parent=window)

    def selected_receipt():
        op = page.selected_op()
        return service.receipt_for(op, window.cashier) if op is not None else None
    bar = ReceiptBar(service, window.statusBar(), selected_receipt=selected_receipt)
    window.statusBar().insertWidget(1, bar, 1)   # after the connection status; shown on the sale screen
    window.stack.currentChanged.connect(lambda _i: bar.setVisible(window.stack.currentWidget() is page))
    bar.setVisible(window.stack.currentWidget() is page)
    page.add_history_action(bar.actions)
    page.nextCustomer.connect(bar.customer_left)
    hook = ReceiptsHook(service, bar, None, q)

    def resolved(op) -> None:
        if not op.recovered:
            service.operation_resolved(op, window.cashier)
    engine.opResolved.connect(resolved)
    # a sale made offline: its slip (marked OFFLINE) as soon as it is saved
    engine.offlineSale.connect(lambda op: service.operation_made_offline(op, window.cashier))

    def open_earlier() -> None:
        if window.cashier is None:
            return
        hook.earlier_dialog = EarlierSaleDialog(page, service, window,
                                                refund_window_s=service.options.refund_window_s)
        hook.earlier_dialog.open()
    bar.earlierRequested.connect(open_earlier)
    hook.open_earlier = open_earlier
    # keyboard-only tills: every action has a key, shown on its button (the sale screen's own
    # keys: F5 refund, F6 top-up, F7 member, F8 close shift, F9 hold, F12 charge)
    hook.shortcuts = (QShortcut(QKeySequence(Qt.Key.Key_F3), page, activated=bar.earlier_button.click),
                      QShortcut(QKeySequence(Qt.Key.Key_F4), page, activated=bar.reprint_button.click))

    def open_receipt(number: str) -> None:
        open_earlier()
        hook.earlier_dialog.number_input.setText(number)
        hook.earlier_dialog.load(number)
    # a receipt number typed into the account field or scanned anywhere on the sale screen
    page.receiptRequested.connect(open_receipt)

    window.installEventFilter(_CloseWatcher(hook, window))
    if q is not None:
        def open_settings() -> None:
            """Printer…: like Settings…, a supervisor's id and PIN first (the shop name on
            the slips, automatic printing and the cash drawer are the shop's)."""
            from ..till_dialog import SupervisorDialog
            hook.supervisor_dialog = SupervisorDialog(
                engine, QCoreApplication.translate("ReceiptBar", "The receipt and printer settings need a supervisor."),
                window, kind="settings")
            hook.supervisor_dialog.approvedBy.connect(open_settings_approved)
            hook.supervisor_dialog.open()

        def open_settings_approved(supervisor_id: str) -> None:
            from .printer_settings import PrinterSettingsDialog
            log.info("receipt settings opened with the approval of %s", supervisor_id)
            hook.settings_dialog = PrinterSettingsDialog(q, service, window)
            hook.settings_dialog.accepted.connect(lambda: apply_settings(window, hook))
            hook.settings_dialog.open()
        bar.settingsRequested.connect(open_settings)
        hook.open_settings = open_settings
    bar.settings_button.setVisible(q is not None)
    apply_settings(window, hook)
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
        display.place(options.screen, options.geometry)
        hook.customer_display = display
    hook.bar.retranslate()
