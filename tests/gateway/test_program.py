"""`cashier-gateway` as a program (what the bundle, the .deb and the systemd unit rely on):
`self-test` checks the installation offline in one line (0), or names its first problem
(1, no traceback); a stop asked for with SIGTERM or SIGINT is graceful and exits 0 (uvicorn
re-raises the signal after its shutdown, which used to end the process with 143)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gateway import selftest
from tests.gateway.conftest import GatewayProcess

ROOT = Path(__file__).resolve().parents[2]


def test_self_test_needs_no_redis_and_prints_one_line():
    env = {k: v for k, v in os.environ.items() if k != "CASHIER_REDIS_URL"}
    done = subprocess.run([sys.executable, "-m", "gateway", "self-test"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cashier-gateway self-test: OK"), lines
    assert "app answers /v1/health" in lines[0] and "from the source at" in lines[0]
    assert done.stderr == ""


def test_self_test_names_missing_lua_scripts(monkeypatch, tmp_path, capsys):
    import core.scripts
    (tmp_path / "deduct.lua").write_text("return 1\n")
    monkeypatch.setattr(core.scripts, "lua_dir", lambda: tmp_path)
    assert selftest.run_selftest() == 1
    out = capsys.readouterr().out
    assert out.startswith("cashier-gateway self-test: FAILED: RuntimeError: Lua scripts missing")
    assert "credit" in out and "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_self_test_fails_when_the_app_answers_wrongly(monkeypatch, capsys):
    from gateway import app, wire     # noqa: F401  (the app is imported first: it keeps serving /v1)
    monkeypatch.setattr(wire, "API_VERSION", "v0")     # the app still serves /v1: the check asks /v0
    assert selftest.run_selftest() == 1
    out = capsys.readouterr().out
    assert out.startswith("cashier-gateway self-test: FAILED") and "/v0/health" in out, out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_asked_for_exits_0(shop, redis_url, sig):
    gw = GatewayProcess(redis_url).start()
    gw.proc.send_signal(sig)
    assert gw.proc.wait(15) == 0
    assert "Traceback" not in gw.proc.stderr.read().decode()
    gw.stop()


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gateway", "run", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def test_unusable_tls_files_exit_2_naming_the_option(tmp_path, redis_url):
    cert, key = tmp_path / "gateway.crt", tmp_path / "gateway.key"
    missing = _run("--port", "0", "--tls-cert", str(cert), "--tls-key", str(key), CASHIER_REDIS_URL=redis_url)
    assert missing.returncode == 2 and "tls_cert" in missing.stderr and str(cert) in missing.stderr, missing.stderr
    cert.write_text("not a certificate\n")
    key.write_text("not a key\n")
    garbage = _run("--port", "0", "--tls-cert", str(cert), "--tls-key", str(key), CASHIER_REDIS_URL=redis_url)
    assert garbage.returncode == 2 and "tls_cert/tls_key" in garbage.stderr, garbage.stderr
    for done in (missing, garbage):
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
