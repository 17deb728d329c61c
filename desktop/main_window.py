"""The terminal's main window: sign-in screen, sale screen, status bar and the
shift's life (opened at the first sign-in, closed with a shift report).

The status bar always shows the connection to the central Redis
(`connectionStatus`), the terminal id, the signed-in cashier and how many charges
are still being resolved. A shift may close with holds still open: the report lists
them, and they stay on the sale screen of the next shift until completed, released
or expired. When the engine resolves operations that an earlier run
left unresolved, the sale screen says so in plain words. Closing a shift is refused
while operations are still being checked, so the report is always complete; it is
confirmed with the shift's totals, and only the cashier who opened the shift or a
supervisor may close it (another cashier needs a supervisor's PIN; the report names
who closed it). Closing a shift also journals its Z record (core/shifts.py) through the outbox, so a
shift closed while Redis is away is recorded once it is back. Member… (F7) opens a
member account with its card, changes a lost card, closes an account
(desktop/members.py); each one's end is shown in an outcome dialog. The cash drawer
(opening float at a sign-in that opens a shift, Cash drawer… F10, X report F11, the
count at close, Z / X slips) is desktop/drawer.py's hook. A look-up that
finds several members opens the pick list. Settings need a supervisor's PIN. Card scans are recognised wherever
the focus is in the window (desktop/scanner.py). The window fits 1024x768 and scales
its type and controls with the screen (style.scale_for); on a screen up to 1280x800 it
opens maximised; `--fullscreen` or the setting ui/fullscreen starts it full screen (kiosk tills).
Operations too old to re-send (older than the ledger's retention minus an hour, see
desktop/engine.py) show as a status-bar button (`staleOpsButton`) and a notice on the
sale screen; the button opens the supervisor's dialog (desktop/stale_ops.py). When
Redis uses more than 90 % of its maxmemory the status bar shows a supervisor notice
(`memoryNotice`): at 100 % every charge is refused.
Lock (F2 or Ctrl+L), or the setting lock/idle_s without a key or a tap, covers the sale
screen and its dialogs until the signed-in cashier's PIN (or a supervisor's) unlocks it
(desktop/lock.py); a scan while locked does nothing.
"""
from __future__ import annotations

import logging

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QLabel, QMainWindow, QPushButton, QStackedWidget,
                               QVBoxLayout, QWidget)

from . import i18n, money
from .dialogs import CompleteSaleDialog, RefundDialog, TopUpDialog
from .engine import ONLINE, Engine
from .lock import LockPage, ScreenLock
from .receipts.hooks import install as install_receipts
from .member_profile import MemberProfileDialog
from .drawer import install as install_drawer
from .member_confirm import MemberConfirmation
from .member_security import MemberCodeEnrolDialog, MemberPinResetDialog, MemberPinSetDialog
from .members import (CardDialog, CloseAccountDialog, MemberPickDialog, MembersDialog, NewMemberDialog,
                      OutcomeDialog)
from core.kinds import BOOK_ONLY_KINDS, MEMBER_KINDS
from .report import CloseShiftDialog, ShiftReportDialog, build_report, shift_totals
from .sale import SalePage
from .scanner import ScanDetector, ScannerConfig
from .settings import DEFAULT_LOCK_IDLE_S, SettingsDialog, TerminalSettings
from .signin import SignInPage
from .stale_ops import StaleOpsDialog
from .till_dialog import SupervisorDialog
from .style import scale_for, style_sheet
from .sale_texts import offline_status_words
from .texts import connection_words, kind_words, short_status
from .i18n import Retranslates

log = logging.getLogger(__name__)
SMALL_SCREEN = (1280, 800)      # at most this (available) size: the window opens maximised


class MainWindow(Retranslates, QMainWindow):
    def __init__(self, engine: Engine, settings: TerminalSettings | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.engine = engine
        self.settings = settings
        self.cashier = None
        self.shift = None
        self.refund_dialog: RefundDialog | None = None
        self.top_up_dialog: TopUpDialog | None = None
        self.complete_dialog: CompleteSaleDialog | None = None
        self.report_dialog: ShiftReportDialog | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.close_shift_dialog: CloseShiftDialog | None = None
        self.supervisor_dialog: SupervisorDialog | None = None
        self.pick_dialog: MemberPickDialog | None = None
        self.members_dialog: MembersDialog | None = None
        self.member_dialog = None               # the member action's dialog
        self.outcome_dialog: OutcomeDialog | None = None
        self.stale_dialog: StaleOpsDialog | None = None
        self._scale = 0.0
        self.apply_scale(1.0)

        self.sign_in_page = SignInPage(engine)
        self.sale_page = SalePage(engine)
        self.lock_page = LockPage(engine)
        self.stack = QStackedWidget(objectName="pages")
        self.stack.addWidget(self.sign_in_page)
        self.stack.addWidget(self.sale_page)
        self.stack.addWidget(self.lock_page)
        self._focus_before_lock: QWidget | None = None

        self.brand = QLabel(objectName="brandLabel")
        self.cashier_banner = QLabel(objectName="cashierBanner")
        self.close_shift_button = QPushButton(objectName="closeShiftButton", clicked=self.close_shift)
        self.sign_out_button = QPushButton(objectName="signOutButton", clicked=self.sign_out)
        self.lock_button = QPushButton(objectName="lockButton", clicked=lambda: self.lock("button"))
        self.settings_button = QPushButton(objectName="settingsButton", clicked=self.open_settings)
        top = QHBoxLayout()
        top.addWidget(self.brand)
        top.addStretch(1)
        top.addWidget(self.cashier_banner)
        top.addSpacing(16)
        for b in (self.lock_button, self.close_shift_button, self.sign_out_button, self.settings_button):
            b.setProperty("role", "quiet")
            top.addWidget(b)
        body = QWidget(objectName="body")
        layout = QVBoxLayout(body)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(body)

        self.connection_status = QLabel(objectName="connectionStatus")
        self.terminal_status = QLabel(objectName="terminalStatus")
        self.cashier_status = QLabel(objectName="cashierStatus")
        self.pending_status = QLabel(objectName="pendingStatus")
        self.memory_notice = QLabel(objectName="memoryNotice")
        self.memory_notice.setProperty("tone", "error")
        self.memory_notice.setVisible(False)
        self.stale_button = QPushButton(objectName="staleOpsButton", clicked=self.open_stale_ops)
        self.stale_button.setProperty("role", "quiet")
        self.stale_button.setVisible(False)
        bar = self.statusBar()
        bar.addWidget(self.connection_status, 1)
        bar.addPermanentWidget(self.memory_notice)
        bar.addPermanentWidget(self.stale_button)
        bar.addPermanentWidget(self.pending_status)
        bar.addPermanentWidget(self.cashier_status)
        bar.addPermanentWidget(self.terminal_status)

        if settings is not None:
            self.sale_page.large_amount_minor = settings.large_amount_minor
        # locked, the lock page takes the scans: nothing is looked up or charged
        self.scan_detector = ScanDetector(self, self._scanned,
                                          lambda: self.stack.currentWidget() in (self.sale_page, self.lock_page),
                                          ScannerConfig.from_settings(settings))
        self.close_shift_shortcut = QShortcut(QKeySequence(Qt.Key.Key_F8), self, activated=self.close_shift)
        # the lock keys (F2, Ctrl+L; also in the window's dialogs) and the idle lock
        self.screen_lock = ScreenLock(self, settings.lock_idle_s if settings is not None else DEFAULT_LOCK_IDLE_S,
                                      self.lock, lambda: self.locked)
        self.lock_page.unlocked.connect(self.unlock)
        self.sign_in_page.signedIn.connect(self.signed_in)
        self.sale_page.refundRequested.connect(self.open_refund)
        self.sale_page.splitRequested.connect(self.open_split_tender)
        self.sale_page.topUpRequested.connect(self.open_top_up)
        self.sale_page.completeRequested.connect(self.open_complete_sale)
        self.sale_page.pickRequested.connect(self.open_pick_list)
        self.sale_page.lookupStarted.connect(self._drop_pick_list)
        self.sale_page.membersRequested.connect(self.open_members)
        engine.opResolved.connect(self._member_op_resolved)
        engine.connectionChanged.connect(lambda *_: self._update_status())
        engine.pendingChanged.connect(lambda *_: self._update_status())
        engine.recoveryFinished.connect(self._recovered)
        engine.staleChanged.connect(self._stale_changed)
        engine.memoryChanged.connect(lambda *_: self._update_status())
        engine.offlineChanged.connect(lambda *_: self._update_status())
        self.receipt_hooks = install_receipts(self, settings)   # receipts, earlier sales, customer display
        self.drawer_hook = install_drawer(self, settings)       # float, cash in/out, X report, slips
        # the member's PIN or code for a charge answered CONFIRMATION_REQUIRED, whichever screen started it
        self.member_confirmation = MemberConfirmation(self, engine)
        self.resize(1024, 720)
        self.retranslate()
        self.show_sign_in()

    # what receipts added (desktop/receipts/hooks.py), read from their hook
    receipts = property(lambda self: self.receipt_hooks.service)
    earlier_dialog = property(lambda self: self.receipt_hooks.earlier_dialog)
    receipt_settings_dialog = property(lambda self: self.receipt_hooks.settings_dialog)
    customer_display = property(lambda self: self.receipt_hooks.customer_display)

    def open_earlier(self) -> None:
        self.receipt_hooks.open_earlier()

    def open_receipt_settings(self) -> None:
        if self.receipt_hooks.open_settings is not None:
            self.receipt_hooks.open_settings()

    # ---------------------------------------------------------------- texts

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Cashier terminal"))
        self.brand.setText(self.tr("Member card payments"))
        self.close_shift_button.setText(self.tr("Close shift…  (F8)"))
        self.sign_out_button.setText(self.tr("Sign out"))
        self.lock_button.setText(self.tr("Lock  (F2)"))
        self.settings_button.setText(self.tr("Settings…"))
        self._update_status()

    def _update_status(self) -> None:
        state = self.engine.state
        use = self.engine.offline_use()       # selling offline: "offline: ¥X of ¥Y budget used"
        self.connection_status.setText("● " + (offline_status_words(use) if use is not None
                                               else connection_words(state)))
        self.connection_status.setProperty("tone", "ok" if state == ONLINE else
                                           "checking" if state in ("connecting", "reconnecting") or use is not None
                                           else "error")
        self.connection_status.style().unpolish(self.connection_status)
        self.connection_status.style().polish(self.connection_status)
        self.terminal_status.setText(self.tr("Terminal %1").replace("%1", self.engine.terminal_id))
        if self.cashier is not None:
            name = f"{self.cashier.name} ({self.cashier.cashier_id})"
            self.cashier_status.setText(self.tr("Cashier %1").replace("%1", name))
            self.cashier_banner.setText(self.tr("Shift %1 · %2").replace("%1", str(self.shift.shift_id))
                                        .replace("%2", name))
        else:
            self.cashier_status.setText(self.tr("Nobody signed in"))
            self.cashier_banner.setText("")
        count = self.engine.pending_count
        self.pending_status.setText(self.tr("Being checked: %1").replace("%1", str(count)))
        self.pending_status.setProperty("tone", "checking" if count else "")
        self.pending_status.style().unpolish(self.pending_status)
        self.pending_status.style().polish(self.pending_status)
        stale = len(self.engine.stale_ops())
        self.stale_button.setText(self.tr("Old operations: %1 — supervisor").replace("%1", str(stale)))
        self.stale_button.setVisible(bool(stale))
        share = self.engine.memory_share
        self.memory_notice.setVisible(self.engine.memory_notice)
        if share is not None:
            self.memory_notice.setText(self.tr(
                "Central server memory %1 % full: tell a supervisor (at 100 % charges are refused)")
                .replace("%1", str(int(share * 100))))

    # ---------------------------------------------------------------- session

    def show_sign_in(self) -> None:
        if self.cashier is not None:
            self.engine.sign_out(self.cashier.cashier_id)      # their session ends on the gateway
        self.cashier = None
        self.sale_page.stop()
        self.screen_lock.disarm()
        self.screen_lock.forget()
        self.sale_page.setEnabled(True)
        self.settings_button.setVisible(True)
        self.stack.setCurrentWidget(self.sign_in_page)
        self._session_buttons(False)
        self.sign_in_page.reset()
        self._update_status()

    def _session_buttons(self, visible: bool) -> None:
        for b in (self.close_shift_button, self.sign_out_button, self.lock_button):
            b.setVisible(visible)

    def signed_in(self, cashier) -> None:
        self.cashier = cashier
        self.shift = self.engine.outbox.open_shift(self.engine.terminal_id, cashier.cashier_id)
        log.info("cashier %s signed in; shift %d", cashier.cashier_id, self.shift.shift_id)
        self.sale_page.start(cashier, self.shift.shift_id, self.engine.outbox.ops_of_shift(self.shift.shift_id))
        self.stack.setCurrentWidget(self.sale_page)
        self._session_buttons(True)
        self._update_status()
        self.sale_page.account_input.setFocus()
        self.screen_lock.arm()

    def sign_out(self) -> None:
        if self.sale_page.busy_txn is not None:
            self.sale_page._set_result("checking", self.tr("Wait for the current operation to finish."))
            return
        log.info("cashier %s signed out", self.cashier.cashier_id if self.cashier else "-")
        self.show_sign_in()

    # ---------------------------------------------------------------- lock

    @property
    def locked(self) -> bool:
        return self.stack.currentWidget() is self.lock_page

    def lock(self, reason: str = "key") -> bool:
        """Lock (F2, Ctrl+L, the Lock button; idle): the sale screen and the window's
        dialogs are covered until the signed-in cashier's PIN or a supervisor's unlocks.
        Only with a cashier signed in on the sale screen; True when it locked."""
        if self.cashier is None or self.stack.currentWidget() is not self.sale_page:
            return False
        focus = QApplication.focusWidget()
        self._focus_before_lock = focus if focus is not None and self.sale_page.isAncestorOf(focus) else None
        self.screen_lock.disarm()
        self.screen_lock.cover()
        self.stack.setCurrentWidget(self.lock_page)
        # disabled too: what the sale screen does meanwhile (a charge decided puts the cursor
        # back in the account field) can never give it the keyboard, nor fire one of its keys
        self.sale_page.setEnabled(False)
        self._session_buttons(False)
        self.settings_button.setVisible(False)     # its dialogs would wait behind the lock
        self.activateWindow()
        self.lock_page.start(self.cashier)
        log.info("terminal locked (%s); cashier %s signed in", reason, self.cashier.cashier_id)
        return True

    def unlock(self, who: str) -> None:
        """The PIN was right: the sale screen as it was (the account, the amount typed, the
        result of what was decided meanwhile) and the dialogs that were open."""
        if not self.locked or self.cashier is None:
            return
        if who != self.cashier.cashier_id:
            log.info("terminal unlocked by supervisor %s; cashier %s signed in", who, self.cashier.cashier_id)
        else:
            log.info("terminal unlocked by cashier %s", who)
        self.sale_page.setEnabled(True)
        self.stack.setCurrentWidget(self.sale_page)
        self._session_buttons(True)
        self.settings_button.setVisible(True)
        if not self.screen_lock.uncover():
            focus = self._focus_before_lock
            (focus if focus is not None and focus.isVisibleTo(self.sale_page) else
             self.sale_page.account_input).setFocus()
        self._focus_before_lock = None
        self.screen_lock.arm()

    def _scanned(self, code: str) -> None:
        if self.locked:
            self.lock_page.scan_ignored()
            return
        self.sale_page.take_scan(code)

    def _recovered(self, ops) -> None:
        loc = QLocale()
        lines = [self.tr("Resolved after a restart:")]
        for op in ops:
            what = (f"{op.shift_id}" if op.kind in BOOK_ONLY_KINDS     # the Z record: no account, no amount
                    else f"{op.account_id} {money.format_minor(op.amount_minor, loc)}")
            lines.append(f"{kind_words(op.kind)} {what}: {short_status(op.status, op.pending)}")
        self.sale_page.show_notice("\n".join(lines))
        for op in ops:
            self.sale_page._add_or_update(op)

    def _stale_changed(self, ops) -> None:
        """Operations too old to re-send: the status-bar button, and the cashier is told why."""
        self._update_status()
        if ops and self.cashier is not None:
            self.sale_page.show_notice(self.tr(
                "%1 operation(s) got no answer and are too old to send again safely: a supervisor must "
                "decide (Old operations… in the status bar).").replace("%1", str(len(ops))))

    def open_stale_ops(self) -> StaleOpsDialog:
        self.stale_dialog = StaleOpsDialog(self.engine, self)
        self.stale_dialog.open()
        return self.stale_dialog

    # ---------------------------------------------------------------- actions

    def open_refund(self, op) -> None:
        self.refund_dialog = RefundDialog(self.sale_page, op, self)
        self.refund_dialog.open()

    def open_split_tender(self, view, bill_minor: int, method: str) -> None:
        from .split_tender import SplitTenderDialog
        self.split_dialog = SplitTenderDialog(self.sale_page, view, bill_minor, method, self)
        self.split_dialog.open()

    def open_complete_sale(self, hold) -> None:
        self.complete_dialog = CompleteSaleDialog(self.sale_page, hold, self)
        self.complete_dialog.open()

    def open_top_up(self, account_id: str) -> None:
        if self.cashier is None or not self.cashier.can_top_up:
            return
        self.top_up_dialog = TopUpDialog(self.sale_page, account_id, self)
        self.top_up_dialog.open()

    def open_pick_list(self, query: str, matches, lookup) -> MemberPickDialog:
        """`lookup`: the look-up (a workers.Task) that found `matches`; a pick made after the
        cashier moved on from it changes nothing."""
        self.pick_dialog = MemberPickDialog(query, matches, self)
        self.pick_dialog.picked.connect(lambda account_id: self.sale_page.pick(lookup, account_id))
        self.pick_dialog.open()
        return self.pick_dialog

    def _drop_pick_list(self) -> None:
        """A new look-up (typed, scanned): a pick list still open is for someone else."""
        if self.pick_dialog is not None and self.pick_dialog.isVisible():
            self.pick_dialog.reject()

    def open_members(self) -> MembersDialog | None:
        """Member… (F7): new member, lost card / new card, close account."""
        if self.cashier is None:
            return None
        page = self.sale_page
        view = page._account if page._account is not None and \
            page._account.account_id == page.account_input.text().strip() else None
        self.members_dialog = MembersDialog(view, self)
        self.members_dialog.chosen.connect(lambda action: self._open_member_action(action, view))
        self.members_dialog.open()
        return self.members_dialog

    def _open_member_action(self, action: str, view):
        if self.cashier is None:
            return None
        if action == "profile" and view is not None:
            self.member_dialog = MemberProfileDialog(self.engine, view, self)
        elif action == "new":
            own = self.cashier.can_top_up or self.cashier.supervisor
            self.member_dialog = NewMemberDialog(self.sale_page, needs_supervisor=not own, parent=self)
        elif view is None:
            return None
        elif action == "card":
            self.member_dialog = CardDialog(self.sale_page, view, self)
        elif action == "pin":
            self.member_dialog = MemberPinSetDialog(self.engine, view.account_id, self)
        elif action in ("code", "pin_reset"):
            dialog = MemberCodeEnrolDialog if action == "code" else MemberPinResetDialog
            self.member_dialog = dialog(self.engine, view.account_id, self, not_allowed=(self.cashier.cashier_id,))
        else:
            self.member_dialog = CloseAccountDialog(self.sale_page, view, self)
        self.member_dialog.open()
        return self.member_dialog

    def _member_op_resolved(self, op) -> None:
        """A member operation of this run is decided: say what became of it, in full."""
        if op.kind not in MEMBER_KINDS or op.recovered or self.cashier is None:
            return
        self.outcome_dialog = OutcomeDialog(op, self)
        self.outcome_dialog.open()
        if op.applied and op.kind == "open" and self.sale_page.account_input.text().strip() == op.account_id:
            self.sale_page.look_up()          # the new member on screen (unless the cashier moved on)

    def open_settings(self) -> None:
        """Settings…: a supervisor's PIN first; the dialog shows the values this run uses."""
        if self.settings is None:
            return
        self.supervisor_dialog = SupervisorDialog(
            self.engine, self.tr("The terminal settings need a supervisor."), self, kind="settings")
        self.supervisor_dialog.approvedBy.connect(self._open_settings_approved)
        self.supervisor_dialog.open()

    def _open_settings_approved(self, supervisor_id: str) -> None:
        log.info("settings opened with the approval of %s", supervisor_id)
        self.settings_dialog = SettingsDialog(self.settings, self, in_use={
            "terminal_id": self.engine.terminal_id, "gateway_urls": self.engine.gateway_urls})
        self.settings_dialog.accepted.connect(lambda: self.set_language(self.settings.language))
        self.settings_dialog.accepted.connect(lambda: self.screen_lock.set_idle_s(self.settings.lock_idle_s))
        self.settings_dialog.open()

    def set_language(self, setting: str) -> str:
        return i18n.install(setting)

    def _shift_report(self, shift):
        return build_report(shift, self.engine.outbox.ops_of_shift(shift.shift_id),
                            open_holds=[h for h in self.engine.outbox.open_holds() if h.shift_id == shift.shift_id],
                            drawer=self.engine.outbox.drawer_of_shift(shift.shift_id))

    def close_shift(self) -> CloseShiftDialog | None:
        """Close shift… (F8): refused while operations are unresolved; else the
        confirmation with the shift's totals. The cashier who opened the shift and
        supervisors confirm; anyone else needs a supervisor's id and PIN in it."""
        if self.shift is None or self.cashier is None or self.stack.currentWidget() is not self.sale_page:
            return None
        pending = [op for op in self.engine.unresolved() if op.shift_id == self.shift.shift_id]
        if pending or self.sale_page.busy_txn is not None:
            self.sale_page._set_result("checking", self.tr(
                "The shift cannot close yet: %1 operation(s) are still being checked.")
                .replace("%1", str(max(len(pending), 1))))
            return None
        own = self.cashier.cashier_id == self.shift.opened_by or self.cashier.supervisor
        self.close_shift_dialog = CloseShiftDialog(self.engine, self._shift_report(self.shift), self.cashier,
                                                   needs_supervisor=not own, parent=self)
        self.close_shift_dialog.closeConfirmed.connect(self.finish_close_shift)
        self.close_shift_dialog.open()
        return self.close_shift_dialog

    def finish_close_shift(self, approved_by: str = "") -> ShiftReportDialog | None:
        """The one place a shift is closed (confirmed, and approved when it had to be):
        the outbox records who closed it, its Z record goes to the central journal
        (core/shifts.close_shift, through the outbox: sent now, or once Redis is back),
        and its report is shown. The Z record's `closed_by` is the approving supervisor
        when one approved, else the cashier."""
        if self.shift is None or self.cashier is None:
            return None
        pending = [op for op in self.engine.unresolved() if op.shift_id == self.shift.shift_id]
        if pending or self.sale_page.busy_txn is not None:      # something started meanwhile
            self.sale_page._set_result("checking", self.tr(
                "The shift cannot close yet: %1 operation(s) are still being checked.")
                .replace("%1", str(max(len(pending), 1))))
            return None
        closed_by = self.cashier.cashier_id + (f"+{approved_by}" if approved_by else "")
        shift = self.engine.outbox.close_shift(self.shift.shift_id, closed_by)
        report = self._shift_report(shift)
        totals, extra = shift_totals(report)
        self.engine.close_shift(shift, approved_by or self.cashier.cashier_id, totals, extra)
        log.info("shift %d closed by %s%s", shift.shift_id, self.cashier.cashier_id,
                 f" (approved by {approved_by})" if approved_by else "")
        self.shift = None
        self.report_dialog = ShiftReportDialog(report, self)
        self.report_dialog.open()
        self.drawer_hook.shift_closed(report)                  # the Z slip, when slips print by themselves
        self.show_sign_in()
        return self.report_dialog

    # ---------------------------------------------------------------- screen size

    def show_full_screen(self) -> None:
        """Kiosk start (--fullscreen, ui/fullscreen): the whole screen, also where no
        window manager honours a full-screen request (then the geometry does it)."""
        self.setGeometry(self.screen().geometry())
        self.showFullScreen()

    def show_on_screen(self) -> None:
        """A normal start: maximised on a till's small screen (up to 1280x800, where a
        window of its own size would leave bits of the screen unused or run off it),
        else a window of the design size."""
        available = self.screen().availableGeometry()
        if available.width() <= SMALL_SCREEN[0] or available.height() <= SMALL_SCREEN[1]:
            self.showMaximized()
        else:
            self.show()

    def apply_scale(self, scale: float) -> None:
        """Type and controls grow with the screen (1.0 at 1024x768)."""
        if abs(scale - self._scale) < 0.04:
            return
        self._scale = scale
        self.setStyleSheet(style_sheet(scale))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.apply_scale(scale_for(self.width(), self.height()))

    def closeEvent(self, event) -> None:
        # Unresolved operations stay in the outbox and are resolved at the next start.
        self.scan_detector.uninstall()
        self.screen_lock.uninstall()
        self.engine.close()
        super().closeEvent(event)
