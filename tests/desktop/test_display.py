"""The balance on screen (issue 9): the on-screen account is re-read periodically
(through the gateway: the till keeps no read cache of its own), so another till's
change shows without a look-up; every operation's own answer (always fresh) is shown
at once; the settings that drive it are read strictly."""
from __future__ import annotations

import time

from desktop.settings import TerminalSettings

from .conftest import open_account, sign_in


def look_up(qtbot, window, account: str):
    page = window.sale_page
    page.account_input.setText(account)
    page.look_up()
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == account, timeout=5000)


def test_another_terminals_change_shows_within_refresh_plus_max_age(qtbot, make_terminal, redis_url, ledger,
                                                                    registry):
    ledger.init()
    window = make_terminal(redis_url)
    open_account(ledger, "V-1", 5000)
    sign_in(qtbot, window)
    page = window.sale_page
    page.refresh_timer.setInterval(100)
    look_up(qtbot, window, "V-1")
    assert page.balance_label.text().endswith("Balance ¥50.00")
    started = time.monotonic()
    assert ledger.credit("V-1", 700, txn_id="other-till-credit").applied      # another terminal
    assert ledger.hold("V-1", 200, txn_id="other-till-hold", ttl_s=600).applied
    qtbot.waitUntil(lambda: "Balance ¥57.00 · On hold ¥2.00 · Available ¥55.00" in page.balance_label.text(),
                    timeout=3000)
    # No timed bound here (issue 12): the change shows by the refresh alone, with no
    # look-up or operation of this terminal; how fast is measured, not asserted.
    seen_s = time.monotonic() - started
    print(f"another terminal's change on screen after {seen_s * 1000:.0f} ms")


def test_an_operation_shows_its_own_fresh_balance_at_once(qtbot, make_terminal, redis_url, ledger, registry):
    ledger.init()
    window = make_terminal(redis_url)
    open_account(ledger, "V-2", 5000)
    sign_in(qtbot, window)
    page = window.sale_page
    page.refresh_timer.stop()
    look_up(qtbot, window, "V-2")
    assert ledger.deduct("V-2", 1000, txn_id="other-till-charge").applied     # the screen still says ¥50.00
    assert page.balance_label.text().endswith("Balance ¥50.00")
    page.amount_input.setText("5.00")
    page.charge()
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    assert page.result_label.text() == "Approved: ¥5.00 charged\nNew balance ¥35.00"
    assert page.balance_label.text().endswith("Balance ¥35.00")           # at once, from the answer
    page.refresh_account()                                                # the re-read after it is fresh too
    qtbot.waitUntil(lambda: not page._refreshing, timeout=3000)
    assert page.balance_label.text().endswith("Balance ¥35.00")
    assert ledger.balance("V-2") == 3500


def test_display_settings_are_read_strictly(tmp_path):
    settings = TerminalSettings(tmp_path / "t.ini")
    assert settings.hold_minutes == 30
    for text, expected in (("45", 45), ("0", 30), ("10081", 30), ("1e3", 30)):
        settings.q.setValue("holds/minutes", text)
        assert settings.hold_minutes == expected, text
    settings.save(hold_minutes=90)
    assert TerminalSettings(tmp_path / "t.ini").hold_minutes == 90
