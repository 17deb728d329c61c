"""The one-command demo, run as a user runs it (`python -m demo --headless`) against
real servers: a private redis-server it starts itself, a Redis the test gives it, and
a Redis whose database holds someone else's data (which it must leave alone). Each run
must print the end-to-end result read back from the SQLite database and leave no
process behind."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from sqlalchemy import create_engine, text

from tests.support.servers import RedisServer, redis_server_available

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 120

pytestmark = pytest.mark.skipif(not redis_server_available(), reason="needs a redis-server binary")


def run_demo(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CASHIER_REDIS_URL", None)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "demo", "--headless", "--data-dir", str(data_dir),
                           "--timeout-s", "30", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)


def database_row(data_dir: Path, tag: str, txn_id: str) -> dict:
    engine = create_engine(f"sqlite:///{data_dir / f'reconcile-{tag}.sqlite3'}")
    try:
        with engine.connect() as conn:
            return dict(conn.execute(text("SELECT * FROM ledger_entries WHERE txn_id = :t"),
                                     {"t": txn_id}).mappings().one())
    finally:
        engine.dispose()


def checked_txn(out: str) -> str:
    assert "end-to-end OK" in out, out
    match = re.search(r"database row: +ledger_entries txn_id=(DEMO-d-\w+) kind=deduct account_id=D-1001 "
                      r"amount_minor=-1250 balance_after_minor=(\d+) terminal_id=DEMO cashier_id=demo", out)
    assert match, out
    return match.group(1)


def no_process_uses(data_dir: Path) -> bool:
    """No child of the demo (they name the data dir in their arguments) is left running."""
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    return str(data_dir) not in ps


def private_redis_stopped(out: str) -> bool:
    """redis-server renames its process, so ask its port instead."""
    port = int(re.search(r"private redis-server on 127.0.0.1:(\d+)", out).group(1))
    try:
        redis.Redis(port=port, socket_connect_timeout=0.5).ping()
    except redis.ConnectionError:
        return True
    return False


@pytest.mark.slow    # ~10-30 s: the whole demo in processes; not in the fast lane
def test_private_redis_end_to_end_twice(tmp_path):
    data_dir = tmp_path / "demo"
    first = run_demo(data_dir, "--private-redis")
    assert first.returncode == 0, first.stdout + first.stderr
    txn = checked_txn(first.stdout)
    assert "started a private redis-server" in first.stdout
    assert "PIN 1234" in first.stdout and "account D-1001" in first.stdout
    row = database_row(data_dir, "private", txn)
    assert (row["amount_minor"], row["balance_after_minor"], row["terminal_id"]) == (-1250, 18750, "DEMO")
    assert any((data_dir / "redis").rglob("*.aof")), "the private Redis keeps an AOF"
    assert no_process_uses(data_dir), "the demo left a process running"
    assert private_redis_stopped(first.stdout)
    assert "demo stopped cleanly" in first.stdout

    # A second run finds the shop where the first left it (AOF) and charges again.
    second = run_demo(data_dir, "--private-redis")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "ledger found in Redis" in second.stdout
    txn2 = checked_txn(second.stdout)
    assert txn2 != txn
    assert database_row(data_dir, "private", txn2)["balance_after_minor"] == 17500
    assert no_process_uses(data_dir)


@pytest.mark.slow    # ~10-30 s: the whole demo in processes; not in the fast lane
def test_uses_the_configured_redis_and_leaves_other_data_alone(tmp_path):
    with RedisServer() as server:
        client = server.client()
        client.set("someone-else:key", "theirs")          # db 0 holds someone else's data
        foreign_url = f"redis://127.0.0.1:{server.port}/0"
        refused = run_demo(tmp_path / "a", "--redis-url", foreign_url)
        assert refused.returncode == 0, refused.stdout + refused.stderr
        assert "holds other data" in refused.stdout and "started a private redis-server" in refused.stdout
        assert client.keys("*") == ["someone-else:key"] and client.get("someone-else:key") == "theirs"
        assert private_redis_stopped(refused.stdout)

        empty_url = f"redis://127.0.0.1:{server.port}/3"
        used = run_demo(tmp_path / "b", "--redis-url", empty_url)
        assert used.returncode == 0, used.stdout + used.stderr
        assert f"using Redis at {empty_url}" in used.stdout
        txn = checked_txn(used.stdout)
        db3 = redis.Redis(port=server.port, db=3, decode_responses=True)
        assert db3.exists("cs:meta") and db3.exists("cashier-demo:owner")
        assert database_row(tmp_path / "b", f"127.0.0.1-{server.port}-3", txn)["kind"] == "deduct"
        assert client.keys("*") == ["someone-else:key"]
        db3.close()
    assert no_process_uses(tmp_path)


def test_bad_redis_url_is_a_message_not_a_traceback(tmp_path):
    result = run_demo(tmp_path / "demo", "--redis-url", "http://nowhere")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "redis_url" in result.stderr.lower() + result.stdout.lower()


@pytest.mark.slow    # ~10-30 s: the whole demo in processes; not in the fast lane
def test_with_a_display_it_opens_the_terminal_and_sigterm_stops_everything(tmp_path):
    """The window path, on Qt's offscreen platform: the terminal process starts; SIGTERM to
    the demo stops the terminal, the reconcile service and the private Redis."""
    import signal
    import time
    data_dir = tmp_path / "demo"
    env = dict(os.environ, DISPLAY=":99", QT_QPA_PLATFORM="offscreen")
    env.pop("CASHIER_REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "demo", "--private-redis", "--data-dir", str(data_dir)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("terminal:  window opened"):
                break
        out = "".join(lines)
        assert "end-to-end OK" in out and "window opened" in out, out
        ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
        assert "-m desktop" in ps and str(data_dir) in ps, "the terminal process runs"
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + rest
    assert "everything the demo started has been stopped" in rest
    assert no_process_uses(data_dir) and private_redis_stopped(out)
