"""The "Receipts and customer display" settings: checked before saving, a test print
through the chosen printer, saved to the terminal's INI file and applied at once
(the printer used for the next slip, the customer display turned on)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt

from .conftest import FAST, SUPERVISOR, SUPERVISOR_PIN, sign_in


def approve_as_supervisor(qtbot, window) -> None:
    supervisor = window.receipt_hooks.supervisor_dialog
    qtbot.waitUntil(supervisor.isVisible, timeout=3000)
    supervisor.supervisor_input.setText(SUPERVISOR)
    supervisor.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(supervisor.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.receipt_settings_dialog is not None, timeout=5000)


@pytest.fixture
def window_with_ini(qtbot, tmp_path, redis_url, till_ledger, ledger, registry):
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from desktop.settings import TerminalSettings
    ledger.init()
    ini = tmp_path / "terminal.ini"
    engine = Engine(till_ledger(redis_url), "T1", tmp_path / "data", **FAST)
    window = MainWindow(engine, TerminalSettings(ini))
    qtbot.addWidget(window)
    window.show()
    engine.start()
    yield window, ini
    engine.close()
    if window.customer_display is not None:
        window.customer_display.close()


def test_check_test_print_save_and_apply(qtbot, window_with_ini, tmp_path):
    window, ini = window_with_ini
    assert window.receipts.config.connection == "none" and window.customer_display is None
    assert not window.findChild(object, "receiptBar").isVisible()      # nobody signed in
    sign_in(qtbot, window)
    qtbot.mouseClick(window.findChild(object, "receiptSettingsButton"), Qt.MouseButton.LeftButton)
    approve_as_supervisor(qtbot, window)                               # Printer… needs a supervisor (issue 26)
    dialog = window.receipt_settings_dialog
    dialog.connection_box.setCurrentIndex(dialog.connection_box.findData("network"))
    dialog.address_input.setText("")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text().startswith("Printer address: must not be empty")
    assert dialog.isVisible()
    device = tmp_path / "lp0"
    device.write_bytes(b"")
    dialog.connection_box.setCurrentIndex(dialog.connection_box.findData("file"))
    dialog.address_input.setText(str(device))
    dialog.paper_box.setCurrentIndex(dialog.paper_box.findData(58))
    dialog.shop_name_input.setText("星光便利店")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.message.text() == "The test slip was sent to the printer.", timeout=10_000)
    assert b"1P0TEST-d-0" in device.read_bytes() and "星光便利店".encode("gb18030") in device.read_bytes()
    dialog.display_check.setChecked(True)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    stored = QSettings(str(ini), QSettings.Format.IniFormat)
    assert stored.value("receipts/printer") == "file" and stored.value("receipts/paper_mm") == "58"
    assert stored.value("customer_display/enabled") == "true"
    assert window.receipts.config.connection == "file" and window.receipts.config.paper_mm == 58
    assert window.receipts.options.shop_name == "星光便利店"
    assert window.customer_display is not None and window.customer_display.shop_label.text() == "星光便利店"
