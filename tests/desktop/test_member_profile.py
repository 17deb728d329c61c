"""Issue 26 items 17 and 9: the member profile from Member… (cards with states, recent
history at every terminal, principal and bonus, the phone masked by the gateway, top-ups
by method) and the card dialog listing the member's cards with their states."""
from __future__ import annotations

from PySide6.QtCore import Qt

from core.members import mask_phone

from .conftest import sign_in
from .test_members_till import look_up_member, member, open_member_action


def test_mask_phone():
    assert mask_phone("13800138000") == "138****8000"
    assert mask_phone("+86 138 0013 8000") == "861******8000"
    assert mask_phone("12345") == "***45" and mask_phone("") == ""


def test_the_profile_shows_cards_history_buckets_masked_phone_and_top_ups(qtbot, terminal, ledger):
    member(ledger, "M-901", "王芳", "13912345678", principal_minor=10_000, bonus_minor=2_000, card="C-901")
    assert ledger.issue_card("M-901", "C-902", txn_id="card-C-902").applied
    assert ledger.block_card("C-901", txn_id="block-C-901", reason="lost").applied
    # other terminals' operations: a WeChat top-up and a charge at T7
    assert ledger.credit("M-901", 5_000, txn_id="T7-c-1", method="wechat", terminal_id="T7").applied
    assert ledger.deduct("M-901", 1_250, txn_id="T7-d-1", terminal_id="T7").applied
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "C-902", "M-901")
    dialog = open_member_action(qtbot, terminal, "profile_button")
    assert dialog.objectName() == "memberProfileDialog"
    qtbot.waitUntil(lambda: dialog.profile is not None, timeout=5000)
    assert "王芳" in dialog.name_label.text() and "M-901" in dialog.name_label.text()
    balance = 10_000 + 2_000 + 5_000 - 1_250
    assert dialog.profile.view.balance_minor == balance
    text = dialog.balance_label.text()
    assert "¥157.50" in text and "bonus" in text                     # principal and bonus apart
    assert dialog.phone_label.text() == "139****5678"                 # masked by the gateway
    assert "13912345678" not in repr(dialog.profile)                   # the till never holds the number
    cards = dialog.cards_label.text()
    assert "C-901: blocked (" in cards and "C-902: active" in cards
    top_ups = dialog.top_ups_label.text()
    # what the member paid by each method (the ¥20.00 bonus of the cash top-up is the shop's, not paid)
    assert "WeChat" in top_ups and "¥50.00" in top_ups and "Cash" in top_ups and "¥100.00" in top_ups
    model = dialog.table.model()
    txns = [model.rows[i].txn_id for i in range(model.rowCount())]
    assert txns[:2] == ["T7-d-1", "T7-c-1"]                            # newest first, every terminal
    assert "block-C-901" not in txns and "open-M-901" not in txns      # money only: no ¥0.00 card rows
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()


def test_the_card_dialog_lists_the_members_cards_with_their_states(qtbot, terminal, ledger):
    member(ledger, "M-911", "赵六", principal_minor=1_000, card="C-911")
    assert ledger.issue_card("M-911", "C-912", txn_id="card-C-912").applied
    assert ledger.block_card("C-912", txn_id="block-C-912", reason="damaged").applied
    sign_in(qtbot, terminal)
    look_up_member(qtbot, terminal, "C-911", "M-911")
    dialog = open_member_action(qtbot, terminal, "card_button")
    qtbot.waitUntil(lambda: dialog.cards is not None, timeout=5000)
    listed = dialog.cards_label.text()
    assert "C-911: active" in listed and "C-912: blocked (" in listed
