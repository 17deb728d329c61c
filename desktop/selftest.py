"""`cashier-terminal --self-test`: checks an installation without a display.

Imports every module, finds the ledger's Lua scripts (core.scripts.load_scripts),
loads every translation, checks that the fonts Qt resolves draw real glyphs for
"收银 Cashier ¥0.01" (desktop/fonts.py: not empty boxes), and builds the main window on
Qt's offscreen platform (no Redis needed: nothing connects until the engine starts). Prints one line and
returns 0 when all is well, 1 with the first problem otherwise.
"""
from __future__ import annotations

import importlib
import os
import sys
import tempfile

MODULES = ("core", "core.cashiers", "gateway.client", "desktop.money", "desktop.outbox", "desktop.engine", "desktop.workers",
           "desktop.texts", "desktop.i18n", "desktop.settings", "desktop.keypad", "desktop.signin",
           "desktop.sale", "desktop.dialogs", "desktop.report", "desktop.main_window", "desktop.style",
           "desktop.scanner", "desktop.fonts")


def check() -> str:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for name in MODULES:
        importlib.import_module(name)
    if "redis" in sys.modules:
        # a till holds no Redis client (it reaches the ledger through the gateway only)
        raise RuntimeError("the terminal loaded a Redis client")

    from PySide6.QtCore import QTranslator
    from PySide6.QtWidgets import QApplication

    from desktop import i18n
    app = QApplication.instance() or QApplication(["cashier-terminal-self-test"])
    from desktop import fonts
    font_problem = fonts.self_test_problem()
    if font_problem:
        raise RuntimeError(font_problem)
    font_families = ", ".join(fonts.families_used(fonts.SELF_TEST_TEXT))
    for lang in i18n.LANGUAGES[1:]:
        path = i18n.translation_file(lang)
        if not QTranslator().load(str(path)):
            raise RuntimeError(f"translation {path} missing or unreadable")
    i18n.install("zh_CN")
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.settings import gateway_client
    with tempfile.TemporaryDirectory(prefix="cashier-self-test-") as tmp:
        # nothing is sent: the window is built on a client of a gateway that is not there
        engine = Engine(gateway_client(["http://127.0.0.1:1"], "self-test"), "SELFTEST", tmp)
        window = MainWindow(engine)
        for name in ("accountInput", "amountInput", "chargeButton", "balanceLabel", "resultLabel",
                     "historyTable", "connectionStatus"):
            if window.findChild(object, name) is None:
                raise RuntimeError(f"main window has no {name}")
        window.close()
        engine.close()
    i18n.install("en")
    from desktop.receipts.printer import self_test as receipt_self_test   # python-escpos, Pillow
    receipt_self_test()
    del app
    return (f"gateway client, {len(i18n.LANGUAGES)} languages, text drawn with {font_families}, "
            "main window built, receipt composed")


def run() -> int:
    try:
        summary = check()
    except Exception as exc:   # the one line must say what is wrong, never a traceback
        print(f"cashier-terminal self-test: FAILED: {type(exc).__name__}: {exc}")
        return 1
    print(f"cashier-terminal self-test: OK ({summary})")
    return 0
