"""The sale screen's widgets (desktop/sale.py's SalePage), the way a Qt Designer form's
setupUi and retranslateUi make them: each widget with its objectName, the buttons and
keys wired to the page's actions, where they sit (the account and amount form with the
charge buttons and the result panel on the left, the keypad and the hold panel on the
right, the history bar and the shift's history below), their fixed texts, the
heights that must not change with their texts, and the Tab order (`set_tab_order`:
account, amount, charge and the sale's other buttons, the look-up's buttons, the hold
panel, the history bar left to right, the history).
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QFrame, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)

from . import money
from .history_model import HistoryTable
from .keypad import Keypad


# lupdate finds `translate("SalePage", "...")` calls by their literal context (a
# wrapper taking only the text would put them in no context at all)
translate = QCoreApplication.translate


def setup_ui(page) -> None:
    """Make `page`'s widgets (as its attributes), its keys, and lay them out."""
    page.account_label, page.amount_label = QLabel(), QLabel()
    page.account_input = QLineEdit(objectName="accountInput")
    page.account_input.setMaxLength(64)
    page.lookup_button = QPushButton(objectName="lookupButton", clicked=page.look_up)
    page.members_button = QPushButton(objectName="membersButton", clicked=lambda: page.membersRequested.emit())
    page.account_error = QLabel(objectName="accountError", wordWrap=True)
    page.account_error.setProperty("tone", "error")
    page.balance_label = QLabel(objectName="balanceLabel", wordWrap=True)
    page.amount_input = QLineEdit(objectName="amountInput")
    page.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
    page.amount_input.setProperty("amountField", True)     # desktop/scanner.py: its own typing is no scan
    page.amount_error = QLabel(objectName="amountError", wordWrap=True)
    page.amount_error.setProperty("tone", "error")
    page.charge_button = QPushButton(objectName="chargeButton", clicked=page.charge)
    page.charge_button.setProperty("role", "charge")
    page.hold_button = QPushButton(objectName="holdButton", clicked=page.hold)
    page.hold_info = QLabel(objectName="holdInfoLabel", wordWrap=True)
    page.complete_button = QPushButton(objectName="completeSaleButton", clicked=page.complete_sale)
    page.complete_button.setProperty("role", "primary")
    page.release_button = QPushButton(objectName="releaseHoldButton", clicked=page.release_hold)
    page.new_sale_button = QPushButton(objectName="newSaleButton", clicked=page.new_sale)
    page.result_label = QLabel(objectName="resultLabel", wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter)
    # The notice sits in the history bar with a fixed height, always laid out (empty
    # when there is nothing to say), so that nothing moves when it appears.
    page.notice_label = QLabel(objectName="noticeLabel", wordWrap=True)
    page.notice_label.setProperty("tone", "none")
    page.notice_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    page.keypad = Keypad(lambda: page.amount_input)
    page.keypad.setMaximumHeight(330)
    page.history_title = QLabel(objectName="historyTitle")
    page.history_table = HistoryTable(page.session.history, page.engine)
    page.refund_button = QPushButton(objectName="refundButton", clicked=page.ask_refund)
    page.refund_button.setEnabled(False)
    page.top_up_button = QPushButton(objectName="topUpButton",
                                     clicked=lambda: page.topUpRequested.emit(page.account_input.text().strip()))

    page.f12 = QShortcut(QKeySequence(Qt.Key.Key_F12), page, activated=page.charge)
    page.f9 = QShortcut(QKeySequence(Qt.Key.Key_F9), page, activated=page.hold)
    # keyboard-only tills: every action has a key, shown on its button
    page.esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), page, activated=page.new_sale)
    page.f5 = QShortcut(QKeySequence(Qt.Key.Key_F5), page, activated=page.refund_shortcut)
    page.f6 = QShortcut(QKeySequence(Qt.Key.Key_F6), page, activated=page.top_up_button.click)
    page.f7 = QShortcut(QKeySequence(Qt.Key.Key_F7), page, activated=page.members_button.click)
    # split tender (issue 31): the card pays part, the rest in cash (F1) or by WeChat (Insert; F2 locks)
    page.split_cash_button = QPushButton(objectName="splitCashButton", clicked=lambda: page.split_tender("cash"))
    page.split_wechat_button = QPushButton(objectName="splitWechatButton", clicked=lambda: page.split_tender("wechat"))
    page.f1 = QShortcut(QKeySequence(Qt.Key.Key_F1), page, activated=lambda: page.split_tender("cash"))
    page.ins = QShortcut(QKeySequence(Qt.Key.Key_Insert), page, activated=lambda: page.split_tender("wechat"))
    page.history_bar = lay_out(page)
    set_tab_order(page)


def retranslate_ui(page) -> None:
    """The texts that do not depend on the sale's state."""
    page.account_label.setText(translate("SalePage", "Account (scan the card or type)"))
    page.account_input.setPlaceholderText(translate("SalePage", "Card, phone or name"))
    page.lookup_button.setText(translate("SalePage", "Look up"))
    page.members_button.setText(translate("SalePage", "Member…  (F7)"))
    page.amount_label.setText(translate("SalePage", "Amount"))
    page.amount_input.setPlaceholderText(money.format_minor(0, QLocale()))
    page.charge_button.setText(translate("SalePage", "Charge  (F12)"))
    page.hold_button.setText(translate("SalePage", "Hold  (F9)"))
    # the card pays part of the bill, the rest in cash / by WeChat (desktop/split_tender.py)
    page.split_cash_button.setText(translate("SalePage", "+ Cash  (F1)"))
    page.split_cash_button.setToolTip(translate("SalePage", "The card pays part of the bill, the rest in cash"))
    page.split_wechat_button.setToolTip(translate("SalePage", "The card pays part of the bill, the rest by WeChat Pay"))
    page.split_wechat_button.setText(translate("SalePage", "+ WeChat  (Ins)"))
    page.complete_button.setText(translate("SalePage", "Complete sale…"))
    page.release_button.setText(translate("SalePage", "Release hold"))
    page.new_sale_button.setText(translate("SalePage", "Next customer  (Esc)"))
    page.history_title.setText(translate("SalePage", "This shift"))
    page.refund_button.setText(translate("SalePage", "Refund…  (F5)"))
    page.top_up_button.setText(translate("SalePage", "Top up…  (F6)"))


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
    split_buttons = QHBoxLayout()      # under the keypad: the card pays part, the rest in cash / WeChat
    split_buttons.addWidget(page.split_cash_button)
    split_buttons.addWidget(page.split_wechat_button)
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
    right.addLayout(split_buttons)
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


def set_tab_order(page) -> None:
    """Tab goes account -> amount -> Charge -> Hold -> Next customer, then Look up and
    Member… (Enter and F7 do those from the account field), + Cash and + WeChat (F1 and
    Insert do those), the hold panel's buttons, the history bar's buttons left to right
    (Reprint and Earlier sale are added later: called again then) and the history.
    Disabled widgets are skipped by Qt."""
    bar = []
    for i in range(page.history_bar.count()):
        widget = page.history_bar.itemAt(i).widget()
        if widget is None:
            continue
        # a widget of several buttons (the receipts' bar): its buttons, in their order
        bar += [widget] if widget.focusPolicy() & Qt.FocusPolicy.TabFocus else [
            w for w in widget.findChildren(QPushButton) if w.focusPolicy() & Qt.FocusPolicy.TabFocus]
    chain = [page.account_input, page.amount_input, page.charge_button, page.hold_button, page.new_sale_button,
             page.lookup_button, page.members_button, page.split_cash_button, page.split_wechat_button,
             page.complete_button, page.release_button, *bar, page.history_table]
    for first, second in zip(chain, chain[1:]):
        QWidget.setTabOrder(first, second)


def set_tone(label: QLabel, tone: str) -> None:
    """A label's colour (the style sheet's `tone` property), applied at once."""
    label.setProperty("tone", tone)
    label.style().unpolish(label)
    label.style().polish(label)


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
