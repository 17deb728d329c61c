"""A whole shift on a real X display (run under Xvfb by tests/desktop/test_screen_fit.py,
or by hand to take the docs' screenshots): the terminal starts full screen on the X
platform, a cashier signs in (the drawer's opening float typed), a card is scanned, a
charge, a refund approved by a supervisor, the till locked with F2 (a scan while locked
does nothing) and unlocked with the PIN, the shift closed with F8 and its confirmation
(the drawer counted). With `--members` (the
ledger holds the members 张三 and 张三丰, a top-up promotion, and c1 may top up): a
look-up by name with its pick list, a top-up paid by WeChat with its bonus, Member… and
an account closed with a supervisor's approval and its outcome. After every step each
visible widget of the main window and each open dialog must lie inside the screen.
Prints one JSON line: {"screen": [w, h], "steps": [...], "outside": [...]}. The terminal
reaches REDIS_URL through a ledger gateway this program starts on loopback, as in a shop.

    python -m tests.desktop.xvfb_session REDIS_URL DATA_DIR [--lang zh_CN] [--members] [--shots DIR --tag NAME]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("redis_url")
    p.add_argument("data_dir")
    p.add_argument("--lang", default="en")
    p.add_argument("--shots", help="save screenshots into this directory")
    p.add_argument("--tag", default="", help="screenshot name suffix, e.g. 1024x768")
    p.add_argument("--members", action="store_true", help="also the member steps (pick list, top-up, close)")
    args = p.parse_args(argv)

    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QWidget

    from desktop import i18n
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.settings import TerminalSettings

    app = QApplication(["cashier-terminal"])
    i18n.install(args.lang)
    settings = TerminalSettings(Path(args.data_dir) / "terminal.ini")
    settings.q.setValue("ui/fullscreen", "true")
    from tests.support.gateway import InProcessGateway
    gateway = InProcessGateway(args.redis_url).start()      # the till reaches Redis only through it
    engine = Engine(gateway.till_ledger("T1"), "T1", Path(args.data_dir), ping_interval_ms=300,
                    retry_interval_ms=300)
    window = MainWindow(engine, settings)
    # the terminal's kiosk start (what --fullscreen does); the plain Qt call where it has none
    getattr(window, "show_full_screen", window.showFullScreen)()
    engine.start()
    screen = window.screen().geometry()
    report = {"screen": [screen.width(), screen.height()], "steps": [], "outside": []}

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait(cond, what: str, ms: int = 10000) -> None:
        for _ in range(ms // 20):
            if cond():
                return
            pump(20)
        raise TimeoutError(what)

    def visible_window(name: str):
        found = [w for w in QApplication.topLevelWidgets() if w.objectName() == name and w.isVisible()]
        return found[-1] if found else None

    def check(step: str) -> None:
        pump(150)          # let the window system map and lay out what just appeared
        report["steps"].append(step)
        windows = [window] + [w for w in QApplication.topLevelWidgets()
                              if w is not window and w.isVisible() and w.isWindow() and w.objectName()]
        for top in windows:
            for w in [top] + top.findChildren(QWidget):
                if not w.isVisible() or w.width() == 0 or w.height() == 0 or w.window() is not top:
                    continue
                top_left = w.mapToGlobal(w.rect().topLeft())
                g = w.rect().translated(top_left)
                parent = w.parentWidget()
                clipped = (w is not top and parent is not None and not _scrolled(w)
                           and not parent.rect().contains(w.geometry()))
                if not screen.contains(g) or clipped:
                    report["outside"].append({"step": step, "window": top.objectName(),
                                              "widget": w.objectName() or type(w).__name__,
                                              "rect": [g.x(), g.y(), g.width(), g.height()],
                                              "clipped_by_parent": clipped})

    def _scrolled(w) -> bool:
        # inside a scroll area (the table's cells, the report view): clipped on purpose
        parent = w.parentWidget()
        while parent is not None:
            if parent.inherits("QAbstractScrollArea"):
                return True
            parent = parent.parentWidget()
        return False

    def decided(kind: str) -> bool:
        last = window.sale_page._last_result
        return bool(last) and last[1].kind == kind and last[1].applied

    def shot(name: str) -> None:
        if args.shots:
            pump(200)
            out = Path(args.shots) / f"{name}-{args.tag}-{args.lang}.png"
            window.screen().grabWindow(0).save(str(out))

    def members_steps(sale) -> None:
        sale.account_input.setFocus()
        sale.account_input.clear()
        sale.account_input.insert("张三")                          # what an input method commits
        QTest.keyClick(sale.account_input, Qt.Key.Key_Return)
        wait(lambda: visible_window("memberPickDialog") is not None, "pick list")
        check("pick list")
        shot("member-pick")
        QTest.keyClick(visible_window("memberPickDialog").list, Qt.Key.Key_Return)
        wait(lambda: sale._account is not None and sale._account.holder_name == "张三", "member on screen")
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_F6)
        wait(lambda: visible_window("topUpDialog") is not None, "top-up dialog")
        top_up = visible_window("topUpDialog")
        wait(lambda: top_up.promotions is not None, "promotions")
        top_up.amount_input.setFocus()
        QTest.keyClicks(top_up.amount_input, "100", Qt.KeyboardModifier.NoModifier, 30)
        QTest.mouseClick(top_up.method_buttons["wechat"], Qt.MouseButton.LeftButton)
        check("top-up dialog")
        shot("top-up")
        QTest.keyClick(top_up.amount_input, Qt.Key.Key_Return)
        wait(lambda: sale.busy_txn is None and decided("credit"), "topped up")
        wait(lambda: "+" in sale.balance_label.text(), "principal + bonus shown")
        check("topped up")
        shot("member-on-screen")
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_F7)
        wait(lambda: visible_window("membersDialog") is not None, "member dialog")
        check("member dialog")
        QTest.mouseClick(visible_window("membersDialog").close_button, Qt.MouseButton.LeftButton)
        wait(lambda: visible_window("closeAccountDialog") is not None, "close account dialog")
        close = visible_window("closeAccountDialog")
        QTest.keyClicks(close.supervisor_input, "sup", Qt.KeyboardModifier.NoModifier, 30)
        close.pin_input.setFocus()
        QTest.keyClicks(close.pin_input, "9876", Qt.KeyboardModifier.NoModifier, 30)
        check("close account dialog")
        shot("close-account")
        QTest.keyClick(close.pin_input, Qt.Key.Key_Return)
        wait(lambda: visible_window("outcomeDialog") is not None, "outcome")
        check("close outcome")
        shot("close-outcome")
        QTest.keyClick(visible_window("outcomeDialog"), Qt.Key.Key_Return)
        wait(lambda: visible_window("outcomeDialog") is None and window.isActiveWindow(), "outcome closed")

    try:
        wait(lambda: engine.state == "online", "online")
        wait(lambda: window.isVisible() and window.isActiveWindow(), "window shown")
        check("sign-in")
        page = window.sign_in_page
        QTest.keyClicks(page.cashier_input, "c1", Qt.KeyboardModifier.NoModifier, 30)
        QTest.keyClick(page.cashier_input, Qt.Key.Key_Return)
        QTest.keyClicks(page.pin_input, "1234", Qt.KeyboardModifier.NoModifier, 30)
        QTest.keyClick(page.pin_input, Qt.Key.Key_Return)
        wait(lambda: window.stack.currentWidget() is window.sale_page, "signed in")
        # the shift opens: the drawer's opening float (desktop/drawer.py), typed and Enter
        wait(lambda: visible_window("floatDialog") is not None, "opening float")
        check("opening float")
        shot("opening-float")
        QTest.keyClicks(visible_window("floatDialog").amount_input, "100", Qt.KeyboardModifier.NoModifier, 30)
        QTest.keyClick(visible_window("floatDialog"), Qt.Key.Key_Return)
        wait(lambda: visible_window("floatDialog") is None and window.isActiveWindow()
             and QApplication.focusWidget() is window.sale_page.account_input, "float entered")
        sale = window.sale_page
        for account, amount in (("6222020000005678", "25.00"), ("6222020000001234", "36.80")):
            QTest.keyClicks(QApplication.focusWidget(), account)          # the scanner
            QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
            wait(lambda: sale._account is not None and sale._account.account_id == account, "looked up")
            QTest.keyClicks(sale.amount_input, amount, Qt.KeyboardModifier.NoModifier, 60)
            QTest.keyClick(sale.amount_input, Qt.Key.Key_Return)
            wait(lambda: sale.busy_txn is None and decided("deduct"), "charged")
        check("charged")
        charge = engine.outbox.ops_of_shift(window.shift.shift_id)[-1]
        row = sale._rows[charge.txn_id]
        sale.history_table.selectRow(row)
        QTest.keyClick(sale.history_table, Qt.Key.Key_F5)
        wait(lambda: visible_window("refundDialog") is not None, "refund dialog")
        dialog = visible_window("refundDialog")
        check("refund dialog")
        shot("refund-dialog")
        dialog.supervisor_input.setFocus()
        QTest.keyClicks(dialog.supervisor_input, "sup", Qt.KeyboardModifier.NoModifier, 30)
        dialog.pin_input.setFocus()
        QTest.keyClicks(dialog.pin_input, "9876", Qt.KeyboardModifier.NoModifier, 30)
        QTest.keyClick(dialog.pin_input, Qt.Key.Key_Return)
        wait(lambda: not dialog.isVisible(), "refund approved")
        wait(lambda: sale.busy_txn is None and decided("refund"), "refunded")
        QTest.keyClicks(QApplication.focusWidget() or sale.account_input, "6222020000001234")
        QTest.keyClick(QApplication.focusWidget() or sale.account_input, Qt.Key.Key_Return)
        wait(lambda: sale._account is not None, "looked up again")
        sale.amount_input.setText("8.00")
        check("refunded")
        shot("main-window")
        # the lock screen (issue 26 item 15): F2, a scan that must do nothing, the PIN
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_F2)
        wait(lambda: window.locked, "locked")
        check("locked")
        shot("lock-screen")
        QTest.keyClicks(QApplication.focusWidget(), "6222020000005678")     # the scanner, while locked
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
        pump(300)
        report["lock_scan"] = [sale.account_input.text(), sale.amount_input.text(), engine.pending_count,
                               len(engine.outbox.ops_of_shift(window.shift.shift_id))]
        QTest.keyClicks(QApplication.focusWidget(), "1234", Qt.KeyboardModifier.NoModifier, 80)
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
        wait(lambda: not window.locked, "unlocked")
        check("unlocked")
        if args.members:
            members_steps(sale)
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_F8)
        wait(lambda: visible_window("closeShiftDialog") is not None, "close shift dialog")
        check("close shift dialog")
        counted = visible_window("closeShiftDialog").counted_input           # the drawer counted
        QTest.keyClicks(counted, "100", Qt.KeyboardModifier.NoModifier, 30)
        shot("close-shift-count")
        QTest.keyClick(visible_window("closeShiftDialog"), Qt.Key.Key_Return)
        wait(lambda: visible_window("shiftReportDialog") is not None, "shift report")
        check("shift report")
        shot("shift-report")
        if args.members:
            visible_window("shiftReportDialog").view.scrollToAnchor("members")
            shot("shift-report-members")
        report["closed"] = engine.outbox.current_shift() is None
    except TimeoutError as exc:
        report["timeout"] = str(exc)
        report["visible"] = [w.objectName() or type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible()]
        report["result"] = window.sale_page.result_label.text()
        report["all"] = [(w.objectName() or type(w).__name__, w.isVisible()) for w in QApplication.topLevelWidgets()]
        report["shift"] = str(engine.outbox.current_shift())
        report["rd"] = str(window.report_dialog and (window.report_dialog.isVisible(), window.report_dialog.result()))
    finally:
        print(json.dumps(report), flush=True)
        window.close()
        engine.close()
        gateway.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
