"""Issue 26 item 18 ("Smaller"), the rest of it: the Z report names an operation whose
split is unknown, the receipt's card and member, REPRINT only on a slip printed before,
the look-up retried when the connection is back, one word for a charge in zh_CN, the
sale screen's Tab order. Offscreen pytest-qt, real Redis where the till runs."""
from __future__ import annotations


# ---------------------------------------------------------------- the Z report names the operation

def test_a_split_unknown_in_the_z_report_names_the_operation(qapp):
    from PySide6.QtCore import QLocale

    from desktop.outbox import RESOLVED, Op, Shift
    from desktop.report import build_report, member_lines
    shift = Shift(1, "T1", 1_796_000_000_000, "c1", None, None)
    known = Op("T1-x-known", "deduct", "M-1", 500, "T1", "c1", 1, 1_796_000_000_000, state=RESOLVED,
               status="APPLIED", principal_delta_minor=-500, bonus_delta_minor=0)
    unknown = Op("T1-x-0123456789abcdef", "deduct", "M-2", 700, "T1", "c1", 1, 1_796_000_000_000,
                 state=RESOLVED, status="APPLIED")
    report = build_report(shift, [known, unknown])
    lines = member_lines(report, QLocale("en_US"))
    at = next(i for i, (label, _) in enumerate(lines) if "split is unknown" in label)
    assert lines[at][1] == "1"
    named = lines[at + 1]
    assert named[1] == "T1-x-0123456789abcdef" and "Charge" in named[0]
    assert all("T1-x-known" not in value for _, value in lines)


# ---------------------------------------------------------------- Tab follows the screen

def _tab_chain(qtbot, window, start, count: int) -> list[str]:
    from PySide6.QtCore import Qt
    start.setFocus()
    names = [start.objectName()]
    for _ in range(count):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        names.append(window.focusWidget().objectName())
    return names


def test_tab_on_the_sale_screen_goes_account_amount_charge_in_the_screens_order(qtbot, terminal, ledger):
    from .conftest import sign_in
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    chain = _tab_chain(qtbot, terminal, page.account_input, 14)
    assert chain[:3] == ["accountInput", "amountInput", "chargeButton"]
    assert chain[3:7] == ["holdButton", "newSaleButton", "lookupButton", "membersButton"]
    assert chain.index("earlierSaleButton") < chain.index("historyTable")   # the history bar is above it


# ---------------------------------------------------------------- REPRINT only when printed before

def test_a_slip_never_printed_is_not_marked_reprint_and_a_second_one_is(qtbot, terminal, ledger, tmp_path):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from desktop.receipts.config import PrinterConfig
    from .conftest import open_account, sign_in
    open_account(ledger, "RP-1", 5000)
    terminal.receipts.config = PrinterConfig(connection="file", address=str(tmp_path / "none" / "lp0"))
    sign_in(qtbot, terminal)
    page, bar = terminal.sale_page, terminal.receipt_hooks.bar
    page.account_input.setText("RP-1")
    page.amount_input.setText("3.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Receipt not printed" in bar.status_label.text(), timeout=10_000)
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device))
    terminal.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is terminal, timeout=3000)
    qtbot.keyClick(page.account_input, Qt.Key.Key_F4)
    qtbot.waitUntil(lambda: bar.status_label.text() == "Receipt printed.", timeout=10_000)
    first = device.read_bytes()
    assert b"1P0" + terminal.receipts.last.txn_id.encode() in first and b"REPRINT" not in first
    qtbot.keyClick(page.account_input, Qt.Key.Key_F4)            # now it was printed: this one is a reprint
    qtbot.waitUntil(lambda: bar.status_label.text() == "Receipt reprinted.", timeout=10_000)
    assert b"*** REPRINT ***" in device.read_bytes()


# ---------------------------------------------------------------- a look-up refused in an outage runs again

def test_a_look_up_refused_in_an_outage_runs_again_when_the_connection_is_back(qtbot, make_terminal, redis_db,
                                                                               ledger, registry):
    import os

    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in
    from .proxy import FaultProxy
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        ledger.init()
        open_account(ledger, "OUT-1", 5000)
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        page = window.sale_page
        proxy.mode = "blackhole"                 # the gateway cannot reach Redis
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state != "online", timeout=10_000)
        page.account_input.setText("OUT-1")
        qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: "cannot look up now" in page.account_error.text(), timeout=10_000)
        assert page._account is None
        proxy.mode = "pass"                      # the connection is back: nothing pressed
        proxy.cut_connections()
        qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "OUT-1", timeout=15_000)
        assert page.account_error.text() == "" and "OUT-1" in page.balance_label.text()
    finally:
        proxy.close()


def test_no_look_up_runs_again_once_the_field_was_edited(qtbot, make_terminal, redis_db, ledger, registry):
    import os

    from PySide6.QtCore import Qt

    from .conftest import open_account, sign_in, stays_true
    from .proxy import FaultProxy
    proxy = FaultProxy(int(os.environ.get("CASHIER_TEST_REDIS_PORT", "6379")))
    try:
        ledger.init()
        open_account(ledger, "OUT-2", 5000)
        window = make_terminal(proxy.url(redis_db))
        sign_in(qtbot, window)
        page = window.sale_page
        proxy.mode = "blackhole"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state != "online", timeout=10_000)
        page.account_input.setText("OUT-2")
        qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: "cannot look up now" in page.account_error.text(), timeout=10_000)
        page.account_input.setFocus()
        qtbot.keyClick(page.account_input, Qt.Key.Key_Backspace)      # the cashier moved on
        proxy.mode = "pass"
        proxy.cut_connections()
        qtbot.waitUntil(lambda: window.engine.state == "online", timeout=15_000)
        stays_true(qtbot, lambda: page._account is None, 500)
    finally:
        proxy.close()


# ---------------------------------------------------------------- one word for a charge in zh_CN

def test_zh_cn_has_one_word_for_a_charge_the_sale_screens_own(qapp):
    import xml.etree.ElementTree as ET
    from pathlib import Path

    from PySide6.QtCore import QCoreApplication

    from desktop import i18n
    from desktop.texts import kind_words
    ts = Path(__file__).resolve().parents[2] / "desktop" / "translations" / "terminal_zh_CN.ts"
    translations = [(m.findtext("source"), m.findtext("translation") or "") for m in ET.parse(ts).iter("message")]
    assert not [t for _, t in translations if "扣款" in t]
    assert all("收款" in t for s, t in translations if "charg" in s.lower() and "(F12)" not in s
               and "spent" not in s.lower())
    try:
        i18n.install("zh_CN")
        word = QCoreApplication.translate("SalePage", "Charge  (F12)").split()[0]
        assert word == "收款" and kind_words("deduct") == word
        assert word in QCoreApplication.translate("SalePage", "Approved: %1 charged")
        assert word in QCoreApplication.translate("SalePage", "Charging %1 to %2…")
    finally:
        i18n.install("en")


# ---------------------------------------------------------------- the slip: card used, member, code page

def test_the_slip_shows_the_card_used_and_the_members_name_masked(qtbot, terminal, ledger, tmp_path):
    from PySide6.QtCore import Qt

    from desktop.receipts.config import PrinterConfig
    from .conftest import sign_in
    from .test_members_till import member
    member(ledger, "M-5501", "张三丰", principal_minor=10_000, card="6222020200115501")
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device))
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    page.account_input.setText("6222020200115501")                # scanned: found by the card
    qtbot.keyClick(page.account_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == "M-5501", timeout=5000)
    page.amount_input.setText("5.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(terminal.receipts.sent) == 1, timeout=10_000)
    receipt = terminal.receipts.sent[0]
    assert receipt.card_no == "6222020200115501" and receipt.member_name == "张**"
    data = device.read_bytes()
    assert b"****5501" in data and "张**".encode("gb18030") in data
    assert "张三丰".encode("gb18030") not in data and b"6222020200115501" not in data
    assert "三丰" not in terminal.engine.outbox.get(receipt.txn_id).detail       # the outbox keeps the mask only


def test_each_slip_sets_the_printers_character_mode_itself():
    from desktop.receipts.config import PrinterConfig
    from desktop.receipts.model import Receipt, ReceiptContext
    from desktop.receipts.printer import compose
    receipt = Receipt("T1-d-0123456789abcdef0123456789abcdef", "deduct", "M-1", 500, 1000, 1_796_000_000_000,
                      ReceiptContext("星光便利店", "", "T1", "c1", "李娜", "zh_CN"))
    chinese = compose(receipt, PrinterConfig(connection="file", address="/dev/null"))
    assert chinese.startswith(b"\x1b@\x1c&")                    # ESC @, then FS &: Chinese mode on
    western = compose(receipt, PrinterConfig(connection="file", address="/dev/null", encoding="auto"))
    assert western.startswith(b"\x1b@\x1c.") and b"\x1c&" not in western


def test_names_are_masked_on_the_slip():
    from desktop.receipts.model import mask_name
    assert [mask_name(n) for n in ("张三", "李娜", "欧阳娜娜", "Li Na", "Anna Maria Schmidt", " ")] == \
        ["张*", "李*", "欧***", "Li N.", "Anna M. S.", ""]
