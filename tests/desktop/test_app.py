"""The program's entry: --self-test, first-run settings (tested before saving),
data directory override."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from desktop.settings import SettingsDialog, TerminalSettings, data_dir

ROOT = Path(__file__).resolve().parents[2]


def test_self_test_prints_one_line_and_exits_0():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "desktop", "--self-test"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cashier-terminal self-test: OK"), lines


def test_settings_saved_only_after_a_successful_connection_test(qtbot, tmp_path, redis_url, ledger, gateways):
    ledger.init()
    gateway = gateways.for_url(redis_url)
    token = gateway.enroll("T7")
    settings = TerminalSettings(tmp_path / "terminal.ini")
    assert not settings.complete
    dialog = SettingsDialog(settings, first_run=True)
    qtbot.addWidget(dialog)
    dialog.terminal_input.setText("T7")
    dialog.token_input.setText(token)
    assert dialog.token_input.echoMode() == QLineEdit.EchoMode.Password       # a credential is never shown
    dialog.url_input.setText("redis://127.0.0.1:6379/0")                   # a till never talks to Redis
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    assert "starts with https://" in dialog.message.text()
    dialog.url_input.setText("http://10.0.0.5:8470")                      # plain HTTP only on this PC
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    assert "starts with https://" in dialog.message.text()
    dialog.url_input.setText("http://127.0.0.1:1")
    assert not dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Could not connect" in dialog.message.text(), timeout=10000)
    assert not dialog.save_button.isEnabled()
    dialog.url_input.setText(gateway.url)
    dialog.token_input.setText(token[:-3] + "xyz")                         # a credential the gateway never issued
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "refused this credential" in dialog.message.text(), timeout=10000)
    assert not dialog.save_button.isEnabled()
    dialog.token_input.setText(token)
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
    assert (again.terminal_id, again.gateway_urls, again.token, again.language) == (
        "T7", [gateway.url], token, "zh_CN")
    assert again.complete


def test_settings_say_when_the_ledger_behind_the_gateway_is_empty(qtbot, tmp_path, redis_url, gateways):
    gateway = gateways.for_url(redis_url)          # Redis answers, but holds no ledger (no `cashierctl init`)
    dialog = SettingsDialog(TerminalSettings(tmp_path / "terminal.ini"), first_run=True)
    qtbot.addWidget(dialog)
    dialog.terminal_input.setText("T7")
    dialog.url_input.setText(gateway.url)
    dialog.token_input.setText(gateway.enroll("T7"))
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "holds no ledger" in dialog.message.text(), timeout=10000)


def test_data_dir_override(tmp_path, monkeypatch):
    monkeypatch.setenv("CASHIER_TERMINAL_DATA_DIR", str(tmp_path / "d"))
    assert data_dir() == tmp_path / "d" and (tmp_path / "d").is_dir()
    assert data_dir(tmp_path / "e") == tmp_path / "e"
