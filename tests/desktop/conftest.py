"""Fixtures for the terminal's tests: real Redis (db 3 via `redis_url`), a cashier
registry with a cashier and a supervisor, and a factory for terminals (engine +
main window, offscreen) whose worker threads are all waited for at teardown.

Tills hold no Redis login: `make_terminal(redis_url)` starts a real ledger gateway
(tests/support/gateway.py, in a thread of this process) in front of that Redis URL
(a proxy's or a Sentinel URL included), enrols the terminal there and gives the engine
a `GatewayLedger` with that credential, as in a shop. `till_ledger(redis_url, 'T1')`
does the same for a test that builds its own Engine."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from core import Ledger  # noqa: E402
from core.cashiers import CashierRegistry  # noqa: E402
from core.connection import connect  # noqa: E402

CASHIER, CASHIER_PIN = "c1", "1234"
SUPERVISOR, SUPERVISOR_PIN = "sup", "9876"
SUPERVISOR2, SUPERVISOR2_PIN = "sup2", "8765"    # approves what the first supervisor does (no self-approval)
FAST = dict(ping_interval_ms=200, retry_interval_ms=250)
TILL_TIMEOUT_S = 2.0       # the till's HTTP timeout: above the gateway's own Redis deadline (1 s)


@pytest.fixture
def registry(redis_url):
    client = connect(redis_url)
    reg = CashierRegistry(client)
    reg.add(CASHIER, "Li Na", CASHIER_PIN)
    reg.add(SUPERVISOR, "Wang Wei", SUPERVISOR_PIN, supervisor=True, can_top_up=True)
    reg.add(SUPERVISOR2, "Chen Jing", SUPERVISOR2_PIN, supervisor=True, can_top_up=True)
    yield reg
    client.close()


@pytest.fixture
def gateways():
    """The ledger gateways of this test, one per Redis URL (tests/support/gateway.py)."""
    from tests.support.gateway import Gateways
    made = Gateways()
    yield made
    made.stop()


@pytest.fixture
def till_ledger(gateways):
    """till_ledger(redis_url, terminal_id='T1') -> GatewayLedger with that terminal's credential."""
    def make(url, terminal_id="T1", timeout_s=TILL_TIMEOUT_S):
        return gateways.till_ledger(url, terminal_id, timeout_s=timeout_s)
    return make


@pytest.fixture
def make_terminal(qtbot, tmp_path, till_ledger):
    """make_terminal(url, name='T1', data_dir=None, settings=None) -> MainWindow (engine started),
    its engine talking to a gateway in front of `url`."""
    from desktop import i18n
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    made = []

    def make(url, terminal_id="T1", data_dir=None, settings=None, **options):
        engine = Engine(till_ledger(url, terminal_id), terminal_id, data_dir or tmp_path / f"data-{terminal_id}",
                        **{**FAST, **options})
        window = MainWindow(engine, settings)
        qtbot.addWidget(window)
        window.show()
        engine.start()
        made.append(window)
        return window

    yield make
    for window in made:
        window.engine.close()   # waits for every worker job
    i18n.install("en")


@pytest.fixture
def terminal(make_terminal, redis_url, ledger, registry):
    ledger.init()      # what `cashierctl init` does on a new installation
    return make_terminal(redis_url)


def sign_in(qtbot, window, cashier=CASHIER, pin=CASHIER_PIN, opening_float: str | None = "0"):
    """Sign in; a sign-in that opens a shift is asked for the drawer's opening float
    (desktop/drawer.py): `opening_float` is typed and confirmed (None: left open)."""
    page = window.sign_in_page
    page.cashier_input.setText(cashier)
    page.pin_input.setText(pin)
    qtbot.mouseClick(page.sign_in_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.sale_page, timeout=5000)
    qtbot.waitUntil(lambda: window.engine.state == "online", timeout=5000)
    dialog = window.drawer_hook.float_dialog
    if opening_float is not None and dialog is not None and dialog.isVisible():
        dialog.amount_input.setText(opening_float)
        qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=3000)
        # the main window has the keyboard again, the cursor in the account field (offscreen,
        # activation comes as an event)
        from PySide6.QtWidgets import QApplication
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window
                        and QApplication.focusWidget() is page_focus(window), timeout=3000)


def page_focus(window):
    return window.sale_page.account_input


def unreachable_ledger(terminal_id: str = "T1"):
    """A till's ledger client of a gateway that is not there (nothing listens on port 1)."""
    from gateway.client import GatewayLedger
    return GatewayLedger(["http://127.0.0.1:1"], f"{terminal_id}.not-enrolled", timeout_s=0.5)


def approve(qtbot, window, supervisor=SUPERVISOR, pin=SUPERVISOR_PIN) -> None:
    """A supervisor's approval checked by the gateway for the signed-in cashier's next
    operation (what the supervisor dialog does): the grant waits in the engine for the
    operation submitted with approved_by=supervisor."""
    answers = []
    window.engine.approve(supervisor, pin, answers.append, answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=5000)
    signin, approval = answers[0]
    assert approval is not None, signin


def open_account(ledger: Ledger, account_id: str, initial_minor: int):
    r = ledger.open_account(account_id, txn_id=f"open-{account_id}", initial_minor=initial_minor)
    assert r.applied


def close_shift(qtbot, window, supervisor: tuple[str, str] | None = None, counted: str | None = None):
    """Close shift… and confirm it (with a supervisor's id and PIN when given), the
    drawer counted as `counted` (default: the cash expected, so neither over nor short);
    returns the shift report dialog."""
    from desktop import money
    dialog = window.close_shift()
    assert dialog is not None and dialog.objectName() == "closeShiftDialog"
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.counted_input.setText(money.format_plain(dialog.report.cash_expected_minor) if counted is None
                                 else counted)
    if supervisor is not None:
        dialog.supervisor_input.setText(supervisor[0])
        dialog.pin_input.setText(supervisor[1])
    qtbot.mouseClick(dialog.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.shift is None, timeout=5000)
    return window.report_dialog


def visible_window(name: str):
    """The visible top-level window (dialog) with objectName `name`, or None."""
    from PySide6.QtWidgets import QApplication
    found = [w for w in QApplication.topLevelWidgets() if w.objectName() == name and w.isVisible()]
    return found[-1] if found else None


def stays_true(qtbot, condition, window_ms: int = 600, step_ms: int = 25) -> None:
    """Assert that `condition()` holds throughout a bounded window (absence of an event,
    e.g. no second charge), checking every `step_ms` while the event loop runs."""
    waited = 0
    while waited < window_ms:
        assert condition(), f"stopped holding after {waited} ms"
        qtbot.wait(step_ms)
        waited += step_ms
    assert condition()


@pytest.fixture
def terminal_with_display(qtbot, tmp_path, redis_url, till_ledger, ledger, registry):
    """A terminal with the customer display on (zh_CN, a shop name), through the gateway."""
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.settings import TerminalSettings
    ledger.init()
    ini = tmp_path / "terminal.ini"
    ini.write_text("[customer_display]\nenabled=true\nscreen=1\nlanguage=zh_CN\ngeometry=0,0,800,480\n"
                   "[shop]\nname=星光便利店\n", encoding="utf-8")
    engine = Engine(till_ledger(redis_url), "T1", tmp_path / "data", **FAST)
    window = MainWindow(engine, TerminalSettings(ini))
    qtbot.addWidget(window)
    window.show()
    engine.start()
    yield window
    engine.close()
    if window.customer_display is not None:
        window.customer_display.close()
