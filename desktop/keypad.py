"""The on-screen keypad for touch screens: digits, decimal point, 00, back and clear.

Its buttons never take the keyboard focus (so a scanner or keyboard keeps typing
into the field it was in) and are at least 56x48 px for a finger (larger on larger
screens: style.py scales them). It types into
whichever line edit `target()` returns.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLineEdit, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from .i18n import Retranslates

KEY_SIZE_PX = 48
_KEYS = [["7", "8", "9"], ["4", "5", "6"], ["1", "2", "3"], ["0", "00", "."]]


class Keypad(Retranslates, QWidget):
    pressed = Signal(str)

    def __init__(self, target: Callable[[], QLineEdit | None], parent=None, *, with_point: bool = True):
        super().__init__(parent)
        self.setObjectName("keypad")
        self._target = target
        grid = QGridLayout(self)
        grid.setSpacing(8)
        grid.setContentsMargins(0, 0, 0, 0)
        self.buttons: dict[str, QPushButton] = {}
        for r, row in enumerate(_KEYS):
            for c, key in enumerate(row):
                if key == "." and not with_point:
                    continue
                grid.addWidget(self._button(key, key), r, c)
        self.back_button = self._button("back", "⌫")
        self.clear_button = self._button("clear", "C")
        grid.addWidget(self.back_button, 0, 3, 2, 1)
        grid.addWidget(self.clear_button, 2, 3, 2, 1)
        self.retranslate()

    def _button(self, key: str, label: str) -> QPushButton:
        b = QPushButton(label, objectName=f"key_{key}" if key not in "." else "key_point")
        b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        b.setMinimumSize(KEY_SIZE_PX, KEY_SIZE_PX)
        b.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        b.setProperty("role", "key")
        b.clicked.connect(lambda: self.press(key))
        self.buttons[key] = b
        return b

    def retranslate(self) -> None:
        self.back_button.setToolTip(self.tr("Delete the last character"))
        self.clear_button.setToolTip(self.tr("Clear the field"))

    def press(self, key: str) -> None:
        field = self._target()
        if field is None or not field.isEnabled():
            return
        if key == "back":
            field.backspace()
        elif key == "clear":
            field.clear()
        else:
            field.insert(key)
        field.setFocus()
        self.pressed.emit(key)


def beside_keypad(page: QWidget, card: QWidget, keypad: QWidget) -> None:
    """Lay out a full-screen PIN page (sign-in, lock): the form's card and the keypad side
    by side, centred, a little above the middle."""
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(card, 3)
    row.addSpacing(24)
    row.addWidget(keypad, 2)
    row.addStretch(1)
    outer = QVBoxLayout(page)
    outer.addStretch(1)
    outer.addLayout(row)
    outer.addStretch(2)
