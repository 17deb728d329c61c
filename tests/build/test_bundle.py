"""The PyInstaller bundle, built with build.spec exactly as a release is, and every
executable run from it: the smoke modes (terminal --self-test offscreen, cashierctl
--version and self-test, reconcile-service self-test, cashier-gateway --version and
self-test), a real ledger round trip on a private Redis (cashierctl init/open/topup,
reconcile-service run --once into SQLite, status), one through the bundled gateway
(cashierctl enrolls a terminal and adds a cashier; the gateway answers health, ping with
that token and refuses an unknown one, signs the cashier in, charges; SIGTERM: exit 0),
and the promise that the headless programs carry no Qt (and the gateway no database). Takes 1-2 minutes
(marked `build`); skipped only when PyInstaller is not installed. The bundle fixture
(built once per session) is in conftest.py."""
from __future__ import annotations

import re

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import RedisServer, free_port, redis_server_available

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 120
PROGRAMS = ("cashier-terminal", "reconcile-service", "cashierctl", "cashier-gateway")

pytestmark = [
    pytest.mark.build,
    pytest.mark.timeout(1500),      # the session's first test also waits for the bundle build
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None,
                       reason="PyInstaller is not installed (pip install -e '.[build]')"),
]


def clean_env(env_extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "CASHIER_REDIS_URL", "CASHIER_DATABASE_URL",
                        "PYTHONPATH")}
    env.update(env_extra or {})
    return env


def executable(bundle: Path, program: str) -> str:
    return str(bundle / (program + (".exe" if os.name == "nt" else "")))


def run(bundle: Path, program: str, *args: str, env_extra: dict | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess:
    # Run from elsewhere so nothing can be found in the source checkout by accident.
    return subprocess.run([executable(bundle, program), *args], cwd=bundle.parent, env=clean_env(env_extra),
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S, input=stdin)


def test_one_folder_four_programs_sharing_libraries(bundle):
    for program in PROGRAMS:
        assert (bundle / program).is_file(), program
    internal = bundle / "_internal"
    assert len(list(internal.glob("libpython3*"))) == 1, "one shared Python runtime"
    assert (internal / "core" / "lua" / "deduct.lua").is_file()
    assert (internal / "core" / "lua" / "includes" / "common.lua").is_file()
    assert (internal / "desktop" / "translations" / "terminal_zh_CN.qm").is_file()
    assert (internal / "reconcile_service" / "migrations" / "env.py").is_file()
    assert list((internal / "reconcile_service" / "migrations" / "versions").glob("*.py"))


def test_headless_programs_carry_no_qt(bundle):
    from PyInstaller.archive.readers import CArchiveReader
    for program, wants_qt in (("cashier-terminal", True), ("reconcile-service", False), ("cashierctl", False),
                              ("cashier-gateway", False)):
        modules = list(CArchiveReader(str(bundle / program)).open_embedded_archive("PYZ.pyz").toc)
        has_qt = any(m.split(".")[0] in ("PySide6", "shiboken6", "desktop") for m in modules)
        assert has_qt is wants_qt, program
    # the gateway runs core behind uvicorn: no database, back office, admin CLI or till client
    gateway = {m.split(".")[0] for m in CArchiveReader(str(bundle / "cashier-gateway"))
               .open_embedded_archive("PYZ.pyz").toc}
    assert {"gateway", "core", "uvicorn", "starlette", "h11", "anyio", "redis"} <= gateway
    assert not gateway & {"reconcile_service", "sqlalchemy", "alembic", "psycopg", "flask", "admin", "httpx",
                          "PIL", "wsproto", "trio", "setuptools", "jinja2"}, sorted(gateway)


def test_terminal_self_test_offscreen(bundle):
    result = run(bundle, "cashier-terminal", "--self-test", env_extra={"QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test: OK" in result.stdout and "main window built" in result.stdout


def test_reconcile_service_self_test(bundle):
    result = run(bundle, "reconcile-service", "self-test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "self-test: OK" in result.stdout and "from the bundle" in result.stdout


def test_cashierctl_version_and_self_test(bundle):
    version = run(bundle, "cashierctl", "--version")
    assert version.returncode == 0 and version.stdout.startswith("cashierctl "), version.stdout + version.stderr
    help_text = run(bundle, "cashierctl", "--help").stdout
    assert "self-test" in help_text, \
        "cashierctl's help lists no self-test: admin.selftest_commands is not wired into _plugins()"
    # every command group of the venv's cashierctl is in the bundle (a plugin missing from
    # build.spec's hiddenimports is silently skipped by _plugins())
    for group in ("cashier", "verify", "card", "promo", "member"):
        assert re.search(rf"^    {group} ", help_text, re.M), \
            f"cashierctl in the bundle has no '{group}' command: add its module to build.spec"
    result = run(bundle, "cashierctl", "self-test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "from the bundle" in result.stdout


def test_gateway_version_and_self_test(bundle):
    version = run(bundle, "cashier-gateway", "--version")
    assert version.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\S*\n", version.stdout), \
        version.stdout + version.stderr
    result = run(bundle, "cashier-gateway", "self-test")
    assert result.returncode == 0, result.stdout + result.stderr
    # uvicorn's HTTP protocol, lifespan and loop, imported by name, were found in the bundle
    assert "self-test: OK" in result.stdout and "from the bundle" in result.stdout, result.stdout
    assert "H11Protocol" in result.stdout and "app answers /v1/health" in result.stdout, result.stdout


def _http(url: str, method: str = "GET", body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        **({"Content-Type": "application/json"} if data else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"{}")


@pytest.mark.skipif(not redis_server_available(), reason="needs a redis-server binary")
def test_gateway_round_trip_from_the_bundle(bundle):
    with RedisServer() as server:
        url = server.url
        for args in (("init",), ("open", "G-1", "--initial", "20.00", "--txn-id", "g-open")):
            result = run(bundle, "cashierctl", "--redis-url", url, *args)
            assert result.returncode == 0, (args, result.stdout + result.stderr)
        added = run(bundle, "cashierctl", "--redis-url", url, "cashier", "add", "c1", "--name", "Li Na",
                    "--pin-stdin", stdin="1357\n")
        assert added.returncode == 0, added.stdout + added.stderr
        enrolled = run(bundle, "cashierctl", "--redis-url", url, "terminal", "enroll", "T1")
        assert enrolled.returncode == 0, enrolled.stdout + enrolled.stderr
        token = enrolled.stdout.strip().splitlines()[-1]
        assert token.startswith("T1.") and len(token) > 40, enrolled.stdout

        port = free_port()
        base = f"http://127.0.0.1:{port}/v1"
        gateway = subprocess.Popen([executable(bundle, "cashier-gateway"), "run", "--host", "127.0.0.1",
                                    "--port", str(port), "--log-level", "warning"], cwd=bundle.parent,
                                   env=clean_env({"CASHIER_REDIS_URL": url}), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while True:
                assert gateway.poll() is None, f"the gateway exited {gateway.returncode}: {gateway.stderr.read()}"
                assert time.monotonic() < deadline, "the bundled gateway did not answer /v1/health"
                try:
                    if _http(f"{base}/health") == (200, {"status": "ok", "api": "v1"}):
                        break
                except OSError:
                    time.sleep(0.2)
            bearer = {"Authorization": f"Bearer {token}"}
            status, body = _http(f"{base}/ping", headers=bearer)
            assert (status, body["status"], body["api"], body["terminal_id"]) == (200, "ok", "v1", "T1"), body
            assert isinstance(body["retention_s"], int), body          # the shop's retention, as the till reads it
            status, body = _http(f"{base}/ping", headers={"Authorization": "Bearer T1.not-its-token"})
            assert (status, body["error"]) == (401, "unauthorized"), body
            status, body = _http(f"{base}/ops/deduct", "POST", {"txn_id": "T1-d-1", "account_id": "G-1",
                                                                 "amount_minor": 250}, bearer)
            assert (status, body["error"]) == (401, "session_required"), body
            status, signed_in = _http(f"{base}/sessions", "POST", {"cashier_id": "c1", "pin": "1357"}, bearer)
            assert status == 200 and signed_in["outcome"] == "ok", signed_in
            session = {**bearer, "X-Cashier-Session": signed_in["session"]}
            status, charged = _http(f"{base}/ops/deduct", "POST", {"txn_id": "T1-d-1", "account_id": "G-1",
                                                                    "amount_minor": 250}, session)
            assert status == 200 and charged["status"] == "APPLIED" and charged["balance_minor"] == 1750, charged
        finally:
            gateway.send_signal(signal.SIGTERM)
            try:
                code = gateway.wait(30)
            except subprocess.TimeoutExpired:
                gateway.kill()
                raise
            stderr = gateway.stderr.read()
            gateway.stdout.close()
            gateway.stderr.close()
        assert code == 0 and "Traceback" not in stderr, (code, stderr)
        assert "17.50" in run(bundle, "cashierctl", "--redis-url", url, "balance", "G-1").stdout


@pytest.mark.skipif(not redis_server_available(), reason="needs a redis-server binary")
def test_ledger_round_trip_from_the_bundle(bundle, tmp_path):
    with RedisServer() as server:
        url = server.url
        db = f"sqlite:///{tmp_path / 'books.sqlite3'}"
        for args in (("init",), ("open", "B-1", "--initial", "20.00", "--txn-id", "b-open"),
                     ("topup", "B-1", "5.50", "--txn-id", "b-top"), ("scripts", "load")):
            result = run(bundle, "cashierctl", "--redis-url", url, *args)
            assert result.returncode == 0, (args, result.stdout + result.stderr)
        assert "25.50" in run(bundle, "cashierctl", "--redis-url", url, "balance", "B-1").stdout
        once = run(bundle, "reconcile-service", "run", "--once", "--redis-url", url, "--database-url", db,
                   "--metrics-port", "0", "--log-format", "text")
        assert once.returncode == 0, once.stdout + once.stderr
        status = run(bundle, "reconcile-service", "status", "--json", "--redis-url", url, "--database-url", db)
        assert status.returncode == 0, status.stdout + status.stderr
        info = json.loads(status.stdout)
        assert sum(p["db_entries_applied"] for p in info["partitions"]) == 2
        assert info["open_discrepancies"] == 0
        # the back office's Chinese PDF from the bundle (fpdf2 and Pillow are in it)
        pdf = tmp_path / "liability.pdf"
        report = run(bundle, "reconcile-service", "report", "liability", "--database-url", db,
                     "--date", time.strftime("%Y-%m-%d"), "--format", "pdf", "--lang", "zh_CN",
                     "--output", str(pdf))
        assert report.returncode == 0, report.stdout + report.stderr
        assert pdf.read_bytes().startswith(b"%PDF")


def test_bundle_carries_no_gtk_and_only_the_qt_plugins_the_terminal_uses(bundle):
    """build.spec drops Qt's GTK3 platform theme (and GTK with it), Wayland, the kiosk
    backends and image formats: the bundle must not depend on what the build machine has."""
    internal = bundle / "_internal"
    names = [p.name for p in internal.rglob("*")]
    assert not [n for n in names if n.startswith(("libgtk", "libgdk", "libatk", "libpango", "libcairo"))]
    plugins = {str(p.relative_to(internal / "PySide6/Qt/plugins")) for p in (internal / "PySide6/Qt/plugins").rglob("*.so")}
    assert {"platforms/libqxcb.so", "platforms/libqoffscreen.so", "printsupport/libcupsprintersupport.so",
            "platforminputcontexts/libibusplatforminputcontextplugin.so"} <= plugins
    assert not [p for p in plugins if p.startswith(("platformthemes/", "wayland", "imageformats/", "generic/",
                                                    "egldeviceintegrations/", "platforms/libqwayland"))]
    dangling = [str(p) for p in bundle.rglob("*") if p.is_symlink() and not p.exists()]
    assert not dangling, dangling


@pytest.mark.parametrize("program, args, field", [
    ("cashierctl", ("--redis-url", "redis://127.0.0.1:notaport/0", "balance", "A-1"), "redis_url"),
    ("reconcile-service", ("run", "--once", "--redis-url", "redis://127.0.0.1:6379/abc"), "redis_url"),
    ("cashierctl", ("topup", "A-1", "1.001"), "amount"),
    ("cashier-gateway", ("run", "--port", "0", "--tls-cert", "/nonexistent/gw.crt", "--tls-key", "/nonexistent/gw.key"),
     "tls_cert"),
])
def test_bad_input_from_the_bundle_is_one_line_and_exit_2(bundle, program, args, field):
    result = run(bundle, program, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert field in result.stderr and "Traceback" not in result.stderr
    assert "Failed to execute script" not in result.stderr
