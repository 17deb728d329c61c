"""Issue 26 item 15, the lock screen, with real key events (pytest-qt, offscreen) against
the real Redis: F2 and Ctrl+L lock, an idle till locks by itself (lock/idle_s), while
locked the sale screen and its dialogs are covered, no key reaches the sale and a card
scan charges nothing; a wrong PIN says so and counts toward the lockout, the right PIN
(or a supervisor's) unlocks, and the sale screen comes back as it was, with the result
of a charge decided meanwhile."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from core.cashiers import fails_key
from desktop.settings import DEFAULT_LOCK_IDLE_S, SettingsDialog, TerminalSettings

from .conftest import CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, open_account, sign_in, stays_true, \
    visible_window
from .test_till_day import scan_with_timestamps

ENTER = Qt.Key.Key_Return


def focused():
    return QApplication.focusWidget()


def on_screen(qtbot, window, account_id: str) -> None:
    page = window.sale_page
    page.account_input.setFocus()
    qtbot.keyClicks(page.account_input, account_id)
    qtbot.keyClick(page.account_input, ENTER)
    qtbot.waitUntil(lambda: page._account is not None and page._account.account_id == account_id, timeout=5000)


def type_pin(qtbot, window, pin: str) -> None:
    """The PIN typed where the focus is (the lock page puts it in its PIN field), then Enter."""
    assert focused() is window.lock_page.pin_input
    qtbot.keyClicks(focused(), pin)
    qtbot.keyClick(focused(), ENTER)


def ops(window) -> list:
    return window.engine.outbox.ops_of_shift(window.shift.shift_id)


def test_f2_locks_no_key_reaches_the_sale_and_the_pin_brings_it_back_as_it_was(qtbot, terminal, ledger):
    open_account(ledger, "LK-0001", 5000)
    qtbot.keyClick(focused() or terminal, Qt.Key.Key_F2)
    assert not terminal.locked                          # nobody signed in: nothing to lock
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    on_screen(qtbot, terminal, "LK-0001")
    qtbot.keyClicks(page.amount_input, "12.00")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_F2)
    assert terminal.locked and terminal.lock_page.isVisible() and not page.isVisible()
    assert not terminal.sign_out_button.isVisible() and not terminal.close_shift_button.isVisible()
    assert not terminal.settings_button.isVisible() and not terminal.lock_button.isVisible()
    assert CASHIER in terminal.lock_page.info.text() and terminal.lock_page.cashier_input.text() == CASHIER
    assert focused() is terminal.lock_page.pin_input
    for key in (Qt.Key.Key_F12, ENTER, Qt.Key.Key_F9, Qt.Key.Key_F5, Qt.Key.Key_F8, Qt.Key.Key_Escape):
        qtbot.keyClick(focused(), key)                  # the sale screen's keys are off
    qtbot.keyClicks(focused(), "9")
    qtbot.keyClick(focused(), ENTER)                    # a malformed PIN: said, not counted
    assert "4 to 12 digits" in terminal.lock_page.message.text()
    stays_true(qtbot, lambda: terminal.locked and not ops(terminal), 300)
    assert terminal.close_shift_dialog is None
    assert page.amount_input.text() == "12.00" and ledger.balance("LK-0001") == 5000
    type_pin(qtbot, terminal, CASHIER_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    assert page.isVisible() and terminal.sign_out_button.isVisible() and terminal.settings_button.isVisible()
    assert page.account_input.text() == "LK-0001" and page.amount_input.text() == "12.00"
    assert focused() is page.amount_input               # where the cashier was
    qtbot.keyClick(focused(), ENTER)
    qtbot.waitUntil(lambda: ledger.balance("LK-0001") == 3800, timeout=5000)


def test_ctrl_l_in_a_dialog_covers_it_and_the_unlock_brings_it_back(qtbot, terminal, ledger):
    open_account(ledger, "LK-0002", 5000)
    sign_in(qtbot, terminal, SUPERVISOR, SUPERVISOR_PIN)      # may top up
    on_screen(qtbot, terminal, "LK-0002")
    qtbot.keyClick(focused(), Qt.Key.Key_F6)
    qtbot.waitUntil(lambda: visible_window("topUpDialog") is not None, timeout=3000)
    dialog = visible_window("topUpDialog")
    dialog.amount_input.setFocus()
    qtbot.keyClicks(dialog.amount_input, "50")
    qtbot.keyClick(dialog.amount_input, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    assert terminal.locked and not dialog.isVisible()
    qtbot.keyClick(focused(), ENTER)                    # no top-up behind the lock
    stays_true(qtbot, lambda: not ops(terminal) and not dialog.isVisible(), 300)
    type_pin(qtbot, terminal, SUPERVISOR_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    assert dialog.amount_input.text() == "50" and ledger.balance("LK-0002") == 5000


def test_an_idle_till_locks_itself_and_keys_keep_it_awake(qtbot, make_terminal, redis_url, ledger, registry,
                                                          tmp_path):
    ledger.init()
    settings = TerminalSettings(tmp_path / "t.ini")
    settings.q.setValue("lock/idle_s", "1")
    window = make_terminal(redis_url, settings=settings)
    stays_true(qtbot, lambda: not window.locked, 1500)       # not signed in: nothing to lock
    sign_in(qtbot, window)
    page = window.sale_page
    for _ in range(6):                                       # 1.8 s of typing, a key every 0.3 s
        qtbot.keyClick(page.amount_input, Qt.Key.Key_1)
        qtbot.wait(300)
        assert not window.locked
    qtbot.waitUntil(lambda: window.locked, timeout=4000)
    assert not page.isVisible() and focused() is window.lock_page.pin_input
    type_pin(qtbot, window, CASHIER_PIN)
    qtbot.waitUntil(lambda: not window.locked, timeout=5000)
    assert page.amount_input.text() == "111111"
    qtbot.waitUntil(lambda: window.locked, timeout=4000)     # idle again: locked again


def test_a_card_scanned_while_locked_charges_nothing(qtbot, terminal, ledger):
    open_account(ledger, "LK-0003", 5000)
    open_account(ledger, "6222020000009999", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    on_screen(qtbot, terminal, "LK-0003")
    qtbot.keyClicks(page.amount_input, "10")
    qtbot.keyClick(page.amount_input, Qt.Key.Key_F2)
    assert terminal.locked
    qtbot.keyClicks(focused(), "12")                    # half a PIN typed, then a scan comes
    scan_with_timestamps("6222020000009999", 2)         # into the PIN field
    assert "scan was not used" in terminal.lock_page.message.text()
    assert terminal.lock_page.pin_input.text() == "12"  # the field as it was before the scan
    scan_with_timestamps("LK-0003", 2)
    stays_true(qtbot, lambda: terminal.locked and not ops(terminal) and page.account_input.text() == "LK-0003", 400)
    assert page.amount_input.text() == "10"
    assert ledger.balance("LK-0003") == 5000 and ledger.balance("6222020000009999") == 5000
    assert terminal.engine.outbox.pending_count() == 0
    # a PIN typed as fast as a scanner is still the PIN, not a scan
    terminal.lock_page.pin_input.clear()
    scan_with_timestamps(CASHIER_PIN + "56", 2)         # six digits, 2 ms apart, and Enter
    qtbot.waitUntil(lambda: "wrong" in terminal.lock_page.message.text(), timeout=5000)


def test_a_wrong_pin_counts_toward_the_lockout_and_a_supervisor_unlocks(qtbot, terminal, ledger, registry):
    sign_in(qtbot, terminal)
    qtbot.keyClick(focused(), Qt.Key.Key_F2)
    lock_page = terminal.lock_page
    type_pin(qtbot, terminal, "0000")
    qtbot.waitUntil(lambda: "wrong" in lock_page.message.text(), timeout=5000)
    assert "4 tries left" in lock_page.message.text() and terminal.locked
    assert int(registry.client.get(fails_key(CASHIER))) == 1   # the sign-in's own count
    for left in (3, 2, 1):
        type_pin(qtbot, terminal, "0000")
        qtbot.waitUntil(lambda: f"{left} tries left" in lock_page.message.text(), timeout=5000)
    type_pin(qtbot, terminal, "0000")
    qtbot.waitUntil(lambda: "locked for" in lock_page.message.text(), timeout=5000)
    type_pin(qtbot, terminal, CASHIER_PIN)               # locked out: the right PIN is refused now
    qtbot.waitUntil(lambda: lock_page.unlock_button.isEnabled(), timeout=5000)
    assert "locked for" in lock_page.message.text() and terminal.locked
    # another cashier (not a supervisor) cannot unlock
    registry.add("c2", "Zhao Lei", "5555")
    lock_page.cashier_input.setFocus()
    lock_page.cashier_input.selectAll()
    qtbot.keyClicks(lock_page.cashier_input, "c2")
    qtbot.keyClick(lock_page.cashier_input, ENTER)       # Enter: on to the PIN
    type_pin(qtbot, terminal, "5555")
    qtbot.waitUntil(lambda: "or a supervisor" in lock_page.message.text(), timeout=5000)
    assert terminal.locked
    lock_page.cashier_input.setFocus()
    lock_page.cashier_input.selectAll()
    qtbot.keyClicks(lock_page.cashier_input, SUPERVISOR)
    qtbot.keyClick(lock_page.cashier_input, ENTER)
    type_pin(qtbot, terminal, SUPERVISOR_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    assert terminal.cashier.cashier_id == CASHIER         # the session goes on as the cashier's


def test_a_charge_decided_while_locked_is_shown_after_the_unlock(qtbot, terminal, ledger):
    open_account(ledger, "LK-0004", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    on_screen(qtbot, terminal, "LK-0004")
    qtbot.keyClicks(page.amount_input, "7.50")
    qtbot.keyClick(page.amount_input, ENTER)             # the charge is sent ...
    qtbot.keyClick(focused(), Qt.Key.Key_F2)             # ... and the till locked before its answer
    assert terminal.locked and page.busy_txn is not None
    qtbot.waitUntil(lambda: page.busy_txn is None, timeout=5000)
    assert terminal.locked and ledger.balance("LK-0004") == 4250
    # the sale screen puts its cursor back in the account field when a charge is decided:
    # never while locked (the keyboard stays on the lock page)
    assert focused() is terminal.lock_page.pin_input
    type_pin(qtbot, terminal, CASHIER_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    assert page.result_label.isVisible()
    assert "Approved" in page.result_label.text() and "¥7.50" in page.result_label.text()
    assert [(op.kind, op.amount_minor, op.applied) for op in ops(terminal)] == [("deduct", 750, True)]


def test_a_dialog_that_opens_while_locked_waits_behind_the_lock(qtbot, terminal, ledger):
    from desktop.dialogs import ConfirmDialog
    sign_in(qtbot, terminal)
    qtbot.keyClick(focused(), Qt.Key.Key_F2)
    late = ConfirmDialog("An answer that came while locked", "OK", terminal)
    late.setObjectName("lateDialog")
    late.open()
    qtbot.waitUntil(lambda: not late.isVisible(), timeout=3000)
    assert terminal.locked
    type_pin(qtbot, terminal, CASHIER_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    qtbot.waitUntil(late.isVisible, timeout=3000)


@pytest.mark.parametrize("stored, read", [(None, DEFAULT_LOCK_IDLE_S), ("0", 0), ("2", 2), ("86400", 86400),
                                          ("86401", DEFAULT_LOCK_IDLE_S), ("-1", DEFAULT_LOCK_IDLE_S),
                                          ("5m", DEFAULT_LOCK_IDLE_S), ("", DEFAULT_LOCK_IDLE_S)])
def test_the_idle_setting_is_read_strictly(tmp_path, stored, read):
    settings = TerminalSettings(tmp_path / "t.ini")
    if stored is not None:
        settings.q.setValue("lock/idle_s", stored)
    assert settings.lock_idle_s == read


def test_the_settings_dialog_sets_the_idle_lock_in_minutes(qtbot, tmp_path):
    from core import InvalidRequest
    settings = TerminalSettings(tmp_path / "t.ini")
    settings.save("T1", "redis://127.0.0.1:6379/0")
    settings.q.setValue("lock/idle_s", "2")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.save()                                        # untouched: the 2 s stay
    assert settings.lock_idle_s == 2
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.lock_minutes_input.setValue(10)
    dialog.save()
    assert settings.lock_idle_s == 600
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.lock_minutes_input.value() == 10 and dialog.lock_minutes_input.maximum() == 24 * 60
    dialog.lock_minutes_input.setValue(0)
    dialog.save()
    assert settings.lock_idle_s == 0                     # never
    with pytest.raises(InvalidRequest) as exc:
        settings.save(lock_idle_s=-5)
    assert exc.value.field == "lock_idle_s" and settings.lock_idle_s == 0


def test_the_lock_screen_is_translated(qtbot, terminal, ledger, tmp_path):
    import re

    from PySide6.QtWidgets import QAbstractButton, QLabel
    sign_in(qtbot, terminal)
    assert terminal.lock_button.text() == "Lock  (F2)"
    qtbot.keyClick(focused(), Qt.Key.Key_F2)
    terminal.set_language("zh_CN")
    qtbot.waitUntil(lambda: terminal.lock_page.unlock_button.text() == "解锁", timeout=3000)
    lock_page = terminal.lock_page
    assert lock_page.title.text() == "已锁定" and "已登录" in lock_page.info.text()
    lock_page.scan_ignored()
    assert "请先解锁" in lock_page.message.text()
    texts = [w.text() for w in lock_page.findChildren(QLabel) + lock_page.findChildren(QAbstractButton)
             if w.isVisibleTo(terminal) and w.text()] + [lock_page.pin_input.placeholderText()]
    leftovers = {word for t in texts for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}", t)} - {"Li", "Na"}
    assert not leftovers, leftovers
    type_pin(qtbot, terminal, CASHIER_PIN)
    qtbot.waitUntil(lambda: not terminal.locked, timeout=5000)
    assert terminal.lock_button.text() == "锁定  (F2)"
    dialog = SettingsDialog(TerminalSettings(tmp_path / "t.ini"))
    qtbot.addWidget(dialog)
    assert dialog.lock_minutes_label.text() == "空闲自动锁定（分钟，0 = 不锁定）"


# ---------------------------------------------------------------- property: nothing gets through

_KEYS = {"Enter": (Qt.Key.Key_Return, "\r"), "F12": (Qt.Key.Key_F12, ""), "F9": (Qt.Key.Key_F9, ""),
         "F5": (Qt.Key.Key_F5, ""), "F6": (Qt.Key.Key_F6, ""), "Esc": (Qt.Key.Key_Escape, ""),
         "Tab": (Qt.Key.Key_Tab, "\t"), "F2": (Qt.Key.Key_F2, "")}


def _press(name: str, stamp_ms: int) -> None:
    """One key as the window system sends it (press and release, stamped), to the focus."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent
    key, text = _KEYS[name] if name in _KEYS else (Qt.Key(ord(name.upper())), name)
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        event = QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, text)
        event.setTimestamp(stamp_ms)
        QApplication.sendEvent(focused() or QApplication.activeWindow(), event)


def test_whatever_is_typed_or_scanned_while_locked_never_reaches_the_sale(qtbot, terminal, ledger):
    """Property: from a locked till with an account and an amount on screen, any sequence
    of keys (digits, letters, Enter, Tab, the sale screen's F-keys, Esc, F2 again) at any
    speed from a scanner's 1 ms to a person's 300 ms, with wrong PINs among them (the
    lockout's faults), leaves the sale screen as it was: nothing sent, nothing charged,
    the fields unchanged, still locked, and no typed character in a sale field."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    open_account(ledger, "LK-0009", 5000)
    sign_in(qtbot, terminal)
    page = terminal.sale_page
    on_screen(qtbot, terminal, "LK-0009")
    qtbot.keyClicks(page.amount_input, "3.00")
    stamp = [10_000_000]
    key = st.one_of(st.sampled_from(sorted(_KEYS)), st.sampled_from(list("0123456789")),
                    st.sampled_from(list("abcxyz-")))
    # a single key after a gap, or a card scanned (a scanner's 2 ms per key, then Enter)
    press = st.one_of(st.tuples(st.just("key"), key, st.integers(1, 300)),
                      st.tuples(st.just("scan"), st.text("0123456789ABXY-", min_size=6, max_size=18),
                                st.just(2)))

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(press, min_size=1, max_size=10))
    def typed_while_locked(presses):
        if not terminal.locked:
            qtbot.keyClick(focused(), Qt.Key.Key_F2)
        assert terminal.locked
        for what, keys, gap_ms in presses:
            for name in ([keys] if what == "key" else [*keys, "Enter"]):
                stamp[0] += gap_ms
                _press(name, stamp[0])
            stamp[0] += 400                       # the next press starts a new run
        qtbot.waitUntil(lambda: terminal.lock_page.unlock_button.isEnabled(), timeout=5000)   # PIN answers in
        assert terminal.locked and not page.isVisible()
        assert page.account_input.text() == "LK-0009" and page.amount_input.text() == "3.00"
        assert not terminal.engine.outbox.ops_of_shift(terminal.shift.shift_id)
        assert terminal.engine.pending_count == 0 and page.busy_txn is None
        assert all(visible_window(name) is None for name in ("topUpDialog", "refundDialog", "closeShiftDialog"))

    typed_while_locked()
    assert ledger.balance("LK-0009") == 5000
