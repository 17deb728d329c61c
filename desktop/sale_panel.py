"""The sale screen's two messages: the result panel under the charge buttons (working,
being checked, approved, declined, a refusal) and the notice in the history bar (news
about an earlier customer's operation). The panel tells the sale session whose result
it shows and which refusal, so that a new customer or a connection change can take it
away (desktop/sale_session.py decides; this class only shows).

Its sentences are translated in the sale screen's context ("SalePage").
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from .outbox import Op
from .sale_layout import set_tone
from .sale_session import Reason, Refusal
from .sale_texts import decision_words
from .texts import refusal_words


class ResultPanel:
    def __init__(self, session, result_label, notice_label):
        self.session, self.result_label, self.notice_label = session, result_label, notice_label

    def show(self, tone: str, text: str, *, remember: tuple | None = None,
             account_id: str | None = None, reason: str = "") -> None:
        """`account_id`: the customer the result is about (None: nobody in particular);
        `reason`: the refusal it shows; `remember`: (outcome, Op) of a decision."""
        self.session.result_shown(remember, account_id, reason)
        self.result_label.setText(text)
        set_tone(self.result_label, tone or "idle")
        self._fit()

    def _fit(self) -> None:
        """The panel keeps its height (nothing below it moves), so a message that needs more
        lines than it has at this width is set a size smaller (issue 26 item 14: at
        1024x768 in English, "Being checked … Do NOT charge again" wrapped into a 4th line
        that was cut off): the whole message is always shown."""
        label = self.result_label
        for fit in ("", "smaller", "smallest"):
            label.setProperty("fit", fit)
            label.style().unpolish(label)
            label.style().polish(label)
            if label.width() <= 0 or label.heightForWidth(label.width()) <= label.height():
                return

    def refuse(self, refusal: Refusal, account_id: str | None = None) -> Refusal:
        self.show("checking" if refusal.reason == Reason.BUSY else "declined", refusal_words(refusal.reason),
                  account_id=account_id, reason=refusal.reason)
        return refusal

    def decision(self, op: Op) -> None:
        outcome = "approved" if op.applied else "declined"
        self.show(outcome, decision_words(op, self.session.released_minor(op)), remember=(outcome, op))

    def connection_changed(self, state: str, online: bool) -> None:
        """The panel must not say "No connection" once it is back, nor stay quiet when
        it is lost while nothing is in flight."""
        change = self.session.connection_changed(state, online)
        if isinstance(change, Refusal):
            self.show("declined", refusal_words(change.reason), reason=change.reason)
        elif change is not None:
            self.show("approved", QCoreApplication.translate("SalePage", "Connected again: charges can be made."))

    def notice(self, text: str) -> None:
        """The full text is also the tooltip when it is longer than the bar."""
        self.notice_label.setText(text)
        self.notice_label.setToolTip(text)
        set_tone(self.notice_label, "info" if text else "none")
