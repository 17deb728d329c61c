"""Members at the till (issue 14): the pick list of a look-up that found several
members, and Member… (F7): open a member account with its first card, change a card
(report it lost / damaged and issue the new one: no money moves), close an account
(退卡: the principal is paid out in cash, the bonus lapses).

Every action runs as one operation of the sale screen (outbox first, one txn id, the
same request on every re-send: desktop/engine.py), and its end is shown in an
`OutcomeDialog` that says what was done or why not; a dialog never closes without
the outcome being shown. Permissions: opening an account needs a cashier allowed to
top up (or a supervisor), else a supervisor's id and PIN in the dialog; changing a
card needs a supervisor's PIN every time; closing an account needs a supervisor's
PIN and, as for refunds, never the PIN of the supervisor at the till (four eyes).
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, QSize, Qt, Signal
from PySide6.QtWidgets import (QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPushButton, QVBoxLayout)

from core import InvalidRequest
from core.members import CARD_BLOCK_REASONS, check_phone
from core.validation import check_holder_name, check_id

from . import money
from .till_dialog import TillDialog
from .engine import new_member_id
from .keypad import Keypad
from .sale_session import Refusal
from .supervisor_fields import SupervisorFields
from .texts import (account_status_words, card_reason_words, id_error_words, kind_words, member_outcome_words,
                    refusal_words)


class MemberPickDialog(TillDialog):
    """Several members matched: arrows and Enter, or a tap on a row, picks one.
    `picked(account_id)`."""
    picked = Signal(str)

    def __init__(self, query: str, matches, parent=None):
        super().__init__(parent)
        self.setObjectName("memberPickDialog")
        self.query = query
        self.matches = list(matches)
        # the query is itself the card, account number or phone of each (engine.Found.ambiguous)
        self.ambiguous = any(getattr(m, "matched_by", "") in ("card", "account") for m in self.matches)
        self.title = QLabel(objectName="memberPickTitle", wordWrap=True)
        self.list = QListWidget(objectName="memberPickList")
        loc = QLocale()
        for m in self.matches:
            phone = f"…{m.phone[-4:]}" if len(m.phone) > 4 else m.phone
            text = f"{m.holder_name or '—'}   {phone}   {m.account_id}   {money.format_minor(m.balance_minor, loc)}"
            if m.bonus_minor:
                text += "  (" + QCoreApplication.translate("MemberPickDialog", "bonus {amount}").format(
                    amount=money.format_minor(m.bonus_minor, loc)) + ")"
            if m.status != "active":
                text += f"   ({account_status_words(m.status)})"
            if getattr(m, "matched_by", "") in ("card", "account"):      # an ambiguous string: say how each matched
                text += "   " + {"card": self.tr("(its card)"), "account": self.tr("(its account number)")}[m.matched_by]
            elif self.ambiguous:
                text += "   " + self.tr("(its phone)")
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, m.account_id)
            item.setSizeHint(QSize(0, 2 * self.list.fontMetrics().height() + 8))    # finger-sized rows
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self.list.itemClicked.connect(lambda item: self._pick(item))    # touch / mouse: one tap
        self.message = QLabel(objectName="memberPickMessage", wordWrap=True)
        self.confirm_button = QPushButton(objectName="memberPickConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="memberPickCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.message)
        layout.addLayout(self.button_row())
        self.setMinimumWidth(560)
        self.retranslate()
        self.list.setFocus()

    def first_field(self):
        return self.list               # the arrows move in the list from the first key on

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Pick the member"))
        if self.ambiguous:
            self.title.setText(self.tr("“%2” is the card, account number or phone of %1 different members. "
                                       "Ask the customer which one they are, then pick (arrows and Enter, or tap).")
                               .replace("%1", str(len(self.matches))).replace("%2", self.query))
        else:
            self.title.setText(self.tr("%1 members match “%2”: pick the customer (arrows and Enter, or tap).")
                               .replace("%1", str(len(self.matches))).replace("%2", self.query))
        self.confirm_button.setText(self.tr("This member"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        item = self.list.currentItem()
        if item is None:
            self.fail(self.tr("Pick a member in the list."), self.list)
            return
        self._pick(item)

    def _pick(self, item: QListWidgetItem) -> None:
        self.accept()
        self.picked.emit(item.data(Qt.ItemDataRole.UserRole))


class OutcomeDialog(TillDialog):
    """What became of a member operation, in full, with one OK."""

    def __init__(self, op, parent=None):
        super().__init__(parent)
        self.setObjectName("outcomeDialog")
        self.op = op
        self.text = QLabel(objectName="outcomeText", wordWrap=True)
        self.text.setProperty("tone", "approved" if op.applied else "declined")
        self.message = QLabel()
        self.confirm_button = QPushButton(objectName="outcomeOkButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.quiet_buttons(self.confirm_button)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.confirm_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(kind_words(self.op.kind))
        self.text.setText(member_outcome_words(self.op))
        self.confirm_button.setText(self.tr("OK"))

    def confirm(self) -> None:
        self.accept()


class MembersDialog(TillDialog):
    """Member…: the member's profile and the member actions; `chosen(action)` with
    profile, new, card, close, pin (the member sets their payment PIN), code (a
    supervisor enrols the member code) or pin_reset (a supervisor resets the PIN)."""
    chosen = Signal(str)

    def __init__(self, account_view, parent=None):
        super().__init__(parent)
        self.setObjectName("membersDialog")
        self.view = account_view
        self.about = QLabel(objectName="membersAbout", wordWrap=True)
        self.profile_button = QPushButton(objectName="memberProfileButton", clicked=lambda: self._choose("profile"))
        self.profile_button.setEnabled(account_view is not None)
        self.new_button = QPushButton(objectName="newMemberButton", clicked=lambda: self._choose("new"))
        self.card_button = QPushButton(objectName="changeCardButton", clicked=lambda: self._choose("card"))
        self.close_button = QPushButton(objectName="closeAccountButton", clicked=lambda: self._choose("close"))
        # the member's own confirmation of charges (desktop/member_security.py)
        self.pin_button = QPushButton(objectName="memberPinButton", clicked=lambda: self._choose("pin"))
        self.code_button = QPushButton(objectName="memberCodeButton", clicked=lambda: self._choose("code"))
        self.pin_reset_button = QPushButton(objectName="memberPinResetButton",
                                            clicked=lambda: self._choose("pin_reset"))
        for b in (self.card_button, self.close_button, self.pin_button, self.code_button, self.pin_reset_button):
            b.setEnabled(account_view is not None and account_view.status != "closed")
        self.message = QLabel(objectName="membersMessage", wordWrap=True)
        self.cancel_button = QPushButton(objectName="membersCancelButton", clicked=self.reject)
        self.confirm_button = self.new_button
        self.quiet_buttons(self.profile_button, self.new_button, self.card_button, self.close_button,
                           self.pin_button, self.code_button, self.pin_reset_button, self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.about)
        for b in (self.profile_button, self.new_button, self.card_button, self.close_button, self.pin_button,
                  self.code_button, self.pin_reset_button):
            b.setMinimumHeight(48)
            layout.addWidget(b)
        layout.addWidget(self.message)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.setMinimumWidth(480)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Member"))
        v = self.view
        self.about.setText(self.tr("Account on screen: %1").replace("%1", f"{v.account_id} {v.holder_name}".strip())
                           if v is not None else self.tr("No account on screen: look a member up first to change "
                                                         "a card or close an account."))
        self.profile_button.setText(self.tr("Member profile…"))
        self.new_button.setText(self.tr("New member and card…"))
        self.card_button.setText(self.tr("Lost card / new card…"))
        self.close_button.setText(self.tr("Close account (退卡)…"))
        self.pin_button.setText(self.tr("Payment PIN (支付密码)…"))
        self.code_button.setText(self.tr("Member code (会员码) QR…  (supervisor)"))
        self.pin_reset_button.setText(self.tr("Reset payment PIN / unlock…  (supervisor)"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        focus = self.focusWidget()
        if isinstance(focus, QPushButton) and focus.isEnabled():
            focus.click()

    def _choose(self, action: str) -> None:
        self.accept()
        self.chosen.emit(action)


class _MemberActionDialog(TillDialog):
    """A member action's dialog: its fields, the supervisor's id and PIN when needed,
    an inline message, Cancel and the action. Subclasses build `fields` and `request()`."""

    def __init__(self, sale_page, name: str, *, needs_supervisor: bool, four_eyes: bool = False, parent=None):
        super().__init__(parent)
        self.setObjectName(name)
        self.sale = sale_page
        self.engine = sale_page.engine
        self.needs_supervisor = needs_supervisor
        self.four_eyes = four_eyes
        self.summary = QLabel(objectName="memberSummary", wordWrap=True)
        self.form = QFormLayout()
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="memberMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="memberConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="memberCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)

    def finish_layout(self) -> None:
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(self.form)
        layout.addWidget(self.message)
        if self.needs_supervisor:
            self.supervisor.add_to(self.form)
            # touch-only tills: digits into the field with the cursor (the PIN by default)
            self.keypad = Keypad(lambda: self.focused_line_edit(self.pin_input), with_point=False)
            layout.addWidget(self.keypad)
        layout.addLayout(self.button_row())
        self.setMinimumWidth(540)
        self.retranslate()

    def retranslate(self) -> None:
        self.supervisor.set_labels(QCoreApplication.translate("MemberActionDialog", "Supervisor id"),
                                   QCoreApplication.translate("MemberActionDialog", "Supervisor PIN"))
        self.cancel_button.setText(QCoreApplication.translate("MemberActionDialog", "Cancel"))

    def request(self) -> dict | None:
        """The validated operation (start_operation's arguments), or None after `fail`."""
        raise NotImplementedError

    def confirm(self) -> None:
        request = self.request()
        if request is None:
            return
        if not self.needs_supervisor:
            self._start(request, "")
            return
        own = (self.sale.cashier.cashier_id,) if self.four_eyes and self.sale.cashier is not None else ()
        self.ask_supervisor(self.engine, self.supervisor,
                            lambda supervisor_id: self._start(request, supervisor_id), not_allowed=own,
                            not_allowed_text=QCoreApplication.translate("MemberActionDialog", "A supervisor cannot approve this at their own till: "
                                                     "ask another supervisor."))

    def _start(self, request: dict, approved_by: str) -> None:
        started = self.sale.try_operation(approved_by=approved_by, **request)
        if isinstance(started, Refusal):
            self.fail(refusal_words(started.reason))
            return
        self.accept()

    def checked_id(self, field: QLineEdit, label: str, *, optional: bool = False) -> str | None:
        text = field.text().strip()
        if optional and not text:
            return ""
        try:
            check_id(text, "card_no")
        except InvalidRequest as exc:
            self.fail(id_error_words(label, exc.reason), field)
            return None
        return text


class NewMemberDialog(_MemberActionDialog):
    """A member account (holder name, optional phone) with a new id, and its first card
    (scan it; optional: a card can be given later)."""

    def __init__(self, sale_page, *, needs_supervisor: bool, parent=None):
        super().__init__(sale_page, "newMemberDialog", needs_supervisor=needs_supervisor, parent=parent)
        self.account_id = new_member_id()
        self.holder_input = QLineEdit(objectName="holderInput")
        self.holder_input.setMaxLength(64)
        self.phone_input = QLineEdit(objectName="phoneInput")
        self.phone_input.setMaxLength(24)
        self.card_input = QLineEdit(objectName="newCardInput")
        self.card_input.setMaxLength(64)
        self.holder_label, self.phone_label, self.card_label = QLabel(), QLabel(), QLabel()
        self.form.addRow(self.holder_label, self.holder_input)
        self.form.addRow(self.phone_label, self.phone_input)
        self.form.addRow(self.card_label, self.card_input)
        self.scan_fields = (self.card_input,)
        self.finish_layout()
        self.holder_input.setFocus()

    def retranslate(self) -> None:
        super().retranslate()
        self.setWindowTitle(self.tr("New member"))
        self.summary.setText(self.tr("A new member account %1. The card is optional (it can be issued later).")
                             .replace("%1", self.account_id)
                             + ("\n" + self.tr("Opening an account needs a supervisor.") if self.needs_supervisor
                                else ""))
        self.holder_label.setText(self.tr("Name"))
        self.phone_label.setText(self.tr("Phone"))
        self.card_label.setText(self.tr("Card (scan it)"))
        self.confirm_button.setText(self.tr("Open account"))

    def request(self) -> dict | None:
        try:
            holder = check_holder_name(self.holder_input.text().strip())
        except InvalidRequest:
            self.fail(self.tr("Name: at most 64 characters, no control characters"), self.holder_input)
            return None
        if not holder:
            self.fail(self.tr("Name: enter the member's name"), self.holder_input)
            return None
        try:
            phone = check_phone(self.phone_input.text().strip())
        except InvalidRequest:
            self.fail(self.tr("Phone: 5 to 20 digits (an optional leading +)"), self.phone_input)
            return None
        card = self.checked_id(self.card_input, self.tr("Card"), optional=True)
        if card is None:
            return None
        return dict(kind="open", account_id=self.account_id, amount_minor=0, card_no=card,
                    detail={"holder": holder, "phone": phone})


class CardDialog(_MemberActionDialog):
    """Lost card / new card: block the old card (with the reason) and issue the new one
    to the same account; either may be left empty (report a loss now, give the new
    card later; or give a card to a member who has none). A supervisor approves."""

    def __init__(self, sale_page, view, parent=None):
        super().__init__(sale_page, "cardDialog", needs_supervisor=True, parent=parent)
        self.view = view
        self.old_input = QLineEdit(view.card_no or "", objectName="oldCardInput")
        self.old_input.setMaxLength(64)
        self.new_input = QLineEdit(objectName="newCardInput")
        self.new_input.setMaxLength(64)
        reasons, self.reason_buttons = self.choice_row(CARD_BLOCK_REASONS, "cardReason_", "lost")
        self.old_label, self.reason_label, self.new_label = QLabel(), QLabel(), QLabel()
        self.form.addRow(self.old_label, self.old_input)
        self.form.addRow(self.reason_label, reasons)
        self.form.addRow(self.new_label, self.new_input)
        # the member's cards with their states, read when the dialog opens (issue 26 item 9)
        self.cards = None
        self.cards_label = QLabel(objectName="memberCardsList", wordWrap=True)
        self.cards_caption = QLabel()
        self.form.addRow(self.cards_caption, self.cards_label)
        self.scan_fields = (self.old_input, self.new_input)
        self.finish_layout()
        (self.new_input if view.card_no else self.old_input).setFocus()
        self.cards_task = sale_page.engine.profile(view.account_id, self._cards_read, self._cards_failed)

    @property
    def reason(self) -> str:
        return self.checked_choice(self.reason_buttons)

    def retranslate(self) -> None:
        super().retranslate()
        self.setWindowTitle(self.tr("Lost card / new card"))
        self.summary.setText(self.tr("Account %1 %2: the old card is blocked, the new card gets the same "
                                     "account and balance (no money moves).")
                             .replace("%1", self.view.account_id).replace("%2", self.view.holder_name))
        self.old_label.setText(self.tr("Old card"))
        self.reason_label.setText(self.tr("Reason"))
        for reason, b in self.reason_buttons.items():
            b.setText(card_reason_words(reason))
        self.new_label.setText(self.tr("New card (scan it)"))
        self.cards_caption.setText(self.tr("The member's cards"))
        self._show_cards()
        self.choice_changed()

    def _cards_read(self, profile) -> None:
        self.cards = profile.cards
        self._show_cards()

    def _cards_failed(self, _exc: Exception) -> None:
        self.cards = ()
        self.cards_label.setText(self.tr("(could not be read)"))

    def _show_cards(self) -> None:
        if self.cards is None:
            self.cards_label.setText(self.tr("Reading…"))
            return
        lines = [(self.tr("%1: blocked (%2)").replace("%2", card_reason_words(c.reason) if c.reason else "?")
                  if c.status.name == "CARD_BLOCKED" else self.tr("%1: active")).replace("%1", c.card_no)
                 for c in self.cards]
        self.cards_label.setText("\n".join(lines) or self.tr("none (the account id is used as its card)"))

    def done(self, result: int) -> None:
        self.cards_task.cancel()
        super().done(result)

    def choice_changed(self) -> None:
        self.confirm_button.setText(self.with_choice(self.tr("Block and issue"), card_reason_words(self.reason)))

    def request(self) -> dict | None:
        old = self.checked_id(self.old_input, self.tr("Old card"), optional=True)
        if old is None:
            return None
        new = self.checked_id(self.new_input, self.tr("New card"), optional=True)
        if new is None:
            return None
        if not old and not new:
            self.fail(self.tr("Enter the old card, the new card, or both."), self.old_input)
            return None
        if old and old == new:
            self.fail(self.tr("New card: must differ from the old card"), self.new_input)
            return None
        return dict(kind="card_replace", account_id=self.view.account_id, amount_minor=0, card_no=new,
                    detail={"old_card": old, "reason": self.reason} if old else {})


class CloseAccountDialog(_MemberActionDialog):
    """Close account (退卡): shows the cash to pay out (the principal) and the bonus that
    lapses, as the account on screen has them; the ledger's answer is what is paid out
    (shown in the outcome). A supervisor other than the one at the till approves."""

    def __init__(self, sale_page, view, parent=None):
        super().__init__(sale_page, "closeAccountDialog", needs_supervisor=True, four_eyes=True, parent=parent)
        self.view = view
        self.payout = QLabel(objectName="closePayout", wordWrap=True)
        self.payout.setProperty("tone", "approved")
        self.form.addRow(self.payout)
        self.finish_layout()
        self.supervisor_input.setFocus()

    def retranslate(self) -> None:
        super().retranslate()
        loc, v = QLocale(), self.view
        self.setWindowTitle(self.tr("Close account"))
        self.summary.setText(self.tr("Close account %1 %2 and take back the card? Nothing can be done on it "
                                     "afterwards.").replace("%1", v.account_id).replace("%2", v.holder_name))
        text = self.tr("Pay out in cash: %1").replace("%1", money.format_minor(v.principal_minor, loc))
        if v.bonus_minor:
            text += "\n" + self.tr("Bonus forfeited: %1").replace("%1", money.format_minor(v.bonus_minor, loc))
        if v.held_minor:
            text += "\n" + self.tr("The account has open holds: complete or release them first.")
        self.payout.setText(text)
        self.confirm_button.setText(self.tr("Close account"))

    def request(self) -> dict | None:
        return dict(kind="close", account_id=self.view.account_id, amount_minor=0)
