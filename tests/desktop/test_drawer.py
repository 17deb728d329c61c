"""The cash drawer at the till (issue 26 item 16), through a real gateway and Redis: the
opening float asked at the sign-in that opens a shift, cash in / cash out with a reason
(a supervisor's PIN above drawer/approval_above_minor), the drawer counted at close with
over or short in the Z record journaled, the X report of a shift still open, the Z / X
slips at 58 and 80 mm written to a file printer, and `report shifts` after
`reconcile_service run --once` showing the drawer's figures."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit

from core.shifts import shift_txn_id
from desktop.outbox import Outbox
from desktop.receipts.config import PrinterConfig
from desktop.receipts.model import display_width
from desktop.receipts.shift_slip import slip_layout, slip_text

from .conftest import (CASHIER, SUPERVISOR, SUPERVISOR_PIN, close_shift, open_account, sign_in, stays_true,
                       visible_window)
from core.journal_codec import read_range


def journal_entries(ledger, kind: str) -> list[dict]:
    out = []
    for part in ledger.partitions:
        out += [f for _, f in read_range(ledger.client, part.journal) if f.get("kind") == kind]
    return out


def enter_float(qtbot, window, text: str) -> None:
    dialog = window.drawer_hook.float_dialog
    assert dialog is not None and dialog.objectName() == "floatDialog"
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.amount_input.setText(text)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)


def press(qtbot, window, key) -> None:
    """A key on the sale screen, the main window active (offscreen, the test activates it)."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
    qtbot.keyClick(QApplication.focusWidget() or window, key)


def cash_move(qtbot, window, direction: str, amount: str, reason: str = "change", note: str = ""):
    press(qtbot, window, Qt.Key.Key_F10)
    dialog = window.drawer_hook.cash_dialog
    assert dialog is not None and dialog.objectName() == "cashMoveDialog"
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.direction_buttons[direction].setChecked(True)
    dialog.reason_buttons[reason].setChecked(True)
    dialog.amount_input.setText(amount)
    dialog.note_input.setText(note)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    return dialog


def top_up_cash(qtbot, window, account: str, amount: str) -> None:
    window.sale_page.account_input.setText(account)
    window.open_top_up(account)
    dialog = window.top_up_dialog
    qtbot.waitUntil(lambda: dialog.promotions is not None, timeout=5000)
    dialog.amount_input.setText(amount)
    dialog.method_buttons["cash"].setChecked(True)
    dialog.confirm()
    qtbot.waitUntil(lambda: window.engine.pending_count == 0 and window.sale_page.busy_txn is None, timeout=5000)


def z_record(qtbot, window, ledger, shift) -> dict:
    txn = shift_txn_id("T1", shift.shift_id, opened_ms=shift.opened_ms)
    outbox = window.engine.outbox
    qtbot.waitUntil(lambda: outbox.get(txn) is not None and outbox.get(txn).applied, timeout=5000)
    [z] = [e for e in journal_entries(ledger, "shift_close") if e["txn"] == txn]
    return json.loads(z["z"])


# ---------------------------------------------------------------- float

def test_the_sign_in_that_opens_a_shift_asks_for_the_opening_float(qtbot, terminal):
    sign_in(qtbot, terminal, opening_float=None)
    dialog = terminal.drawer_hook.float_dialog
    qtbot.waitUntil(lambda: visible_window("floatDialog") is dialog, timeout=3000)
    for bad in ("", "-5", "1.234", "abc"):
        dialog.amount_input.setText(bad)
        qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
        assert dialog.isVisible() and dialog.message.text()
    assert terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id) == []
    enter_float(qtbot, terminal, "¥150.50")
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    [entry] = terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)
    assert (entry.kind, entry.amount_minor, entry.cashier_id) == ("float", 15050, CASHIER)
    # the same shift, signed in again: no second float
    terminal.sign_out()
    sign_in(qtbot, terminal, opening_float=None)
    assert terminal.drawer_hook.float_dialog is dialog and visible_window("floatDialog") is None


def test_a_float_of_zero_is_a_float_and_a_float_put_off_is_asked_again(qtbot, terminal):
    sign_in(qtbot, terminal, opening_float=None)
    first = terminal.drawer_hook.float_dialog
    qtbot.waitUntil(first.isVisible, timeout=3000)
    qtbot.mouseClick(first.cancel_button, Qt.MouseButton.LeftButton)          # Later
    assert not terminal.engine.outbox.has_float(terminal.shift.shift_id)
    terminal.sign_out()
    sign_in(qtbot, terminal, opening_float=None)
    assert terminal.drawer_hook.float_dialog is not first                     # asked again
    enter_float(qtbot, terminal, "0")
    qtbot.waitUntil(lambda: terminal.engine.outbox.has_float(terminal.shift.shift_id), timeout=3000)
    assert terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)[0].amount_minor == 0


# ---------------------------------------------------------------- cash in / out

def test_cash_in_and_out_below_the_threshold_need_no_supervisor(qtbot, terminal):
    sign_in(qtbot, terminal, opening_float="100")
    dialog = cash_move(qtbot, terminal, "cash_in", "50", "change")
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    dialog = cash_move(qtbot, terminal, "cash_out", "20.50", "expense", "coffee filters")
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    moves = [(e.kind, e.amount_minor, e.reason, e.note, e.approved_by)
             for e in terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)]
    assert moves == [("float", 10000, "", "", ""), ("cash_in", 5000, "change", "", ""),
                     ("cash_out", 2050, "expense", "coffee filters", "")]
    # no ledger operation: nothing in the outbox's ops, no member's money moved
    assert terminal.engine.outbox.ops_of_shift(terminal.shift.shift_id) == []
    report = terminal._shift_report(terminal.shift)
    assert (report.cash_in.sum_minor, report.cash_out.sum_minor, report.cash_expected_minor) == (5000, 2050, 12950)


def test_other_needs_a_note_and_a_zero_amount_is_refused(qtbot, terminal):
    sign_in(qtbot, terminal)
    dialog = cash_move(qtbot, terminal, "cash_out", "0")
    assert dialog.isVisible() and dialog.message.text()
    dialog.amount_input.setText("10")
    dialog.reason_buttons["other"].setChecked(True)
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "Note" in dialog.message.text()
    dialog.note_input.setText("window cleaner")
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
    assert terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)[-1].note == "window cleaner"


def test_cash_out_above_the_threshold_needs_a_supervisor(qtbot, terminal):
    sign_in(qtbot, terminal, opening_float="500")
    dialog = cash_move(qtbot, terminal, "cash_out", "300", "safe_drop")       # above ¥200
    sup = dialog.supervisor_dialog
    assert sup is not None and sup.objectName() == "supervisorDialog"
    qtbot.waitUntil(sup.isVisible, timeout=3000)
    stays_true(qtbot, lambda: len(terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)) == 1, 300)
    sup.supervisor_input.setText(SUPERVISOR)
    sup.pin_input.setText("0000")                                              # a wrong PIN
    qtbot.mouseClick(sup.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(sup.message.text()) and sup.confirm_button.isEnabled(), timeout=5000)
    assert sup.isVisible() and len(terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)) == 1
    sup.supervisor_input.setText(SUPERVISOR)
    sup.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(sup.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    last = terminal.engine.outbox.drawer_of_shift(terminal.shift.shift_id)[-1]
    assert (last.kind, last.amount_minor, last.reason, last.approved_by) == ("cash_out", 30000, "safe_drop",
                                                                              SUPERVISOR)


def test_the_threshold_is_a_setting(qtbot, make_terminal, redis_url, ledger, registry, tmp_path):
    from desktop.settings import TerminalSettings
    ledger.init()
    settings = TerminalSettings(tmp_path / "till.ini")
    settings.q.setValue("drawer/approval_above_minor", "1000")               # ¥10
    window = make_terminal(redis_url, settings=settings)
    sign_in(qtbot, window)
    dialog = cash_move(qtbot, window, "cash_in", "10.01")
    assert dialog.supervisor_dialog is not None
    qtbot.waitUntil(dialog.supervisor_dialog.isVisible, timeout=3000)


# ---------------------------------------------------------------- counted close, Z record

@pytest.mark.parametrize("counted, over_short, words", [("230.00", 1000, "Over ¥10.00"),
                                                        ("217.50", -250, "Short ¥2.50")])
def test_a_counted_close_shows_and_journals_over_or_short(qtbot, terminal, ledger, counted, over_short, words):
    open_account(ledger, "D-0001", 0)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN, opening_float="100")
    top_up_cash(qtbot, terminal, "D-0001", "150")                             # cash top-up: into the drawer
    cash_move(qtbot, terminal, "cash_in", "20")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    cash_move(qtbot, terminal, "cash_out", "50", "safe_drop")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    shift = terminal.shift
    dialog = terminal.close_shift()
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    assert "float ¥100.00 · cash in ¥20.00 · cash out ¥50.00" in dialog.summary.text()
    assert "Cash expected: ¥220.00" in dialog.over_short.text()             # 100 + 150 + 20 - 50
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)       # not counted: refused
    assert dialog.isVisible() and "Count the drawer" in dialog.message.text()
    dialog.counted_input.setText(counted)
    assert words in dialog.over_short.text()
    report_dialog = close_shift(qtbot, terminal, counted=counted)
    report = report_dialog.report
    assert (report.cash_expected_minor, report.over_short_minor) == (22000, over_short)
    text = report_dialog.view.toPlainText()
    assert "Opening float" in text and words in text and "Cash expected in the drawer" in text
    z = z_record(qtbot, terminal, ledger, shift)
    assert (z["drawer_float_minor"], z["cash_in_count"], z["cash_in_minor"], z["cash_out_count"],
            z["cash_out_minor"]) == (10000, 1, 2000, 1, 5000)
    assert (z["cash_expected_minor"], z["drawer_counted_minor"], z["over_short_minor"]) == (
        22000, 22000 + over_short, over_short)


def test_the_outbox_of_an_earlier_version_gets_the_drawer_table(tmp_path):
    import sqlite3
    path = tmp_path / "outbox.sqlite"
    db = sqlite3.connect(path)
    ob = Outbox(path)                      # version 4 made, then put back to look like version 3
    ob.close()
    db.execute("DROP TABLE drawer")
    db.execute("PRAGMA user_version = 3")
    db.execute("INSERT INTO shifts (terminal_id, opened_ms, opened_by) VALUES ('T1', 1, 'c1')")
    db.commit()
    db.close()
    ob = Outbox(path)
    assert ob.current_shift().shift_id == 1
    ob.add_drawer(1, "float", 0, "c1")
    with pytest.raises(ValueError):
        ob.add_drawer(1, "float", 100, "c1")                                 # one float a shift
    with pytest.raises(ValueError):
        ob.add_drawer(1, "cash_in", -1, "c1")
    assert [e.kind for e in ob.drawer_of_shift(1)] == ["float"]
    ob.close()


# ---------------------------------------------------------------- X report

def test_the_x_report_shows_the_drawer_mid_shift_and_closes_nothing(qtbot, terminal, ledger):
    open_account(ledger, "X-0001", 0)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN, opening_float="80")
    top_up_cash(qtbot, terminal, "X-0001", "40")
    cash_move(qtbot, terminal, "cash_out", "15", "expense", "milk")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    press(qtbot, terminal, Qt.Key.Key_F11)
    dialog = terminal.drawer_hook.x_report_dialog
    assert dialog is not None and dialog.objectName() == "xReportDialog"
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    text = dialog.view.toPlainText()
    assert "X report (shift still open)" in text
    assert "Cash expected in the drawer" in text and "¥105.00" in text       # 80 + 40 - 15
    assert "milk" in text and "Expense" in text
    assert dialog.print_button.isVisible() and dialog.slip_button.isVisible()
    assert terminal.shift is not None and terminal.engine.outbox.current_shift() is not None
    assert journal_entries(ledger, "shift_close") == []


# ---------------------------------------------------------------- slips

def _report_with_drawer(qtbot, terminal, ledger, counted: str | None):
    open_account(ledger, "S-0001", 0)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN, opening_float="100")
    top_up_cash(qtbot, terminal, "S-0001", "50")
    cash_move(qtbot, terminal, "cash_out", "30", "safe_drop")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    if counted is None:
        return terminal._shift_report(terminal.shift)
    return close_shift(qtbot, terminal, counted=counted).report


@pytest.mark.parametrize("paper_mm, columns", [(58, 32), (80, 48)])
def test_the_z_slip_prints_to_the_receipt_printer_at_58_and_80_mm(qtbot, terminal, ledger, tmp_path, paper_mm,
                                                                   columns):
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device), paper_mm=paper_mm)
    terminal.receipts.options = replace(terminal.receipts.options, language="zh_CN", shop_name="便利店")
    report = _report_with_drawer(qtbot, terminal, ledger, counted="118")     # expected 120: short 2
    qtbot.waitUntil(lambda: "报表".encode("gb18030") in device.read_bytes(), timeout=5000)   # printed at close
    dialog = terminal.report_dialog
    assert dialog.objectName() == "shiftReportDialog"
    device.write_bytes(b"")                  # the slip printed by itself at close (auto_print), then again:
    qtbot.mouseClick(dialog.slip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Slip printed" in dialog.message.text(), timeout=5000)
    data = device.read_bytes()
    text = slip_text(report, columns, "zh_CN", shop_name="便利店")
    assert all(display_width(line) <= columns for line in text.splitlines())
    for words in ("便利店", "Z 报表（交班）", "备用金", "¥100.00", "应有现金", "¥120.00", "实点现金", "¥118.00", "短款 ¥2.00",
                  "取出现金"):
        assert words in text, words
        assert words.encode("gb18030") in data, words                        # the bytes the printer got
    english = slip_text(report, columns, "en")
    assert "Z REPORT (SHIFT CLOSED)" in english and "Short ¥2.00" in english
    assert all(display_width(line) <= columns for line in english.splitlines())


def test_the_x_slip_prints_mid_shift_and_a_till_without_printer_shows_it(qtbot, terminal, ledger, tmp_path):
    report = _report_with_drawer(qtbot, terminal, ledger, counted=None)
    press(qtbot, terminal, Qt.Key.Key_F11)
    dialog = terminal.drawer_hook.x_report_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    qtbot.mouseClick(dialog.slip_button, Qt.MouseButton.LeftButton)         # no printer set up: shown
    preview = terminal.drawer_hook.slip_preview
    assert preview is not None and preview.objectName() == "slipPreview"
    assert "X REPORT (SHIFT OPEN)" in preview.text and "120.00" in preview.text
    assert preview.findChild(QLabel, "slipPreviewImage").pixmap().width() == 48 * 12 + 2 * 16       # 80 mm, the default paper
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    terminal.receipts.config = PrinterConfig(connection="file", address=str(device), paper_mm=58)
    qtbot.mouseClick(dialog.slip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Slip printed" in dialog.message.text(), timeout=5000)
    assert "120.00".encode() in device.read_bytes()
    items = slip_layout(report, 32, "en")
    assert not any(getattr(i, "text", "").startswith("Counted") for i in items)    # not counted yet
    assert terminal.shift is not None


# ---------------------------------------------------------------- the back office

@pytest.fixture
def pg_url():
    from tests.support.postgres import fresh_database
    with fresh_database() as url:
        yield url


def test_report_shifts_shows_the_drawer_after_the_book_is_made(qtbot, terminal, ledger, redis_url, pg_url, capsys):
    from tests.reconcile.conftest import run_cli
    open_account(ledger, "R-0001", 0)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN, opening_float="100")
    top_up_cash(qtbot, terminal, "R-0001", "60")
    cash_move(qtbot, terminal, "cash_in", "25")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    cash_move(qtbot, terminal, "cash_out", "45.50", "safe_drop")
    qtbot.waitUntil(lambda: terminal.drawer_hook.cash_dialog.isHidden(), timeout=3000)
    shift = terminal.shift
    close_shift(qtbot, terminal, counted="140.50")                            # expected 139.50: over 1.00
    z = z_record(qtbot, terminal, ledger, shift)
    assert z["over_short_minor"] == 100
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    capsys.readouterr()
    from datetime import datetime, timezone
    day = datetime.now(timezone.utc).date().isoformat()
    assert run_cli("report", "shifts", "--date", day, "--tz", "UTC", redis_url=redis_url, database_url=pg_url) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "Over / short" in line)
    assert "Float" in header and "Cash in / out" in header and "Counted" in header
    row = next(line for line in out.splitlines() if line.startswith("T1 "))
    for cell in ("100.00", "25.00 / 45.50", "139.50", "140.50", "1.00"):
        assert cell in row, (cell, row)
    assert run_cli("report", "shifts", "--date", day, "--tz", "UTC", "--lang", "zh_CN", redis_url=redis_url,
                   database_url=pg_url) == 0
    zh = capsys.readouterr().out
    assert "备用金" in zh and "长短款" in zh and "实点现金" in zh


def test_the_drawer_counted_by_denomination_is_the_count_of_the_z_record(qtbot, terminal, ledger):
    sign_in(qtbot, terminal, opening_float="200")
    shift = terminal.shift
    dialog = terminal.close_shift()
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    qtbot.mouseClick(dialog.denominations_button, Qt.MouseButton.LeftButton)
    pieces = dialog.denomination_dialog
    assert pieces is not None and pieces.objectName() == "denominationDialog"
    qtbot.waitUntil(pieces.isVisible, timeout=3000)
    for minor, n in ((10_000, 1), (5_000, 1), (2_000, 2), (500, 1), (50, 3), (10, 4)):    # ¥196.90
        pieces.findChild(QLineEdit, f"denomination_{minor}").setText(str(n))
    assert "¥196.90" in pieces.total.text()
    qtbot.mouseClick(pieces.confirm_button, Qt.MouseButton.LeftButton)
    assert dialog.counted_input.text() == "196.90" and "Short ¥3.10" in dialog.over_short.text()
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: terminal.shift is None, timeout=5000)
    count = terminal.engine.outbox.drawer_of_shift(shift.shift_id)[-1]
    assert (count.kind, count.amount_minor) == ("count", 19690)
    assert json.loads(count.detail)["pieces"] == {"10000": 1, "5000": 1, "2000": 2, "500": 1, "50": 3, "10": 4}
    z = z_record(qtbot, terminal, ledger, shift)
    assert (z["drawer_counted_minor"], z["over_short_minor"]) == (19690, -310)
