"""The terminal fits the screens shops have (issue 13 item 11): the real window on a
real X display (Xvfb) at 1024x768, full screen, through a whole shift (sign in,
charge, refund, close the shift) with every widget of the main window and of each
dialog inside the screen; offscreen, the window's minimum size fits 1024x768 and no
button moves when a notice, an error or a hold panel appears."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.cashiers import CashierRegistry

from .conftest import CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in

ROOT = Path(__file__).resolve().parents[2]


def free_display() -> int:
    for number in range(90, 200):
        if not Path(f"/tmp/.X{number}-lock").exists() and not Path(f"/tmp/.X11-unix/X{number}").exists():
            return number
    raise RuntimeError("no free X display number")


@pytest.fixture
def xvfb_1024x768():
    """An Xvfb server at 1024x768 on a free display number, stopped afterwards."""
    if shutil.which("Xvfb") is None:
        pytest.skip("needs Xvfb (apt-get install xvfb libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0)")
    number = free_display()
    proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        # a condition, not a fixed sleep: the socket file exists a moment before the server
        # accepts clients (a test asking then "is a window manager running?" got "cannot tell")
        from desktop.app import _x_display_reachable
        while not (Path(f"/tmp/.X11-unix/X{number}").exists() and _x_display_reachable(f":{number}")):
            assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
            time.sleep(0.02)
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow    # ~9 s: a whole shift on Xvfb; not in the fast lane
def test_a_whole_shift_on_a_1024x768_screen(xvfb_1024x768, redis_url, ledger, tmp_path):
    ledger.init()
    open_account(ledger, "6222020000001234", 25800)
    open_account(ledger, "6222020000005678", 12000)
    for account_id, holder, phone in (("M-0001", "张三", "13800000001"), ("M-0002", "张三丰", "13800000002")):
        assert ledger.open_account(account_id, txn_id=f"open-{account_id}", holder_name=holder, phone=phone).applied
    assert ledger.add_promotion(10000, 2000, txn_id="promo-100-20").applied
    registry = CashierRegistry(ledger.client)
    registry.add(CASHIER, "Li Na", CASHIER_PIN, can_top_up=True)
    registry.add(SUPERVISOR, "Wang Wei", SUPERVISOR_PIN, supervisor=True)
    env = {**os.environ, "DISPLAY": xvfb_1024x768, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "tests.desktop.xvfb_session", redis_url, str(tmp_path), "--members"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["screen"] == [1024, 768]
    assert "timeout" not in report, report
    assert report["steps"] == ["sign-in", "opening float", "charged", "refund dialog", "refunded", "locked", "unlocked",
                               "pick list", "top-up dialog",
                               "topped up", "member dialog", "close account dialog", "close outcome",
                               "close shift dialog", "shift report"]
    assert report["outside"] == []
    # the scan while locked: the account and amount on screen as they were, nothing sent
    assert report["lock_scan"] == ["6222020000001234", "8.00", 0, 3]
    assert report["closed"] is True
    assert ledger.balance("6222020000001234") == 25800 and ledger.balance("6222020000005678") == 9500
    closed = ledger.account("M-0001")                  # topped up ¥100 + ¥20 bonus, then closed
    assert (closed.status, closed.balance_minor) == ("closed", 0)


def settle() -> None:
    """Run the pending layout requests (posted events), so geometry is final."""
    from PySide6.QtWidgets import QApplication
    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def test_the_window_fits_1024x768_and_nothing_moves(qtbot, terminal, ledger):
    from desktop.style import scale_for
    assert scale_for(1024, 768) == 1.0 and scale_for(1280, 800) == 1.0 and scale_for(1920, 1080) == 1.4
    minimum = terminal.minimumSizeHint()
    assert minimum.width() <= 1024 and minimum.height() <= 740, minimum       # room for a title bar
    terminal.resize(1024, 740)
    open_account(ledger, "FIT-0001", 10000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    qtbot.waitUntil(lambda: page.history_table.viewport().height() > 0, timeout=3000)
    names = ("chargeButton", "holdButton", "newSaleButton", "refundButton", "completeSaleButton",
             "releaseHoldButton", "historyTable")
    where = lambda: {n: terminal.findChild(object, n).mapTo(terminal, terminal.findChild(object, n).rect().topLeft())  # noqa: E731
                     for n in names}
    qtbot.waitUntil(lambda: page.notice_label.height() == page.refund_button.height(), timeout=3000)
    settle()
    before = where()
    page.show_notice("Checked: Charge ¥25.00 for PD-0001: Approved\nsecond line")
    settle()
    assert where() == before, "notice"
    page.amount_input.setText("abc")
    page.charge()                                   # an amount error appears
    settle()
    assert where() == before, "error"
    page.account_input.setText("FIT-0001")
    page.amount_input.setText("30.00")
    qtbot.mouseClick(page.hold_button, Qt.MouseButton.LeftButton)     # the hold panel fills
    qtbot.waitUntil(lambda: page.release_button.isEnabled(), timeout=5000)
    settle()
    assert where() == before
    # history rows visible: at least 3 in a window with a title bar, 4 full screen (kiosk)
    table = page.history_table
    assert table.viewport().height() >= 3 * table.verticalHeader().defaultSectionSize()
    terminal.resize(1024, 768)
    qtbot.waitUntil(lambda: table.viewport().height() >= 4 * table.verticalHeader().defaultSectionSize(),
                    timeout=3000)
