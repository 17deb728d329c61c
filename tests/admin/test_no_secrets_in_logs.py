"""No password, and no URL with credentials, ever reaches a log or an error message of
the back-office programs (issue 8), even with debug logging and with the servers away."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.postgres import fresh_database
from tests.support.servers import RedisServer

REDIS_PASSWORD = "s3cret-redis-pw-7781"
PG_PASSWORD = "s3cret-pg-pw-9924"


def run(*argv, env=None, timeout_s=120):
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout_s,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def assert_clean(output: str):
    assert REDIS_PASSWORD not in output and PG_PASSWORD not in output
    assert f":{REDIS_PASSWORD}@" not in output


@pytest.fixture
def locked_redis():
    with RedisServer("--requirepass", REDIS_PASSWORD) as server:
        yield server


@pytest.mark.slow    # ~15 s: processes retrying against a locked Redis; not in the fast lane
def test_cashierctl_verbose_never_prints_the_password(locked_redis):
    url = f"redis://default:{REDIS_PASSWORD}@127.0.0.1:{locked_redis.port}/0"
    outputs = [run("-m", "admin.cashierctl", "-v", "--redis-url", url, *args)
               for args in (["init"], ["open", "A-1", "--initial", "5"], ["topup", "A-1", "x"],
                            ["doctor"], ["balance", "A-1"])]
    assert [code for code, _ in outputs] == [0, 0, 2, 1, 0]
    # wrong password and server away: the messages name the server, not the secret
    bad = f"redis://default:{REDIS_PASSWORD}-wrong@127.0.0.1:{locked_redis.port}/0"
    outputs.append(run("-m", "admin.cashierctl", "-v", "--redis-url", bad, "balance", "A-1"))
    gone = f"redis://default:{REDIS_PASSWORD}@127.0.0.1:1/0"
    outputs.append(run("-m", "admin.cashierctl", "-v", "--redis-url", gone, "balance", "A-1"))
    assert outputs[-1][0] == 3 and "127.0.0.1:1" in outputs[-1][1]
    for _, output in outputs:
        assert_clean(output)


@pytest.mark.slow    # ~15 s: processes retrying against a locked Redis; not in the fast lane
def test_reconcile_service_logs_never_print_passwords(locked_redis, tmp_path):
    url = f"redis://default:{REDIS_PASSWORD}@127.0.0.1:{locked_redis.port}/0"
    assert run("-m", "admin.cashierctl", "--redis-url", url, "init")[0] == 0
    run("-m", "admin.cashierctl", "--redis-url", url, "open", "A-1", "--initial", "5")
    with fresh_database() as db_url:
        # trust auth ignores the password, so it rides along in the URL like in production
        db_with_password = db_url.replace("@", f":{PG_PASSWORD}@", 1)
        env = {"CASHIER_REDIS_URL": url, "CASHIER_DATABASE_URL": db_with_password}
        results = [run("-m", "reconcile_service", "run", "--once", "--log-level", "DEBUG", env=env),
                   run("-m", "reconcile_service", "status", "--json", env=env)]
        assert [code for code, _ in results] == [0, 0]
        gone = {**env, "CASHIER_REDIS_URL": f"redis://default:{REDIS_PASSWORD}@127.0.0.1:1/0"}
        results.append(run("-m", "reconcile_service", "reconcile", "--retry-deadline-s", "1",
                           "--log-level", "DEBUG", env=gone))
        assert results[-1][0] != 0
    for _, output in results:
        assert_clean(output)


@pytest.mark.parametrize("url, secret", [
    ("redis://default:pw-1@127.0.0.1:1/0", "pw-1"),
    ("redis://127.0.0.1:1/0?password=pw-2", "pw-2"),
    ("rediss://u:pw-3@h:1/0?ssl_ca_certs=/ca.pem&ssl_password=pw-4", "pw-"),
    ("redis+cluster://u:pw-5@a:1,b:2", "pw-5"),
])
def test_redacted_urls_keep_no_secret(url, secret):
    from core.connection import redacted
    shown = redacted(url)
    assert secret not in shown and "***" in shown
