"""The customer display: a second window that faces the customer (a second monitor, or
a small window beside the till), in the customer's language.

Idle, it shows the shop's name and a welcome. While the cashier types an amount it
shows the amount about to be charged; while the operation is with the ledger, "please
wait"; then the result (paid / refunded / topped up, or not paid and why in plain
words) and the balance after; a charge that needs the member's own confirmation (their
payment PIN or member code: CONFIRMATION_REQUIRED) shows the amount to confirm and asks
for it until the charge is re-sent or given up; after `RESULT_HOLD_MS`, or when the cashier moves on to
the next customer, it goes back to idle. It only listens: to the sale screen's amount
field and to the engine's answers, and never sends anything. Off by default; a setting
picks the screen. It never takes the keyboard (a scan typed while it had the focus would
be lost): it does not accept focus and is shown without being activated. On a till with
one screen it stays off unless it was placed (setting customer_display/geometry), so that
it never covers the sale screen.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QLocale, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from core import kinds

from . import money
from .i18n import locale_of
from .receipts.texts import language_of, text

RESULT_HOLD_MS = 15_000
DISPLAY_KINDS = kinds.DISPLAY_KINDS     # core.kinds: the operations the customer sees
IDLE, AMOUNT, WAITING, RESULT, CONFIRM = "idle", "amount", "waiting", "result", "confirm"

_STYLE = """
QWidget#customerDisplay { background: #10243d; }
QLabel { color: white; }
QLabel#displayShop { font-size: 40px; font-weight: 600; color: #cfe0f5; }
QLabel#displayTitle { font-size: 36px; color: #cfe0f5; }
QLabel#displayAmount { font-size: 96px; font-weight: 700; }
QLabel#displayBalance { font-size: 34px; color: #cfe0f5; }
QLabel#displayTitle[tone="approved"] { color: #8fe0a6; font-weight: 700; }
QLabel#displayTitle[tone="declined"] { color: #ffb4a8; font-weight: 700; }
"""


class CustomerDisplay(QWidget):
    def __init__(self, shop_name: str = "", language: str = "zh_CN", parent=None):
        super().__init__(parent, Qt.WindowType.Window | Qt.WindowType.WindowDoesNotAcceptFocus)
        self.setObjectName("customerDisplay")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWindowTitle(shop_name or "Customer display")
        self.setStyleSheet(_STYLE)
        self.shop_name = shop_name
        self.language = language_of(language)
        self.state = IDLE
        self.shop_label = QLabel(objectName="displayShop", alignment=Qt.AlignmentFlag.AlignCenter)
        self.title_label = QLabel(objectName="displayTitle", alignment=Qt.AlignmentFlag.AlignCenter)
        self.amount_label = QLabel(objectName="displayAmount", alignment=Qt.AlignmentFlag.AlignCenter)
        self.balance_label = QLabel(objectName="displayBalance", alignment=Qt.AlignmentFlag.AlignCenter,
                                    wordWrap=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(40, 30, 40, 30)
        layout.addWidget(self.shop_label)
        layout.addStretch(1)
        layout.addWidget(self.title_label)
        layout.addWidget(self.amount_label)
        layout.addWidget(self.balance_label)
        layout.addStretch(1)
        self._idle_timer = QTimer(self, singleShot=True, interval=RESULT_HOLD_MS, timeout=self.show_idle)
        self._watched: str | None = None          # txn id of the operation being shown
        self._seen: set[str] = set()
        self._till_window: QWidget | None = None   # the sale screen's window: the keyboard stays there
        self.resize(800, 480)
        self.show_idle()

    # ---------------------------------------------------------------- placement

    def place(self, screen_index: int, geometry: tuple[int, int, int, int] | None = None) -> bool:
        """Full screen on screen `screen_index` when the till has more than one screen;
        else a window at `geometry` (x, y, width, height) when it was placed, else off
        (hidden: it would cover the sale screen). True when it is shown."""
        screens = QGuiApplication.screens()
        if 0 <= screen_index < len(screens) and len(screens) > 1:
            self.setScreen(screens[screen_index])
            self.move(screens[screen_index].geometry().topLeft())
            self.showFullScreen()
        elif geometry is not None:
            self.setGeometry(*geometry)
            self.show()
        else:
            self.hide()
            return False
        return True

    def event(self, event) -> bool:
        # Window systems (and Qt's offscreen one) that ignore "does not accept focus" may
        # still activate it: the keyboard goes straight back to the till's window.
        if event.type() == QEvent.Type.WindowActivate:
            till = self._till_window
            if till is not None and till.isVisible():
                QTimer.singleShot(0, till.activateWindow)
        return super().event(event)

    # ---------------------------------------------------------------- states

    def _t(self, key: str) -> str:
        return text(self.language, key)

    def _fmt(self, amount_minor: int) -> str:
        return money.format_minor(amount_minor, locale_of(self.language))

    def _set(self, state: str, title: str, amount: str = "", balance: str = "", tone: str = "") -> None:
        self.state = state
        self.shop_label.setText(self.shop_name)
        self.title_label.setText(title)
        self.amount_label.setText(amount)
        self.balance_label.setText(balance)
        self.title_label.setProperty("tone", tone)
        self.title_label.style().unpolish(self.title_label)
        self.title_label.style().polish(self.title_label)

    def show_idle(self) -> None:
        self._idle_timer.stop()
        self._watched = None
        self._set(IDLE, self._t("display.welcome"))

    def show_amount(self, amount_minor: int, kind: str = "deduct") -> None:
        """The amount about to be charged (or refunded, or topped up)."""
        self._idle_timer.stop()
        title = {"refund": "display.to_refund", "credit": "display.to_top_up"}.get(kind, "display.to_pay")
        self._set(AMOUNT, self._t(title), self._fmt(amount_minor))

    def show_waiting(self, op) -> None:
        self._watched = op.txn_id
        self._idle_timer.stop()
        title = {"refund": "display.to_refund", "credit": "display.to_top_up"}.get(op.kind, "display.to_pay")
        self._set(WAITING, self._t(title), self._fmt(op.amount_minor), self._t("display.checking"))

    def show_confirm(self, op) -> None:
        """The amount the member is asked to confirm with their payment PIN or member code."""
        self._idle_timer.stop()
        self._watched = None
        self._set(CONFIRM, self._t("display.to_confirm"), self._fmt(op.amount_minor), self._t("display.confirm_pin"))

    def show_result(self, op) -> None:
        """The engine's answer for `op`: result and balance after, then idle after a while."""
        if op.applied:
            title = {"refund": "display.refunded", "credit": "display.topped_up"}.get(op.kind, "display.approved")
            balance = (f"{self._t('display.balance')} {self._fmt(op.balance_after_minor)}"
                       if op.balance_after_minor is not None else "")
            self._set(RESULT, self._t(title), self._fmt(op.amount_minor), balance, "approved")
        else:
            reason = {"INSUFFICIENT_FUNDS": "display.insufficient",
                      "ACCOUNT_FROZEN": "display.frozen"}.get(op.status, "display.other_decline")
            title = {"refund": "display.refund_declined", "credit": "display.top_up_declined"}.get(
                op.kind, "display.declined")
            self._set(RESULT, self._t(title), self._fmt(op.amount_minor), self._t(reason), "declined")
        self._watched = None
        self._idle_timer.start()

    # ---------------------------------------------------------------- wiring

    def watch(self, engine, sale_page) -> None:
        """Follow the sale screen's amount field and the engine: an operation shows from
        the moment the engine takes it (a new unresolved op) until its answer. Operations
        left by an earlier run are not shown (they belong to earlier customers)."""
        self._seen = {op.txn_id for op in engine.unresolved()}
        self._till_window = sale_page.window()
        sale_page.amount_input.textChanged.connect(self._amount_typed)
        engine.pendingChanged.connect(lambda _count: self._pending_changed(engine))
        engine.opResolved.connect(self._resolved)
        engine.opUncertain.connect(self._uncertain)

    def _amount_typed(self, typed: str) -> None:
        if self.state in (WAITING, CONFIRM):
            return
        if not typed.strip():
            if self.state == AMOUNT:
                self.show_idle()
            return
        try:
            amount_minor = money.parse_amount_minor(typed, decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return                                  # half-typed: keep what is shown
        self.show_amount(amount_minor)

    def _pending_changed(self, engine) -> None:
        for op in engine.unresolved():
            if op.txn_id not in self._seen:
                self._seen.add(op.txn_id)
                if op.kind in DISPLAY_KINDS:
                    self.show_waiting(op)

    def _uncertain(self, op) -> None:
        if op.txn_id == self._watched:
            self._set(WAITING, self.title_label.text(), self._fmt(op.amount_minor), self._t("display.checking"))

    def _resolved(self, op) -> None:
        self._seen.discard(op.txn_id)
        if op.txn_id == self._watched:
            if op.status == "CONFIRMATION_REQUIRED" and op.kind in ("deduct", "hold"):
                self.show_confirm(op)           # the till asks for the member's PIN or code now
            else:
                self.show_result(op)
