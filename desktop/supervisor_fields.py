"""The supervisor's id and PIN fields, one implementation for every dialog that asks a
supervisor to approve (refund, top-up settings, member actions, closing another
cashier's shift): the two line edits (objectNames supervisorInput and
supervisorPinInput, the PIN masked) and their labels, as two rows of the dialog's own
form, so that they line up with its other fields. The dialog names them in its own
words (`set_labels`) and checks them with TillDialog.ask_supervisor.
"""
from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QWidget

MAX_SUPERVISOR_ID_LEN = 64
MAX_PIN_LEN = 12


class SupervisorFields:
    def __init__(self):
        self.supervisor_input = QLineEdit(objectName="supervisorInput")
        self.supervisor_input.setMaxLength(MAX_SUPERVISOR_ID_LEN)
        self.pin_input = QLineEdit(objectName="supervisorPinInput", echoMode=QLineEdit.EchoMode.Password)
        self.pin_input.setMaxLength(MAX_PIN_LEN)
        self.supervisor_label, self.pin_label = QLabel(), QLabel()

    def add_to(self, form: QFormLayout) -> None:
        form.addRow(self.supervisor_label, self.supervisor_input)
        form.addRow(self.pin_label, self.pin_input)
        # "id Tab PIN": Tab from the id always lands in the masked PIN field
        QWidget.setTabOrder(self.supervisor_input, self.pin_input)

    def set_visible(self, visible: bool) -> None:
        for w in (self.supervisor_label, self.supervisor_input, self.pin_label, self.pin_input):
            w.setVisible(visible)

    def set_labels(self, supervisor_text: str, pin_text: str) -> None:
        self.supervisor_label.setText(supervisor_text)
        self.pin_label.setText(pin_text)
