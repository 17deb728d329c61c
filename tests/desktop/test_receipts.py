"""Receipts: the bytes python-escpos composes (QR / barcode of the txn id, GB18030
Chinese, cut, drawer kick, REPRINT, refund slips, 58 and 80 mm), what reaches a real
file and a real TCP printer port, failures named by reason, and the Qt preview."""
from __future__ import annotations

import socket
import threading
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from escpos.constants import CD_KICK_2, PAPER_FULL_CUT
from escpos.printer import Dummy

from desktop.receipts.config import PrinterConfig
from desktop.receipts.model import (Line, Receipt, ReceiptContext, display_width, layout, mask_card, plain_text,
                                    receipt_for_op)
from desktop.receipts.printer import compose, print_receipt
from desktop.receipts.reasons import NOT_CONFIGURED, OUT_OF_PAPER, UNREACHABLE, ReceiptNotPrinted

TXN = "T1-d-0123456789abcdef0123456789abcdef"
ZH = ReceiptContext("星光便利店", "北京市朝阳区建国路88号", "T1", "c1", "李娜", "zh_CN")
EN = replace(ZH, shop_name="Starlight Store", shop_address="88 Jianguo Road, Beijing", language="en")


def sale(ctx=ZH, **kw) -> Receipt:
    fields = dict(txn_id=TXN, kind="deduct", account_id="6222020200112233", amount_minor=1250,
                  balance_after_minor=8750, occurred_ms=1_796_000_000_000, context=ctx)
    return Receipt(**{**fields, **kw})


def qr_store_command(data: str) -> bytes:
    """GS ( k <len> 1 P 0 <data>: 'store the QR code's data', as python-escpos sends it."""
    return b"1P0" + data.encode()


def test_sale_receipt_has_the_txn_id_as_native_qr_chinese_in_gb18030_and_a_cut():
    data = compose(sale(), PrinterConfig(paper_mm=80))
    assert b"\x1d(k" in data and qr_store_command(TXN) in data and b"1Q0" in data   # stored, then printed
    for words in ("星光便利店", "消费小票", "收银员", "李娜", "余额", "¥87.50", "谢谢惠顾"):
        assert words.encode("gb18030") in data, words
    assert "消费小票".encode("utf-8") not in data
    assert data.rstrip(b"\x00").endswith(PAPER_FULL_CUT.rstrip(b"\x00"))
    assert "****2233".encode() in data and b"6222020200112233" not in data      # card masked
    assert TXN[:20].encode() in data                                             # the number as text too


def test_qr_as_an_image_for_printers_without_native_qr():
    data = compose(sale(), PrinterConfig(native_qr=False))
    assert qr_store_command(TXN) not in data and b"\x1dv0" in data              # raster image instead
    reference = Dummy()
    reference.qr(TXN, size=8, native=False)
    assert reference.output.strip(b"\n") in data


def test_barcode_where_it_fits_else_qr():
    short = "T1-d-42"
    data = compose(sale(txn_id=short), PrinterConfig(symbology="barcode", encoding="auto"))
    assert b"\x1dk" in data and b"{B" + short.encode() in data
    long_data = compose(sale(), PrinterConfig(paper_mm=58, symbology="barcode"))
    assert b"\x1dk" not in long_data and qr_store_command(TXN) in long_data     # 55 chars: no room


def test_58mm_lines_fit_32_columns_and_80mm_48():
    for paper_mm, columns in ((58, 32), (80, 48)):
        for ctx in (ZH, EN):
            receipt = sale(ctx, principal_delta_minor=-1000, bonus_delta_minor=-250, original_txn_id=TXN,
                           kind="refund", approved_by="supervisor-with-a-long-id")
            lines = [i for i in layout(receipt, columns) if isinstance(i, Line)]
            assert all(display_width(i.text) * (2 if i.big else 1) <= columns for i in lines), lines


def test_principal_and_bonus_shown_only_when_the_account_has_both():
    both = plain_text(sale(EN, principal_delta_minor=-1000, bonus_delta_minor=-250), 48)
    assert "of which principal" in both and "¥10.00" in both and "¥2.50" in both
    assert "principal" not in plain_text(sale(EN, principal_delta_minor=-1250, bonus_delta_minor=0), 48)
    assert "principal" not in plain_text(sale(EN), 48)


def test_reprint_mark_and_refund_slip():
    assert "*** 重打 ***".encode("gb18030") in compose(sale().as_reprint(), PrinterConfig())
    assert "重打".encode("gb18030") not in compose(sale(), PrinterConfig())
    slip = sale(EN, kind="refund", txn_id="T2-r-77", amount_minor=500, balance_after_minor=9250,
                original_txn_id=TXN, approved_by="sup")
    data = compose(slip, PrinterConfig(encoding="auto"))
    assert b"REFUND SLIP" in data and b"Refund of receipt" in data and TXN[:30].encode() in data
    assert b"Approved by" in data and qr_store_command("T2-r-77") in data
    assert b"Keep this slip" not in data


def test_drawer_kick_only_after_a_cash_top_up_and_never_on_a_reprint():
    config = PrinterConfig(drawer_kick=True)
    top_up = sale(kind="credit", txn_id="T1-c-1")
    assert CD_KICK_2 in print_receipt_bytes(top_up, config)
    assert CD_KICK_2 not in print_receipt_bytes(top_up.as_reprint(), config)
    assert CD_KICK_2 not in print_receipt_bytes(sale(), config)
    assert CD_KICK_2 not in print_receipt_bytes(replace(top_up, method="wechat"), config)
    assert CD_KICK_2 not in print_receipt_bytes(top_up, PrinterConfig())


def print_receipt_bytes(receipt, config) -> bytes:
    from desktop.receipts.printer import kicks_drawer
    return compose(receipt, config, kick_drawer=kicks_drawer(receipt, config))


def test_encoding_is_configurable():
    tw = sale(replace(ZH, shop_name="台北商店", shop_address=""))
    assert "台北商店".encode("big5") in compose(tw, PrinterConfig(encoding="big5"))
    with pytest.raises(ValueError, match="printer encoding"):
        PrinterConfig(encoding="klingon").check()
    with pytest.raises(ValueError, match="paper width"):
        PrinterConfig(paper_mm=57).check()
    with pytest.raises(ValueError, match="printer address"):
        PrinterConfig(connection="network").check()


def test_file_printer_receives_exactly_the_composed_bytes(tmp_path):
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    config = PrinterConfig(connection="file", address=str(device))
    sent = print_receipt(sale(), config)
    assert device.read_bytes() == sent == compose(sale(), config)


class PrinterPort:
    """A real TCP listener standing in for a network printer's raw port: records what it
    receives; with `paper_byte` it answers a status query (DLE EOT 4) with that byte."""

    def __init__(self, paper_byte: bytes | None = None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.paper_byte = paper_byte
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.sock.accept()
        with conn:
            while chunk := conn.recv(65536):
                self.received += chunk
                if self.paper_byte is not None and chunk.endswith(b"\x10\x04\x04"):
                    conn.sendall(self.paper_byte)

    def close(self):
        self.thread.join(timeout=10)
        self.sock.close()


def test_network_printer_port_9100_style_gets_the_receipt():
    port = PrinterPort()
    config = PrinterConfig(connection="network", address=f"127.0.0.1:{port.port}", timeout_s=5)
    sent = print_receipt(sale(), config)
    port.close()
    assert port.received == sent and qr_store_command(TXN) in port.received


def test_out_of_paper_is_reported_and_nothing_is_printed():
    port = PrinterPort(paper_byte=b"\x72")            # paper sensor: no paper
    config = PrinterConfig(connection="network", address=f"127.0.0.1:{port.port}", check_paper=True, timeout_s=5)
    with pytest.raises(ReceiptNotPrinted) as info:
        print_receipt(sale(), config)
    port.close()
    assert info.value.reason == OUT_OF_PAPER
    assert port.received == b"\x10\x04\x04"            # only the status query


@pytest.mark.parametrize("connection,address", [
    ("network", "127.0.0.1:1"), ("file", "/nonexistent-dir/lp0"), ("serial", "/dev/ttyNO-SUCH"),
    ("usb", "0x0416:0x5011")])
def test_printer_off_or_unplugged_is_named(connection, address):
    with pytest.raises(ReceiptNotPrinted) as info:
        print_receipt(sale(), PrinterConfig(connection=connection, address=address, timeout_s=1))
    assert info.value.reason == UNREACHABLE


def test_no_printer_configured():
    with pytest.raises(ReceiptNotPrinted) as info:
        print_receipt(sale(), PrinterConfig())
    assert info.value.reason == NOT_CONFIGURED


def test_card_masking():
    assert mask_card("6222020200112233") == "****2233"
    assert mask_card("A-1") == "**1" and mask_card("") == ""


def test_receipt_for_op_refuses_declines_and_holds():
    from desktop.outbox import RESOLVED, Op
    op = Op("T1-d-1", "deduct", "A-1", 100, "T1", "c1", 1, 1_796_000_000_000, state=RESOLVED,
            status="INSUFFICIENT_FUNDS", balance_after_minor=50)
    with pytest.raises(ValueError):
        receipt_for_op(op, ZH)
    with pytest.raises(ValueError):
        receipt_for_op(replace(op, kind="hold", status="APPLIED"), ZH)
    r = receipt_for_op(replace(op, status="APPLIED", resolved_ms=1_796_000_000_500), ZH)
    assert r.context.cashier_name == "李娜" and r.occurred_ms == 1_796_000_000_500
    assert [i for i in layout(r, 48) if getattr(i, "data", None) == "T1-d-1"]


def test_preview_png_and_pdf(qapp, tmp_path):
    from desktop.receipts.preview import render_image, save_pdf, save_png
    image = render_image(sale(), 58)
    assert image.width() == 32 * 12 + 32 and image.height() > 600
    # the QR code is drawn: a black module at its top-left corner row
    assert any(image.pixelColor(x, y).lightness() < 50 for x in range(image.width()) for y in range(0, image.height(), 7))
    png = save_png(sale(EN), tmp_path / "r.png", 80)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = save_pdf(sale(), tmp_path / "r.pdf", 80)
    assert pdf.read_bytes()[:5] == b"%PDF-"


_ids = st.from_regex(r"[A-Za-z0-9._:-]{1,64}", fullmatch=True)
_names = st.text(st.sampled_from("星光便利店北京市朝阳区 ABCxyz-0123（）·"), max_size=40)


@settings(max_examples=40, deadline=None)
@given(txn=_ids, account=_ids, amount=st.integers(1, 10**11), balance=st.integers(0, 10**15),
       kind=st.sampled_from(["deduct", "capture", "refund", "credit", "close"]), shop=_names, address=_names,
       cashier=_names, lang=st.sampled_from(["en", "zh_CN"]), paper=st.sampled_from([58, 80]),
       split=st.one_of(st.none(), st.tuples(st.integers(-10**11, 0), st.integers(-10**11, 0))),
       reprint=st.booleans(), code=st.sampled_from(["qr", "barcode"]))
def test_property_any_receipt_fits_its_paper_and_carries_its_number(
        txn, account, amount, balance, kind, shop, address, cashier, lang, paper, split, reprint, code):
    ctx = ReceiptContext(shop, address, "T1", "c1", cashier, lang)
    receipt = Receipt(txn, kind, account, amount, balance, 1_796_000_000_000, ctx, original_txn_id=txn,
                      principal_delta_minor=split[0] if split else None,
                      bonus_delta_minor=split[1] if split else None, reprint=reprint)
    config = PrinterConfig(paper_mm=paper, symbology=code)
    items = layout(receipt, config.columns, symbology=code)
    assert all(display_width(i.text) * (2 if i.big else 1) <= config.columns for i in items if isinstance(i, Line))
    data = compose(receipt, config)
    codes = [i for i in items if getattr(i, "data", None) == txn]
    assert len(codes) == 1
    if codes[0].symbology == "qr":
        assert qr_store_command(txn) in data
    else:
        assert b"{B" + txn.encode() in data
    assert data.rstrip(b"\x00").endswith(PAPER_FULL_CUT.rstrip(b"\x00"))
    assert mask_card(account).encode() in data                       # the card, masked, always there


def test_receipt_from_a_ledger_result(ledger):
    from desktop.receipts.model import receipt_for_result
    ledger.open_account("6222000011112222", txn_id="open-x", initial_minor=5000)
    result = ledger.deduct("6222000011112222", 1250, txn_id="T1-d-77", terminal_id="T1", cashier_id="c1")
    receipt = receipt_for_result(result, ZH, occurred_ms=1_796_000_000_000)
    assert (receipt.txn_id, receipt.kind, receipt.amount_minor, receipt.balance_after_minor) == \
        ("T1-d-77", "deduct", 1250, 3750)
    assert qr_store_command("T1-d-77") in compose(receipt, PrinterConfig())
    declined = ledger.deduct("6222000011112222", 999_999, txn_id="T1-d-78")
    with pytest.raises(ValueError, match="INSUFFICIENT_FUNDS"):
        receipt_for_result(declined, ZH, occurred_ms=0)
