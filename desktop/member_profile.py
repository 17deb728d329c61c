"""The member profile (issue 26 item 17), opened from Member… (F7) with the account on
screen: the member's name and account, balance split into principal and bonus, their
phone masked (the gateway masks it: the till never holds it), their cards with states
and block reasons, their recent operations at every terminal (newest first) and their
top-ups among those by payment method. Read-only; it reads once when it opens (a
worker: `Engine.profile`) and says so while it reads, or why it could not."""
from __future__ import annotations

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from core import AccountNotFound, InvalidRequest

from . import money
from .history_model import HistoryModel, HistoryView, past_row
from .texts import account_status_words, card_reason_words, kind_words, method_words
from .till_dialog import TillDialog


class MemberProfileDialog(TillDialog):
    """objectName memberProfileDialog; its fields: profileName, profileBalance,
    profilePhone, profileCards, profileTopUps, profileHistoryTable, profileMessage."""

    def __init__(self, engine, account_view, parent=None):
        super().__init__(parent)
        self.setObjectName("memberProfileDialog")
        self.engine = engine
        self.account_id = account_view.account_id
        self.profile = None
        self.name_label = QLabel(objectName="profileName", wordWrap=True)
        self.balance_label = QLabel(objectName="profileBalance", wordWrap=True)
        self.phone_label = QLabel(objectName="profilePhone")
        self.cards_label = QLabel(objectName="profileCards", wordWrap=True)
        self.top_ups_label = QLabel(objectName="profileTopUps", wordWrap=True)
        self.message = QLabel(objectName="profileMessage", wordWrap=True)
        self.table = HistoryView(HistoryModel(7), objectName="profileHistoryTable")
        self.table.setMinimumHeight(160)
        self.close_button = QPushButton(objectName="profileCloseButton", clicked=self.accept)
        self.confirm_button = self.close_button
        self.cancel_button = self.close_button
        self.form = QFormLayout()
        self.balance_caption, self.phone_caption = QLabel(), QLabel()
        self.cards_caption, self.top_ups_caption = QLabel(), QLabel()
        self.form.addRow(self.balance_caption, self.balance_label)
        self.form.addRow(self.phone_caption, self.phone_label)
        self.form.addRow(self.cards_caption, self.cards_label)
        self.form.addRow(self.top_ups_caption, self.top_ups_label)
        layout = QVBoxLayout(self)
        layout.addWidget(self.name_label)
        layout.addLayout(self.form)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        row = QHBoxLayout()                     # one button: Close (Enter and Esc do the same)
        row.addStretch(1)
        row.addWidget(self.close_button)
        layout.addLayout(row)
        self.setMinimumWidth(640)
        self.retranslate()
        self.task = engine.profile(self.account_id, self._read, self._failed)

    def confirm(self) -> None:
        self.accept()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Member profile"))
        self.balance_caption.setText(self.tr("Balance"))
        self.phone_caption.setText(self.tr("Phone"))
        self.cards_caption.setText(self.tr("Cards"))
        self.top_ups_caption.setText(self.tr("Top-ups (recent)"))
        self.close_button.setText(self.tr("Close"))
        self.table.model().set_headers([
            self.tr("Time"), self.tr("Type"), self.tr("Amount"), self.tr("Refunded"), self.tr("Balance after"),
            self.tr("Terminal"), self.tr("Receipt number")])
        self._show()

    def _read(self, profile) -> None:
        self.profile = profile
        self._show()

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, AccountNotFound):
            self.message.setText(self.tr("No account %1 on the central server.").replace("%1", self.account_id))
        elif isinstance(exc, InvalidRequest):
            self.message.setText(self.tr("The profile was refused: %1").replace("%1", exc.reason))
        else:
            self.message.setText(self.tr("The profile could not be read (no connection to the central "
                                         "server): close this and try again."))

    def _show(self) -> None:
        p = self.profile
        if p is None:
            self.name_label.setText(self.account_id)
            self.message.setText(self.tr("Reading the member's profile…"))
            return
        loc = QLocale()
        fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
        v = p.view
        self.name_label.setText(f"{v.holder_name}  ·  {v.account_id}  ·  {account_status_words(v.status)}".strip(" ·"))
        self.balance_label.setText(self.tr("%1 (principal %2, bonus %3)").replace("%1", fmt(v.balance_minor))
                                   .replace("%2", fmt(v.principal_minor)).replace("%3", fmt(v.bonus_minor)))
        self.phone_label.setText(p.phone_masked or self.tr("none"))
        cards = []
        for card in p.cards:
            if card.status.name == "CARD_BLOCKED":
                cards.append(self.tr("%1: blocked (%2)").replace("%1", card.card_no)
                             .replace("%2", card_reason_words(card.reason) if card.reason else "?"))
            else:
                cards.append(self.tr("%1: active").replace("%1", card.card_no))
        self.cards_label.setText("\n".join(cards) or self.tr("none (the account id is used as its card)"))
        self.top_ups_label.setText("\n".join(
            self.tr("%1: %2 top-up(s), %3").replace("%1", method_words(method)).replace("%2", str(count))
            .replace("%3", fmt(total)) for method, count, total in p.top_ups_by_method) or self.tr("none"))
        self.table.model().set_rows([past_row(op, kind_words(op.kind) if op.kind in _MONEY else op.kind)
                                     for op in p.recent])
        self.table.resizeColumnsToContents()
        self.message.setText("" if p.recent else self.tr(
            "No recent operations of this account on the central server."))

    def done(self, result: int) -> None:
        if self.task is not None:
            self.task.cancel()
        super().done(result)


_MONEY = ("deduct", "refund", "credit", "hold", "capture", "void")
