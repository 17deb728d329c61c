"""Where the sale screen's widgets sit (desktop/sale.py makes them): the account and
amount form with the charge buttons and the result panel on the left, the keypad and
the hold panel on the right, the history bar and the shift's history below; and the
heights that must not change with their texts.
"""
from __future__ import annotations

from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QVBoxLayout


def lay_out(page) -> QHBoxLayout:
    """Lay out `page` (a SalePage); answers the history bar (actions can be added to it)."""
    form = QGridLayout()
    form.setVerticalSpacing(6)
    form.addWidget(page.account_label, 0, 0, 1, 3)
    form.addWidget(page.account_input, 1, 0)
    form.addWidget(page.lookup_button, 1, 1)
    form.addWidget(page.members_button, 1, 2)
    form.addWidget(page.account_error, 2, 0, 1, 3)
    form.addWidget(page.balance_label, 3, 0, 1, 3)
    form.addWidget(page.amount_label, 4, 0, 1, 3)
    form.addWidget(page.amount_input, 5, 0, 1, 3)
    form.addWidget(page.amount_error, 6, 0, 1, 3)
    buttons = QHBoxLayout()
    buttons.addWidget(page.charge_button, 3)
    buttons.addWidget(page.hold_button, 2)
    buttons.addWidget(page.new_sale_button, 2)
    hold_panel = QFrame(objectName="holdPanel")
    hold_column = QVBoxLayout(hold_panel)
    hold_column.setContentsMargins(10, 6, 6, 6)
    hold_column.setSpacing(6)
    hold_column.addWidget(page.hold_info)
    hold_buttons = QHBoxLayout()
    hold_buttons.addWidget(page.complete_button, 3)
    hold_buttons.addWidget(page.release_button, 2)
    hold_column.addLayout(hold_buttons)
    left = QVBoxLayout()
    left.addLayout(form)
    left.addLayout(buttons)
    left.addWidget(page.result_label)
    right = QVBoxLayout()        # the keypad, and under it the hold panel (no extra height)
    right.addWidget(page.keypad, 1)
    right.addSpacing(8)
    right.addWidget(hold_panel, 0)
    top = QHBoxLayout()
    top.addLayout(left, 3)
    top.addSpacing(24)
    top.addLayout(right, 2)
    history_bar = QHBoxLayout()
    history_bar.addWidget(page.history_title)
    history_bar.addSpacing(12)
    history_bar.addWidget(page.notice_label, 1)
    history_bar.addWidget(page.top_up_button)
    history_bar.addWidget(page.refund_button)
    card = QFrame(objectName="saleCard")
    card.setLayout(top)
    top.setContentsMargins(12, 8, 12, 8)
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.setSpacing(6)
    outer.addWidget(card, 0)
    outer.addLayout(history_bar)
    outer.addWidget(page.history_table, 1)
    return history_bar


def fix_heights(page) -> None:
    """Heights that must not change with their text (so that no button moves when a
    notice, an error or a hold appears): set from the current (scaled) fonts."""
    page.notice_label.setFixedHeight(page.refund_button.sizeHint().height())
    page.hold_info.setFixedHeight(2 * page.hold_info.fontMetrics().lineSpacing() + 10)   # 2 lines, bold or not
    for label in (page.account_error, page.amount_error):
        label.setMinimumHeight(label.fontMetrics().lineSpacing())
    page.history_table.verticalHeader().setDefaultSectionSize(page.history_table.fontMetrics().height() + 8)
    # the result panel has room for three lines whatever it says
    page.result_label.setFixedHeight(3 * page.result_label.fontMetrics().lineSpacing() + 14)
