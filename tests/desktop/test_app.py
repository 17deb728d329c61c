"""The program's entry: --self-test, first-run settings (tested before saving),
data directory override."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from desktop.settings import SettingsDialog, TerminalSettings, data_dir

ROOT = Path(__file__).resolve().parents[2]


def test_self_test_prints_one_line_and_exits_0():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "desktop", "--self-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cashier-terminal self-test: OK"), lines


def test_settings_saved_only_after_a_successful_connection_test(qtbot, tmp_path, redis_url, ledger):
    ledger.init()
    settings = TerminalSettings(tmp_path / "terminal.ini")
    assert not settings.complete
    dialog = SettingsDialog(settings, first_run=True)
    qtbot.addWidget(dialog)
    dialog.terminal_input.setText("T7")
    dialog.url_input.setText("redis://127.0.0.1:1/0")
    assert not dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Could not connect" in dialog.message.text(), timeout=10000)
    assert not dialog.save_button.isEnabled()
    dialog.url_input.setText(redis_url)
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(dialog.save_button.isEnabled, timeout=10000)
    assert dialog.message.text() == "Connected: the central server answers."
    dialog.terminal_input.setText("bad id!")
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.message.text() == "Terminal id: only letters, digits and . _ : - are allowed"
    dialog.terminal_input.setText("T7")
    dialog.language_box.setCurrentIndex(2)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    again = TerminalSettings(tmp_path / "terminal.ini")
    assert (again.terminal_id, again.redis_url, again.language) == ("T7", redis_url, "zh_CN")


def test_data_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("CASHIER_TERMINAL_DATA_DIR", str(tmp_path / "d"))
    assert data_dir() == tmp_path / "d" and (tmp_path / "d").is_dir()
    assert data_dir(tmp_path / "e") == tmp_path / "e"
