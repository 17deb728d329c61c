"""What every dialog of the till is built on, and the two small dialogs every screen uses.

`TillDialog`: Enter anywhere in it runs its default action (`confirm`), never Cancel,
and an error keeps the dialog open with the message shown and the focus on the field
to correct (`fail`); Esc cancels. A card scanned into one of its `scan_fields` only
fills the field (the scanner's Enter is not the action). It lays out the button row,
the choice rows (`ChoiceButton`: payment method, card reason), finds the first field
to type in, and checks a supervisor's id and PIN on a worker thread
(`ask_supervisor`: the approval it yields is used up by one action).

`ConfirmDialog` asks yes or no (release a hold, a large amount in words);
`SupervisorDialog` asks for a supervisor's id and PIN before an action that needs one
(settings, closing another cashier's shift). The money dialogs (refund, top-up,
complete sale) are desktop/dialogs.py's.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtWidgets import (QButtonGroup, QDialog, QFormLayout, QHBoxLayout, QLabel, QLayout, QLineEdit,
                               QPushButton, QVBoxLayout, QWidget)

from core import InvalidRequest
from core.cashiers import check_pin
from core.validation import check_id

from .i18n import Retranslates
from .keypad import Keypad
from .supervisor_fields import SupervisorFields
from .texts import id_error_words, pin_error_words, signin_words

ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
CHECK_MARK = "✓ "


class ChoiceButton(QPushButton):
    """One choice of a row (payment method, card reason). The checked one stands out by
    more than colour: a check mark before its text, bold, a thick border (the style
    sheet's role "choice"), so that Cash and WeChat Pay can be told apart at a glance."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._label = ""
        self.setProperty("role", "choice")
        self.toggled.connect(lambda _on: self._show())

    def setText(self, text: str) -> None:
        self._label = text
        self._show()

    def label(self) -> str:
        """The choice's words, without the check mark."""
        return self._label

    def _show(self) -> None:
        super().setText((CHECK_MARK if self.isChecked() else "") + self._label)


class TillDialog(Retranslates, QDialog):
    """A dialog whose Enter is its default action. Subclasses define `confirm()` and
    `confirm_button`, and report errors with `fail(text, field)`."""

    message: QLabel
    confirm_button: QPushButton
    # Fields a card is scanned into: the scanner's Enter only ends the scan (the field is
    # filled, the cursor moves to the next empty field); Enter once more acts.
    scan_fields: tuple[QLineEdit, ...] = ()

    def button_row(self) -> QHBoxLayout:
        """Cancel then the default action, right-aligned (the same place in every dialog)."""
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.confirm_button)
        return buttons

    def keypad_layout(self, *top, buttons: QHBoxLayout, min_width_px: int) -> QVBoxLayout:
        """The keypad dialogs' one layout: `top` (widgets or layouts: what the dialog asks),
        the message line, the on-screen keypad, then the buttons."""
        layout = QVBoxLayout(self)
        for part in top:
            (layout.addLayout if isinstance(part, QLayout) else layout.addWidget)(part)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumWidth(min_width_px)
        return layout

    def keyPressEvent(self, event) -> None:
        if event.key() in ENTER_KEYS and self._scan_entered(self.focusWidget()):
            event.accept()
            return
        if event.key() in ENTER_KEYS:
            focus = self.focusWidget()
            if isinstance(focus, QPushButton) and focus is not self.confirm_button and not focus.isCheckable():
                focus.click()          # the cashier tabbed to Cancel on purpose (a choice tapped, e.g. the
                                       # payment method, keeps Enter the default action)
            elif self.confirm_button.isEnabled():
                self.confirm()
            event.accept()
            return
        super().keyPressEvent(event)

    def _scan_entered(self, focus) -> bool:
        """Enter in a scan field whose text is new since its last Enter: the end of a scan
        (or of typing the card), never the dialog's action. True when it was taken."""
        if focus not in self.scan_fields or not focus.text().strip():
            return False
        entered = getattr(self, "_scan_texts", {})
        self._scan_texts = entered
        if entered.get(id(focus)) == focus.text():
            return False                      # Enter again on what was scanned: act
        entered[id(focus)] = focus.text()
        nxt = focus.nextInFocusChain()
        while nxt is not None and nxt is not focus:
            if isinstance(nxt, QLineEdit) and nxt.isVisibleTo(self) and nxt.isEnabled() and not nxt.text():
                nxt.setFocus(Qt.FocusReason.TabFocusReason)
                break
            nxt = nxt.nextInFocusChain()
        return True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._fit_height)

    def _fit_height(self) -> None:
        # Word-wrapped labels make Qt under-estimate a dialog's height (the keypad's last
        # row was cut off): grow to what the layout needs at the width it got.
        layout = self.layout()
        if layout is None:
            return
        need = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else \
            layout.totalMinimumSize().height()
        if need > self.height():
            self.resize(self.width(), need)
        self._focus_first()

    def first_field(self) -> QWidget | None:
        """The field that has the cursor when the dialog opens: the first field to type
        in (in tab order), so that typed digits and a scan land there. Dialogs whose
        first input is not a line edit (the pick list) answer it here."""
        widget = self.nextInFocusChain()
        while widget is not None and widget is not self:
            if (isinstance(widget, QLineEdit) and widget.isVisibleTo(self) and widget.isEnabled()
                    and not widget.isReadOnly()):
                return widget
            widget = widget.nextInFocusChain()
        return None

    def _focus_first(self) -> None:
        focus = self.focusWidget()
        first = self.first_field()
        if focus is not None and focus is first:
            return
        if isinstance(focus, QLineEdit) and self.isAncestorOf(focus) and focus.isVisibleTo(self):
            return                     # the dialog chose its field (e.g. the new card)
        if first is not None:
            first.setFocus(Qt.FocusReason.OtherFocusReason)
            if isinstance(first, QLineEdit):
                first.selectAll()      # a prefilled amount is replaced by what is typed
        elif self.confirm_button.isEnabled():
            # Qt gives the focus to the first button when there is no field to type in:
            # that would make Enter mean Cancel. Enter means the default action unless
            # the cashier tabs to Cancel.
            self.confirm_button.setFocus()

    def done(self, result: int) -> None:
        super().done(result)
        # Give the keyboard back to the main window even without a window manager
        # (kiosk tills): its shortcuts and the scanner need it to be the active window.
        owner = self.parentWidget()
        if owner is not None and owner.window().isVisible():
            owner.window().activateWindow()

    def choice_row(self, choices, object_prefix: str, default: str) -> tuple[QHBoxLayout, dict[str, QPushButton]]:
        """One checkable button per choice (payment method, card reason), one of them
        checked (ChoiceButton: marked, not by colour alone): a tap each on touch tills,
        Tab and Space on the keyboard, and Enter still the dialog's default action.
        A change of choice calls `choice_changed()` (the confirm button repeats it)."""
        group = QButtonGroup(self)
        group.setExclusive(True)
        row, buttons = QHBoxLayout(), {}
        for choice in choices:
            b = ChoiceButton(objectName=f"{object_prefix}{choice}", checkable=True)
            b.setAutoDefault(False)
            group.addButton(b)
            buttons[choice] = b
            row.addWidget(b)
        buttons[default].setChecked(True)
        group.buttonToggled.connect(lambda _b, on: on and self.choice_changed())
        return row, buttons

    def choice_changed(self) -> None:
        """A choice row's choice changed (subclasses repeat it where the cashier confirms)."""

    @staticmethod
    def with_choice(action: str, choice: str) -> str:
        """The confirm button's text with the choice it confirms, e.g. "Top up · Cash"."""
        return f"{action}  ·  {choice}"

    @staticmethod
    def checked_choice(buttons: dict[str, QPushButton]) -> str:
        return next(choice for choice, b in buttons.items() if b.isChecked())

    def quiet_buttons(self, *buttons: QPushButton) -> None:
        # QDialog would click an "auto default" button on Enter, in its own order
        # (Cancel came first): the dialog's keyPressEvent decides instead.
        for b in buttons:
            b.setAutoDefault(False)
            b.setDefault(False)

    def fail(self, text: str, field: QWidget | None = None) -> None:
        """Show `text` and put the cursor in `field` (the one to correct)."""
        self.message.setText(text)
        if field is not None:
            field.setFocus()
            if isinstance(field, QLineEdit):
                field.selectAll()

    _busy = False

    def ask_supervisor(self, engine, fields: SupervisorFields, on_approved, *,
                       not_allowed: tuple[str, ...] = (), not_allowed_text: str = "", kind: str = "") -> None:
        """Check the supervisor id and PIN typed in `fields` (inline errors; the PIN on a
        worker thread), then `on_approved(supervisor_id)`: the approval is used up by
        that one action. `not_allowed` ids are refused with `not_allowed_text`."""
        if self._busy:
            return
        supervisor_input, pin_input = fields.supervisor_input, fields.pin_input
        supervisor_id = supervisor_input.text().strip()
        try:
            check_id(supervisor_id, "supervisor_id")
        except InvalidRequest as exc:
            self.fail(id_error_words(QCoreApplication.translate("TillDialog", "Supervisor id"), exc.reason), supervisor_input)
            return
        if supervisor_id in not_allowed:
            pin_input.clear()
            self.fail(not_allowed_text, supervisor_input)
            return
        pin = pin_input.text()
        pin_input.clear()
        try:
            check_pin(pin)
        except InvalidRequest as exc:
            self.fail(pin_error_words(exc.reason), pin_input)
            return
        self._busy = True
        self.confirm_button.setEnabled(False)
        self.message.setText(QCoreApplication.translate("TillDialog", "Checking the supervisor PIN…"))

        def answered(answer) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            signin, approval = answer
            if approval is None:
                self.fail(signin_words(signin.outcome, attempts_left=signin.attempts_left,
                                       locked_s=signin.locked_s),
                          supervisor_input if signin.outcome in ("not_supervisor", "self_approval") else pin_input)
                return
            on_approved(approval.use())          # one approval, one action

        def failed(_exc: Exception) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            self.fail(signin_words("offline"), pin_input)
        engine.approve(supervisor_id, pin, answered, failed, kind=kind)

    def focused_line_edit(self, default: QLineEdit) -> QLineEdit:
        """The keypad's target: the field with the cursor, else `default`."""
        focus = self.focusWidget()
        return focus if isinstance(focus, QLineEdit) and self.isAncestorOf(focus) else default


class ConfirmDialog(TillDialog):
    """Yes or no: `accepted` when the cashier confirms."""

    def __init__(self, text: str, yes_text: str, parent=None):
        super().__init__(parent)
        self.setObjectName("confirmDialog")
        self.text = QLabel(text, objectName="confirmText", wordWrap=True)
        self.message = QLabel(objectName="confirmMessage")
        self.confirm_button = QPushButton(yes_text, objectName="confirmYesButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="confirmNoButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        self.setMinimumWidth(460)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Please confirm"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        self.accept()


class SupervisorDialog(TillDialog):
    """A supervisor's id and PIN for one action (`purpose`): `approvedBy(supervisor_id)`
    once the PIN is checked; `not_allowed` ids (e.g. the cashier asking) are refused."""
    approvedBy = Signal(str)

    def __init__(self, engine, purpose: str, parent=None, *, not_allowed: tuple[str, ...] = (), kind: str = ""):
        """kind: what the gateway is asked to approve ('settings' for the till's own settings
        and printer; '' for the next operation)."""
        super().__init__(parent)
        self.setObjectName("supervisorDialog")
        self.engine = engine
        self.not_allowed = not_allowed
        self.kind = kind
        self.purpose = QLabel(purpose, objectName="supervisorPurpose", wordWrap=True)
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="supervisorMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="supervisorConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="supervisorCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.pin_input), with_point=False)
        form = QFormLayout()
        self.supervisor.add_to(form)
        self.keypad_layout(self.purpose, form, buttons=self.button_row(), min_width_px=480)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Supervisor approval"))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Approve"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        self.ask_supervisor(self.engine, self.supervisor, self._approved, not_allowed=self.not_allowed,
                            not_allowed_text=self.tr("Another supervisor must approve this."), kind=self.kind)

    def _approved(self, supervisor_id: str) -> None:
        self.accept()
        self.approvedBy.emit(supervisor_id)
