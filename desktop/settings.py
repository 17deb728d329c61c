"""The terminal's settings (terminal id, the shop's ledger gateway URLs, this terminal's
credential and the shop's CA certificate, language, how long a hold lasts, after how
long idle the till locks) and where its local data lives, plus the settings dialog
shown on first run.

Settings are kept with QSettings (the platform's native store, or an INI file given
with ``--config`` / ``CASHIER_TERMINAL_CONFIG``). Local data (the outbox, logs) go
to the platform's user data directory from platformdirs, or to ``--data-dir`` /
``CASHIER_TERMINAL_DATA_DIR``. The till holds no Redis login: it talks to the gateway
with the credential `cashierctl terminal enroll` printed (revocable). The dialog saves
the gateway address and credential only after the gateway has answered with them
(tested on a worker thread); a change of the language (or hold time) alone is saved
without a test. Opened from the main window (after a supervisor's PIN) it shows the
values the running terminal uses, which may come from the command line
(``--gateway-url``, ``--terminal-id``, as under the demo), not from the store; the
credential is never shown, only replaced. Numbers kept in the store are read strictly (whole numbers in
range; anything else falls back to the default).
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QVBoxLayout)

from core import InvalidRequest
from core.validation import check_id

from . import i18n
from .texts import id_error_words
from .workers import Background
from .i18n import Retranslates

APP_NAME = "cashier-terminal"
ORG_NAME = "CashierLedger"
DATA_DIR_ENV = "CASHIER_TERMINAL_DATA_DIR"
CONFIG_ENV = "CASHIER_TERMINAL_CONFIG"
DEFAULT_HOLD_MINUTES = 30
MAX_HOLD_MINUTES = 7 * 24 * 60           # the ledger's default retention; the engine caps it too
DEFAULT_LARGE_AMOUNT_MINOR = 100_000     # ¥1,000
DEFAULT_LOCK_IDLE_S = 5 * 60             # the till locks after 5 minutes without a key or a tap
MAX_LOCK_IDLE_S = 24 * 60 * 60           # 0 = never


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """Where the outbox and logs live (created if missing)."""
    chosen = override or os.environ.get(DATA_DIR_ENV) or platformdirs.user_data_dir(APP_NAME, ORG_NAME)
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


class TerminalSettings:
    """terminal_id, the gateway's URLs, the terminal's credential, the CA file and the
    language, persisted with QSettings."""

    def __init__(self, config_path: str | os.PathLike | None = None):
        path = config_path or os.environ.get(CONFIG_ENV)
        self.q = QSettings(str(path), QSettings.Format.IniFormat) if path else QSettings(ORG_NAME, APP_NAME)

    def _get(self, key: str, default: str = "") -> str:
        value = self.q.value(key, default)
        return str(value) if value is not None else default

    @property
    def terminal_id(self) -> str:
        return self._get("terminal/id")

    @property
    def gateway_urls(self) -> list[str]:
        """The shop's ledger gateways, in the order to try them (comma-separated in the store)."""
        return split_urls(self._get("terminal/gateway_urls"))

    @property
    def token(self) -> str:
        """This terminal's credential (`cashierctl terminal enroll`)."""
        return self._get("terminal/token")

    @property
    def ca_file(self) -> str:
        """The shop's CA certificate (PEM) the gateways' TLS certificates are checked with
        ('': the system's trusted CAs)."""
        return self._get("terminal/ca_file")

    @property
    def language(self) -> str:
        return self._get("ui/language", i18n.SYSTEM)

    def _get_int(self, key: str, default: int, low: int, high: int) -> int:
        text = self._get(key, str(default)).strip()
        if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
            return default
        return int(text)

    def int_setting(self, key: str, default: int, low: int, high: int) -> int:
        """A whole number in low..high kept under `key`, else `default`."""
        return self._get_int(key, default, low, high)

    def text_setting(self, key: str, default: str = "") -> str:
        return self._get(key, default)

    @property
    def large_amount_minor(self) -> int:
        """Amounts above this (INI key confirm/large_amount_minor, fen; default ¥1,000)
        are confirmed with the amount in words."""
        return self._get_int("confirm/large_amount_minor", DEFAULT_LARGE_AMOUNT_MINOR, 1, 10 ** 11)

    @property
    def fullscreen(self) -> bool:
        """ui/fullscreen = true|1: start full screen (kiosk tills); also --fullscreen."""
        return self._get("ui/fullscreen", "false").strip().lower() in ("1", "true", "yes")

    @property
    def hold_minutes(self) -> int:
        """How long a hold reserves its amount (ui: Hold lasts), 1 .. 7 days in minutes."""
        return self._get_int("holds/minutes", DEFAULT_HOLD_MINUTES, 1, MAX_HOLD_MINUTES)

    @property
    def lock_idle_s(self) -> int:
        """After how many seconds without a key press or a tap the till locks (INI key
        lock/idle_s, 0 = never, at most a day; default 5 minutes). The settings dialog
        shows it in minutes."""
        return self._get_int("lock/idle_s", DEFAULT_LOCK_IDLE_S, 0, MAX_LOCK_IDLE_S)

    @property
    def complete(self) -> bool:
        return bool(self.terminal_id and self.gateway_urls and self.token)

    def save(self, terminal_id: str | None = None, gateway_urls: list[str] | None = None,
             language: str | None = None, hold_minutes: int | None = None,
             lock_idle_s: int | None = None, *, token: str | None = None, ca_file: str | None = None) -> None:
        if terminal_id is not None:
            self.q.setValue("terminal/id", terminal_id)
        if gateway_urls is not None:
            self.q.setValue("terminal/gateway_urls", ",".join(gateway_urls))
        if token is not None:
            self.q.setValue("terminal/token", token)
        if ca_file is not None:
            self.q.setValue("terminal/ca_file", ca_file)
        if language is not None:
            self.q.setValue("ui/language", language)
        if hold_minutes is not None:
            self.q.setValue("holds/minutes", str(int(hold_minutes)))
        if lock_idle_s is not None:
            if not 0 <= int(lock_idle_s) <= MAX_LOCK_IDLE_S:
                raise InvalidRequest("lock_idle_s", f"must be 0 (never) to {MAX_LOCK_IDLE_S} seconds")
            self.q.setValue("lock/idle_s", str(int(lock_idle_s)))
        self.q.sync()


def split_urls(text: str) -> list[str]:
    """Gateway URLs as typed or stored: separated by commas or spaces, empty parts dropped."""
    return [u for u in text.replace(",", " ").split() if u]


def check_gateway_urls(urls: list[str]) -> list[str]:
    """The URLs if each is a gateway address (https://host:port, or http:// on this PC);
    InvalidRequest('gateway_urls', why) otherwise."""
    if not urls:
        raise InvalidRequest("gateway_urls", "must not be empty")
    for url in urls:
        scheme, _, rest = url.partition("://")
        host = rest.split("/")[0].rpartition("@")[2].rsplit(":", 1)[0].strip("[]")
        if scheme == "https" and host:
            continue
        if scheme == "http" and host in ("127.0.0.1", "localhost", "::1"):
            continue
        raise InvalidRequest("gateway_urls", "each address starts with https:// (http:// only on this PC)")
    return urls


def gateway_client(urls: list[str], token: str, ca_file: str = "", **options):
    """The till's ledger: a `gateway.client.GatewayLedger` on these gateways with this
    terminal's credential, checking TLS with the shop's CA when one is set."""
    from gateway.client import GatewayLedger
    return GatewayLedger(urls, token, verify=ca_file or True, **options)


def probe_gateway(urls: list[str], token: str, ca_file: str = "") -> str:
    """Worker thread: ask the gateways with this credential whether they answer and the
    ledger behind them holds a ledger. Returns 'ok', 'no_ledger', or raises (the dialog
    shows why: unreachable, credential refused, wrong address)."""
    from core import LedgerNotInitialized
    ledger = gateway_client(check_gateway_urls(urls), token, ca_file, timeout_s=3.0)
    try:
        ledger.ping()
        return "ok"
    except LedgerNotInitialized:
        return "no_ledger"
    finally:
        ledger.close()


class SettingsDialog(Retranslates, QDialog):
    """Terminal id, gateway address and credential (tested before saving), language."""

    def __init__(self, settings: TerminalSettings, parent=None, *, first_run: bool = False,
                 in_use: dict | None = None):
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.settings = settings
        self.first_run = first_run
        self._worker = Background(1, "settings")
        self._tested: tuple | None = None       # (urls, token, CA file) the gateway answered with
        # what the running terminal uses (may differ from the store: command-line options)
        in_use = in_use or {}
        self._terminal_in_use = in_use.get("terminal_id") or settings.terminal_id
        self._url_in_use = ", ".join(in_use.get("gateway_urls") or settings.gateway_urls)

        self.terminal_input = QLineEdit(self._terminal_in_use, objectName="terminalIdInput")
        self.terminal_input.setMaxLength(20)
        self.url_input = QLineEdit(self._url_in_use or "https://", objectName="gatewayUrlInput")
        # the credential is never shown: empty keeps the stored one; typing replaces it
        self.token_input = QLineEdit(objectName="terminalTokenInput")
        self.token_input.setEchoMode(QLineEdit.EchoMode.Password)
        self.ca_input = QLineEdit(settings.ca_file, objectName="caFileInput")
        self.language_box = QComboBox(objectName="languageBox")
        self.hold_minutes_input = QSpinBox(objectName="holdMinutesInput")
        self.hold_minutes_input.setRange(1, MAX_HOLD_MINUTES)
        self.hold_minutes_input.setValue(settings.hold_minutes)
        self.hold_minutes_input.setMinimumHeight(52)
        # minutes in the dialog (the store keeps seconds: a value that is no whole number of
        # minutes, e.g. a test's, stays as it is unless the cashier changes this box)
        self.lock_minutes_input = QSpinBox(objectName="lockIdleMinutesInput")
        self.lock_minutes_input.setRange(0, MAX_LOCK_IDLE_S // 60)
        self._lock_minutes_shown = round(settings.lock_idle_s / 60)
        self.lock_minutes_input.setValue(self._lock_minutes_shown)
        self.lock_minutes_input.setMinimumHeight(52)
        self.test_button = QPushButton(objectName="testConnectionButton", clicked=self.test_connection)
        self.save_button = QPushButton(objectName="saveSettingsButton", clicked=self.save)
        self.cancel_button = QPushButton(objectName="cancelSettingsButton", clicked=self.reject)
        self.message = QLabel(objectName="settingsMessage", wordWrap=True)
        self.save_button.setEnabled(False)
        # Enter means Save (once it may save), never Cancel nor another test: only Save is
        # the dialog's default button; Cancel is clicked or reached with Tab and Space.
        for b in (self.test_button, self.cancel_button):
            b.setAutoDefault(False)
            b.setDefault(False)
        self.save_button.setAutoDefault(True)
        self.save_button.setDefault(True)
        for field in (self.url_input, self.terminal_input, self.token_input, self.ca_input):
            field.textChanged.connect(self._url_changed)

        self.form = QFormLayout()
        self.terminal_label, self.url_label, self.language_label = QLabel(), QLabel(), QLabel()
        self.token_label, self.ca_label = QLabel(), QLabel()
        self.hold_minutes_label, self.lock_minutes_label = QLabel(), QLabel()
        self.form.addRow(self.terminal_label, self.terminal_input)
        self.form.addRow(self.url_label, self.url_input)
        self.form.addRow(self.token_label, self.token_input)
        self.form.addRow(self.ca_label, self.ca_input)
        self.form.addRow(self.language_label, self.language_box)
        self.form.addRow(self.hold_minutes_label, self.hold_minutes_input)
        self.form.addRow(self.lock_minutes_label, self.lock_minutes_input)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        self.intro = QLabel(wordWrap=True)
        layout.addWidget(self.intro)
        layout.addLayout(self.form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)
        self.retranslate()
        self._url_changed()
        current = settings.language
        self.language_box.setCurrentIndex(max(0, [i18n.SYSTEM, *i18n.LANGUAGES].index(current)
                                              if current in (i18n.SYSTEM, *i18n.LANGUAGES) else 0))

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Terminal settings"))
        self.intro.setText(self.tr("This terminal needs a name, the address of the shop's ledger gateway and "
                               "the credential `cashierctl terminal enroll` printed for it. They are "
                               "tested before they are saved."))
        self.terminal_label.setText(self.tr("Terminal id"))
        self.url_label.setText(self.tr("Ledger gateway address(es)"))
        self.token_label.setText(self.tr("Terminal credential"))
        self.token_input.setPlaceholderText(self.tr("(unchanged)") if self.settings.token else "")
        self.ca_label.setText(self.tr("Shop CA certificate (file)"))
        self.language_label.setText(self.tr("Language"))
        self.hold_minutes_label.setText(self.tr("A hold lasts (minutes)"))
        self.lock_minutes_label.setText(self.tr("Lock when idle (minutes, 0 = never)"))
        self.test_button.setText(self.tr("Test connection"))
        self.save_button.setText(self.tr("Save"))
        self.cancel_button.setText(self.tr("Cancel"))
        index = self.language_box.currentIndex()
        self.language_box.clear()
        # Language names stay in their own language so that anyone can find theirs.
        self.language_box.addItem(self.tr("Same as the computer"), i18n.SYSTEM)
        self.language_box.addItem("English", "en")
        self.language_box.addItem("简体中文", "zh_CN")
        self.language_box.setCurrentIndex(max(index, 0))

    def _connection(self) -> tuple[tuple[str, ...], str, str]:
        """(gateway URLs, credential, CA file) as the form says (an empty credential field:
        the stored one)."""
        return (tuple(split_urls(self.url_input.text())), self.token_input.text().strip() or self.settings.token,
                self.ca_input.text().strip())

    def _needs_test(self) -> bool:
        """Only a new gateway address, credential, CA or terminal id must be tested; the
        language, the hold time or the idle lock alone are saved as they are."""
        return (self.first_run or not self._url_in_use or ", ".join(split_urls(self.url_input.text())) != self._url_in_use
                or bool(self.token_input.text().strip()) or self.ca_input.text().strip() != self.settings.ca_file
                or self.terminal_input.text().strip() != self._terminal_in_use)

    def _url_changed(self) -> None:
        self.save_button.setEnabled(not self._needs_test() or self._tested == self._connection())

    def test_connection(self) -> None:
        connection = self._connection()
        urls, token, ca_file = connection
        try:
            check_gateway_urls(list(urls))
        except InvalidRequest as exc:
            self.message.setText(self.tr("Ledger gateway address: %1").replace("%1", self._url_words(exc.reason)))
            return
        if not token:
            self.message.setText(self.tr("Terminal credential: must not be empty "
                                         "(`cashierctl terminal enroll` prints it)"))
            return
        if self.test_button.hasFocus():
            # a disabled button passes the focus on (to Cancel): keep it in the form
            self.url_input.setFocus()
        self.test_button.setEnabled(False)
        self.message.setText(self.tr("Testing the connection…"))
        self._worker.run(lambda: probe_gateway(list(urls), token, ca_file),
                         lambda answer: self._tested_with(connection, answer), lambda exc: self._test_failed(exc))

    def _url_words(self, reason: str) -> str:
        if reason == "must not be empty":
            return self.tr("must not be empty")
        return self.tr("each address starts with https:// (http:// only on this PC)")

    def _tested_with(self, connection: tuple, answer: str) -> None:
        self.test_button.setEnabled(True)
        self._tested = connection
        if answer == "ok":
            self.message.setText(self.tr("Connected: the central server answers."))
        else:
            self.message.setText(self.tr("Connected, but the server holds no ledger yet: "
                                         "run `cashierctl init` there first."))
        self._url_changed()
        if self.save_button.isEnabled() and not isinstance(self.focusWidget(), QLineEdit):
            self.save_button.setFocus()          # tested: Enter saves

    def _test_failed(self, exc: Exception) -> None:
        from gateway.wire import GatewayUnauthorized
        self.test_button.setEnabled(True)
        self._tested = None
        self._url_changed()
        if isinstance(exc, GatewayUnauthorized):
            self.message.setText(self.tr("The gateway refused this credential (unknown or revoked): "
                                         "enrol the terminal again with `cashierctl terminal enroll`."))
        elif isinstance(exc, InvalidRequest):
            self.message.setText(self.tr("Ledger gateway address: %1").replace("%1", self._url_words(exc.reason)))
        elif isinstance(exc, OSError):       # e.g. the CA file cannot be read
            self.message.setText(self.tr("Shop CA certificate: cannot be read (%1)").replace(
                "%1", exc.strerror or type(exc).__name__))
        else:
            self.message.setText(self.tr("Could not connect: %1").replace("%1", type(exc).__name__))

    def save(self) -> None:
        terminal_id = self.terminal_input.text().strip()
        try:
            check_id(terminal_id, "terminal_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Terminal id"), exc.reason))
            return
        connection = self._connection()
        if self._needs_test():
            if connection != self._tested:
                self.message.setText(self.tr("Test the connection before saving."))
                return
            urls, token, ca_file = connection
            self.settings.save(terminal_id, list(urls), self.language_box.currentData(),
                               self.hold_minutes_input.value(), lock_idle_s=self._lock_idle_s(), token=token,
                               ca_file=ca_file)
        else:      # nothing about the connection changed: leave what the store holds
            self.settings.save(language=self.language_box.currentData(),
                               hold_minutes=self.hold_minutes_input.value(), lock_idle_s=self._lock_idle_s())
        self.accept()

    def _lock_idle_s(self) -> int | None:
        """The idle lock to save, in seconds: None when the box still shows what was read."""
        minutes = self.lock_minutes_input.value()
        return None if minutes == self._lock_minutes_shown else minutes * 60

    def done(self, result: int) -> None:
        self._worker.wait(10_000)
        super().done(result)
