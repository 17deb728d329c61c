"""The till's readers of core/kinds.py: the outbox, the engine's senders, the member
outcome words, the shift report's rows and the receipt number all cover exactly the
kinds the table names, in the order the screens and files have always shown."""
from __future__ import annotations

import re

from core import kinds
from desktop import outbox, report, texts
from desktop.engine import Engine, new_txn_id
from desktop.receipts.hooks import RECEIPT_NUMBER


def test_the_outbox_schema_accepts_exactly_the_till_kinds():
    check = re.search(r"kind\s+TEXT\s+NOT NULL CHECK \(kind IN \(([^)]*)\)\)", outbox._SCHEMA)
    assert check, "the ops table's kind CHECK"
    assert set(re.findall(r"'(\w+)'", check.group(1))) == set(kinds.TILL_KINDS) == set(outbox.KINDS)


def test_the_outbox_names_stay_importable():
    assert outbox.MONEY_KINDS == kinds.MONEY_KINDS and outbox.MEMBER_KINDS == kinds.MEMBER_KINDS
    assert outbox.HOLD_RESOLUTIONS == ("capture", "void")


def test_the_engine_sends_every_till_kind():
    assert set(Engine._SENDERS) == set(kinds.TILL_KINDS)


def test_every_member_operation_and_till_kind_has_words(qapp):
    assert set(texts._MEMBER_OUTCOME_WORDS) == set(kinds.MEMBER_KINDS)
    for kind in kinds.TILL_KINDS:
        assert texts.kind_words(kind) != kind, kind


def test_the_shift_report_keeps_its_rows_and_their_order():
    assert report.KIND_ORDER == ("deduct", "capture", "refund", "credit", "offline", "sale", "tender_refund",
                                 "close", "hold", "void")
    assert report.MONEY_MOVING_KINDS == ("deduct", "capture", "refund", "credit", "offline", "sale",
                                         "tender_refund", "close")
    assert report.COUNTED_KINDS == ("open", "card_replace")


def test_a_receipt_number_is_a_txn_id_of_a_kind_with_a_slip_or_a_hold():
    for kind in kinds.TXN_LETTERS:
        scanned = bool(RECEIPT_NUMBER.fullmatch(new_txn_id("till-1", kind)))
        assert scanned == (kind in kinds.RECEIPT_KINDS or kind in kinds.MONEY_KINDS), kind
