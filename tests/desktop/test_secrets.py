"""No PIN, credential, session or password in anything the terminal logs (issue 8;
issue 24: the till's secrets are its terminal credential and its cashiers' sessions).

A private redis-server with `--requirepass` behind a ledger gateway (in this process,
so its log lines land in the same files: stricter than a shop, where it runs on the
server PC); the terminal's own log set-up (`desktop.app.setup_logging`, at DEBUG here
so that library chatter is checked too) into its data directory; then: the settings
dialog tests and saves the gateway address and credential, a wrong PIN, a sign-in, a
charge, a hold, Redis stopped mid-charge (retries and "offline" logged), a refund with
a wrong and then the right supervisor PIN, a terminal given a wrong credential. Every
file under the data directory's logs, the captured log records, stdout/stderr and the
outbox are searched for each secret."""
from __future__ import annotations

import logging
import signal

import pytest
import redis
from PySide6.QtCore import Qt

from core import Ledger
from core.cashiers import CashierRegistry
from core.connection import connect
from desktop.app import setup_logging
from desktop.settings import SettingsDialog, TerminalSettings
from tests.support.servers import RedisServer, redis_server_available, wait_for

from .conftest import open_account, sign_in

PASSWORD = "Zq7-hunter2-Xk9LmP"
CASHIER_PIN, WRONG_PIN = "7305918264", "5820193746"
SUPERVISOR_PIN, WRONG_SUPERVISOR_PIN = "6140592738", "4093817265"


class PasswordRedisServer(RedisServer):
    """RedisServer started with --requirepass: readiness is checked with the password."""

    def __init__(self, password: str):
        super().__init__("--requirepass", password)
        self.password = password

    def start(self) -> "PasswordRedisServer":
        import subprocess
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--save", "", "--appendonly", "no", "--logfile", str(self.dir / "redis.log"), *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: redis.Redis(port=self.port, password=self.password, socket_timeout=0.5).ping(),
                 what=f"redis on {self.port}")
        return self

    def url_with(self, form: str) -> str:
        """userinfo: redis://:PASSWORD@host:port/0; query: redis://host:port/0?password=PASSWORD."""
        if form == "query":
            return f"redis://127.0.0.1:{self.port}/0?password={self.password}"
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"


@pytest.fixture
def protected_redis():
    if not redis_server_available():
        pytest.skip("needs redis-server")
    server = PasswordRedisServer(PASSWORD).start()
    yield server
    server.cleanup()


@pytest.fixture
def terminal_logs(tmp_path):
    """The terminal's real log set-up into a data directory; removed afterwards."""
    data_dir = tmp_path / "terminal-data"
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    setup_logging(data_dir)
    root.setLevel(logging.DEBUG)
    yield data_dir
    for handler in root.handlers[:]:
        if handler not in before:
            handler.close()
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.mark.parametrize("form", ["userinfo", "query"])
def test_no_secret_reaches_any_log(qtbot, make_terminal, gateways, protected_redis, terminal_logs, tmp_path, caplog,
                                   capfd, form):
    caplog.set_level(logging.DEBUG)
    url = protected_redis.url_with(form)
    secrets = {"cashier PIN": CASHIER_PIN, "wrong PIN": WRONG_PIN, "supervisor PIN": SUPERVISOR_PIN,
               "wrong supervisor PIN": WRONG_SUPERVISOR_PIN, "Redis password": PASSWORD, "URL": url}
    ledger = Ledger.from_url(url)
    ledger.init()
    open_account(ledger, "P-1", 10000)
    client = connect(url)
    registry = CashierRegistry(client)
    registry.add("c1", "Li Na", CASHIER_PIN)
    registry.add("sup", "Wang Wei", SUPERVISOR_PIN, supervisor=True)

    gateway = gateways.for_url(url)
    token = gateway.enroll("T1")
    secrets["terminal credential"] = token

    # first-run settings: the address and credential are tested and saved (QSettings holds
    # the credential, by design: it is this till's, revocable, and worth only its cashiers' rights)
    settings = TerminalSettings(tmp_path / "terminal.ini")
    dialog = SettingsDialog(settings, first_run=True)
    qtbot.addWidget(dialog)
    dialog.terminal_input.setText("T1")
    dialog.url_input.setText("http://127.0.0.1:1")      # unreachable
    dialog.token_input.setText(token)
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Could not connect" in dialog.message.text(), timeout=10000)
    dialog.url_input.setText(gateway.url)
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(dialog.save_button.isEnabled, timeout=10000)
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert TerminalSettings(tmp_path / "terminal.ini").token == token

    # no periodic pings: the charge itself finds Redis gone, so the ledger's own error
    # (which names the Redis URL) is what the terminal logs as the reason
    window = make_terminal(url, data_dir=terminal_logs, ping_interval_ms=60_000)
    page = window.sign_in_page
    page.cashier_input.setText("c1")
    page.pin_input.setText(WRONG_PIN)
    qtbot.mouseClick(page.sign_in_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in page.message.text(), timeout=5000)
    sign_in(qtbot, window, "c1", CASHIER_PIN)
    secrets["cashier session"] = window.engine.ledger.sessions["c1"]
    sale = window.sale_page
    sale.account_input.setText("P-1")
    sale.amount_input.setText("12.00")
    sale.charge()
    qtbot.waitUntil(lambda: sale.busy_txn is None, timeout=5000)
    sale.amount_input.setText("3.00")
    sale.hold()
    qtbot.waitUntil(lambda: sale.busy_txn is None, timeout=5000)
    # Redis stops answering mid-charge: retries, "no answer", "offline" are all logged
    protected_redis.proc.send_signal(signal.SIGSTOP)
    try:
        sale.amount_input.setText("1.00")
        sale.charge()
        qtbot.waitUntil(lambda: sale.result_label.property("tone") == "checking", timeout=10000)
        qtbot.waitUntil(lambda: window.engine.state == "offline", timeout=10000)
    finally:
        protected_redis.proc.send_signal(signal.SIGCONT)
    qtbot.waitUntil(lambda: window.engine.pending_count == 0, timeout=15000)
    # refund: a wrong supervisor PIN, then the right one
    charge_op = window.engine.outbox.ops_of_shift(window.shift.shift_id)[0]
    window.open_refund(charge_op)
    refund = window.refund_dialog
    refund.amount_input.setText("2.00")
    refund.supervisor_input.setText("sup")
    refund.pin_input.setText(WRONG_SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "wrong" in refund.message.text(), timeout=5000)
    refund.pin_input.setText(SUPERVISOR_PIN)
    qtbot.mouseClick(refund.confirm_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not refund.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: sale.busy_txn is None, timeout=5000)
    assert ledger.balance("P-1") == 10000 - 1200 - 100 + 200
    # a terminal with a wrong credential says so (and logs why) without the credential
    from desktop.engine import Engine
    from desktop.main_window import MainWindow
    from gateway.client import GatewayLedger
    forged = token[:-4] + "xxxx"
    secrets["forged credential"] = forged
    wrong_engine = Engine(GatewayLedger([gateway.url], forged), "T1", tmp_path / "wrong-till", ping_interval_ms=200)
    wrong = MainWindow(wrong_engine)
    qtbot.addWidget(wrong)
    wrong_engine.start()
    qtbot.waitUntil(lambda: wrong.engine.state == "revoked", timeout=10000)
    for w in (window, wrong):
        w.engine.close()
    ledger.close()
    client.close()
    for handler in logging.getLogger().handlers:
        handler.flush()

    log_files = sorted((terminal_logs / "logs").glob("*"))
    assert log_files and log_files[0].name == "terminal.log"
    logged = "".join(p.read_text(encoding="utf-8", errors="replace") for p in log_files)
    # the log is useful: it saw the wrong PIN, the outage and where Redis is (redacted)
    assert "wrong PIN" in logged and "no answer" in logged and "offline" in logged
    assert "did not answer in time" in logged          # the gateway's answer while Redis was stopped
    assert f"ledger gateway(s) {gateway.url};" in logged
    assert "refused this terminal's credential" in logged
    out, err = capfd.readouterr()
    outbox = b"".join(p.read_bytes() for p in terminal_logs.glob("outbox.sqlite3*"))
    places = {"log files": logged, "captured log records": caplog.text, "stdout": out, "stderr": err,
              "outbox": outbox.decode("utf-8", errors="replace")}
    leaks = [f"{what} in {where}" for where, text in places.items() for what, secret in secrets.items()
             if secret in text]
    assert not leaks, leaks
    assert len(caplog.records) > 20


def test_safe_url_and_scrub_forms():
    from desktop.engine import safe_url, url_secrets
    assert safe_url("https://u:pw@gw1:8470/x?token=t") == "https://gw1:8470"
    assert safe_url("http://127.0.0.1:8470") == "http://127.0.0.1:8470"
    assert safe_url("not a url") == "(unreadable URL)"
    assert "pw" in url_secrets("https://gw:1/?ssl_password=pw") and "u:pw" in url_secrets("https://u:pw@gw:1/")
    assert "t0k" in url_secrets("https://gw:1/?token=t0k")
