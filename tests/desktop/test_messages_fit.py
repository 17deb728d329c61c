"""Issue 26 item 14: at 1024x768 in English the longest messages of the sale screen are
shown whole, not cut: the result panel's three-line messages (being checked, card
replaced, blocked card) and the status bar's connection words."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from desktop.texts import connection_words

from .conftest import open_account, sign_in

def shown_whole(label) -> bool:
    """The label's text needs no more height than it has at its width (word wrap)."""
    return label.heightForWidth(label.width()) <= label.height()


def test_the_longest_messages_fit_at_1024x768(qtbot, terminal, ledger):
    terminal.resize(1024, 740)
    open_account(ledger, "FIT-0002", 10_000)
    sign_in(qtbot, terminal)
    QCoreApplication.processEvents()
    page = terminal.sale_page
    from types import SimpleNamespace

    from desktop.sale_texts import checking_words, lookup_error_words, refund_hint_words
    blocked = SimpleNamespace(status="CARD_BLOCKED", card_no="6222020000001234", reason="stolen")
    for text in (checking_words(), lookup_error_words("6222020000001234", blocked), refund_hint_words(),
                 "Card 6222020000001234 blocked (lost); new card 6222020000009999 issued to account "
                 "M-000000000001 with the same balance ¥1,234.56."):
        page._set_result("checking", text)
        QCoreApplication.processEvents()
        assert shown_whole(page.result_label), text
    for state in ("connecting", "online", "offline", "reconnecting", "not_initialized", "unsafe", "revoked"):
        terminal.connection_status.setText("● " + connection_words(state))
        QCoreApplication.processEvents()
        label = terminal.connection_status
        assert label.fontMetrics().horizontalAdvance(label.text()) <= label.width(), state



def test_the_receipt_preview_leaves_room_for_a_title_bar_and_shows_the_whole_slip(qtbot, qapp):
    """The preview was 760 px tall: with a window manager's title bar, taller than a
    1024x768 screen. It is at most the screen's height less room for a title bar."""
    from PySide6.QtWidgets import QLabel, QScrollArea

    from desktop.receipts.model import Receipt
    from desktop.receipts.widgets import TITLE_BAR_ROOM_PX, show_preview
    receipt = Receipt("T1-d-0123456789abcdef0123456789abcdef", "deduct", "6222020000001234", 123_456, 1_000_000,
                      1_796_000_000_000)
    for paper_mm in (58, 80):
        dialog = show_preview(receipt, paper_mm, "code128")
        qtbot.addWidget(dialog)
        qtbot.waitUntil(dialog.isVisible, timeout=3000)
        screen = dialog.screen().availableGeometry()
        assert dialog.height() <= min(760, screen.height() - TITLE_BAR_ROOM_PX), (dialog.height(), screen)
        scroll, image = dialog.findChild(QScrollArea), dialog.findChild(QLabel, "receiptPreviewImage")
        assert scroll.viewport().width() >= image.pixmap().width()          # the right column shows
        dialog.close()
