"""Fuzzing the shop's command lines (issue 18): hypothesis builds argv for every
cashierctl, reconcile-service and demo subcommand (Redis and database URLs, paths,
numbers, ids, flags; valid, hostile and pointing at servers that are down) and runs it
in-process against a real Redis. Whatever the argv:

- the exit code is one of the documented table (core.exit_codes, printed by --help);
- a non-zero code other than "declined" comes with one message naming the field
  (redis_url, amount, data_dir, argument --count, ...), never a traceback (an exception
  escaping main() fails the test with it);
- a URL the oracle below knows is malformed (port not a number, database not a
  number, unknown scheme) is bad input (2) naming redis_url, never taken silently;
- bad input (2) changes nothing in Redis.

A few real subprocess runs (python -m ...) prove the same outside pytest. Bounded:
about 30-60 s in all. Faults: Redis URLs of closed ports (unavailable, bounded by a
short --retry-deadline-s), a database number the server does not have, a database
server that has no such database.
"""
from __future__ import annotations

import io
import re
import signal
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.exit_codes import CODES, EXIT_BAD_INPUT, EXIT_DECLINED, EXIT_OK, EXIT_UNAVAILABLE, TABLE
from tests.support.postgres import PG_HOST, PG_PORT, admin_user
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
def hypo(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLOSED_PORT = free_port()

# Fields a message may name: every core request field and every setting of the programs.
FIELDS = {"redis_url", "database_url", "amount", "initial", "account_id", "txn_id", "cashier_id",
          "holder_name", "partitions", "count", "password", "pin", "name", "retry_deadline_s",
          "data_dir", "timeout_s", "metrics_port", "metrics_host", "batch_size", "block_ms",
          "claim_idle_ms", "log_level", "log_format", "consumer_name", "config file",
          "reconcile_interval_s", "trim_interval_s", "trim_keep_s", "hold_expiry_interval_s", "operator"}
ARGPARSE = re.compile(r"^error: (argument [-\w/ ]+:|the following arguments are required:|unrecognized arguments:"
                      r"|one of the arguments)")


def last_message(prog: str, err: str) -> str | None:
    """The program's last line on stderr without "<prog>[ <subcommand>...]: "."""
    found = re.findall(rf"^{re.escape(prog)}(?: [\w-]+)*: (.*)$", err, re.MULTILINE)
    return found[-1] if found else None


def names_a_field(prog: str, err: str) -> bool:
    """The program's last line on stderr names the field first: "<field>: ...", "<what>:
    <field>: ...", "<field> (from command line): ...", argparse's "error: argument --x: ..."."""
    message = last_message(prog, err)
    if message is None:
        return False
    if ARGPARSE.match(message):
        return True
    message = message.removeprefix("configuration error: ")
    return any(re.match(rf"^(?:[\w -]+: )?{re.escape(field)}\b", message) for field in FIELDS)


def invoke(main, argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """main(argv) in this process with stdin given and stdout/stderr caught; the signal
    handlers `run` and `restore` install are put back."""
    out, err = io.StringIO(), io.StringIO()
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:      # argparse: usage errors exit 2, --help/--version 0
                code = exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    finally:
        sys.stdin = old_stdin
        for number, handler in saved.items():
            signal.signal(number, handler)
    return code, out.getvalue(), err.getvalue()


def snapshot(client) -> dict:
    return {k: client.dump(k) for k in client.scan_iter("*")}


def check(prog: str, code: int, err: str, argv: list[str], expect_bad_url: bool = False) -> None:
    assert "Traceback" not in err, (argv, err)
    assert code in CODES, (argv, code, err)
    if code in (EXIT_BAD_INPUT, EXIT_UNAVAILABLE):
        assert names_a_field(prog, err), (argv, code, err)
    elif code not in (EXIT_OK, EXIT_DECLINED):       # refused: one line saying why
        assert last_message(prog, err), (argv, code, err)
    if expect_bad_url:                                 # never taken silently (another field may be named first)
        assert code == EXIT_BAD_INPUT, (argv, code, err)


# ------------------------------------------------------------------ strategies

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)


@st.composite
def redis_urls(draw, good_url: str):
    """(url, malformed): the test Redis, its variants and faults, and malformed URLs."""
    host, port = "127.0.0.1", good_url.rsplit(":", 1)[1].split("/")[0]
    kind = draw(st.sampled_from(["good", "good", "closed", "db_out_of_range", "bad_port", "bad_db",
                                 "bad_scheme", "garbage", "cluster_bad_seed"]))
    if kind == "good":
        return good_url, False
    if kind == "closed":
        return f"redis://{host}:{CLOSED_PORT}/0", False
    if kind == "db_out_of_range":
        return f"redis://{host}:{port}/{draw(st.integers(16, 10 ** 6))}", False
    if kind == "bad_port":
        bad = draw(st.sampled_from(["notaport", "-1", "65536", "99999", "6379x", "", " 1"]))
        return f"redis://{host}:{bad}/0", bad != ""
    if kind == "bad_db":
        return f"redis://{host}:{port}/{draw(st.sampled_from(['abc', '-1', '1.5', '0x1', '1/2', 'db']))}", True
    if kind == "bad_scheme":
        return f"{draw(st.sampled_from(['http', 'redis+', 'ftp', 'mysql', 'rediss+x']))}://{host}:{port}/0", True
    if kind == "cluster_bad_seed":
        seed = draw(st.sampled_from(["no-such-host.invalid", "h:", ":1", "h:p"]))
        return f"redis+cluster://{host}:{port},{seed}", ":" in seed     # a host alone is valid (port 6379)
    text = draw(TEXT)
    return text, False          # anything at all: only "no traceback, a code of the table"


ACCOUNTS = st.one_of(st.sampled_from(["A-1", "NOPE-9", "D-1001"]), TEXT.filter(lambda t: not t.startswith("-")))
AMOUNTS = st.one_of(st.sampled_from(["1", "5.50", "0", "-1", "1.001", "1e3", "99999999999"]),
                    TEXT.filter(lambda t: not t.startswith("-")))
NUMBERS = st.one_of(st.integers(-5, 100).map(str), st.sampled_from(["x", "1.5", "", "1e9"]))


@st.composite
def cashierctl_argv(draw, good_url: str, tmp: Path):
    url, malformed = draw(redis_urls(good_url))
    head = ["--redis-url", url, "--retry-deadline-s", draw(st.sampled_from(["0.2", "0.3"]))]
    if draw(st.booleans()):
        head.append("--json")
    txn = ["--txn-id", draw(st.one_of(st.just("t-1"), TEXT.filter(lambda t: t and not t.startswith("-"))))] \
        if draw(st.booleans()) else []
    command = draw(st.sampled_from(["init", "open", "topup", "freeze", "unfreeze", "balance", "journal",
                                    "acl", "scripts", "doctor", "verify", "self-test", "cashier-add",
                                    "cashier-list", "cashier-disable", "cashier-reset-pin"]))
    account = draw(ACCOUNTS)
    tail = {
        "init": ["init"] + (["--partitions", draw(NUMBERS)] if draw(st.booleans()) else []),
        "open": ["open", account, "--initial", draw(AMOUNTS), *txn],
        "topup": ["topup", account, draw(AMOUNTS), *txn],
        "freeze": ["freeze", account, *txn],
        "unfreeze": ["unfreeze", account, *txn],
        "balance": ["balance", account],
        "journal": ["journal", account, "--count", draw(NUMBERS)],
        "acl": ["acl"],                                      # never --apply: it would change the test Redis' users
        "scripts": ["scripts", draw(st.sampled_from(["load", "unload"]))],
        "doctor": ["doctor"],
        "verify": ["verify", "--no-drain", "--database-url",
                   draw(st.sampled_from([f"sqlite:///{tmp / 'v.sqlite3'}", "sqlite:////proc/nope/x.db",
                                         "mysql://x/y", "postgresql://u@h/db", "::"]))],
        "self-test": ["self-test"],
        "cashier-add": ["cashier", "add", draw(ACCOUNTS), "--name", draw(TEXT.filter(lambda t: not t.startswith("-"))),
                        "--pin-stdin"],
        "cashier-list": ["cashier", "list"],
        "cashier-disable": ["cashier", draw(st.sampled_from(["disable", "enable"])), draw(ACCOUNTS)],
        "cashier-reset-pin": ["cashier", "reset-pin", draw(ACCOUNTS), "--pin-stdin"],
    }[command]
    uses_redis = command not in ("self-test", "acl")
    return head + tail, malformed and uses_redis, draw(st.sampled_from(["1234\n", "12\n", "abcd\n", "\n"]))


@st.composite
def reconcile_argv(draw, good_url: str, tmp: Path, pg_base: str):
    url, malformed = draw(redis_urls(good_url))
    command = draw(st.sampled_from(["run", "migrate", "reconcile", "restore", "status", "self-test"]))
    if command == "self-test":
        return ["self-test"], False
    database = draw(st.sampled_from([
        f"sqlite:///{tmp / 'books.sqlite3'}", f"sqlite:///{tmp / 'never-made.sqlite3'}",
        "sqlite:////proc/nope/books.sqlite3", f"{pg_base}/fuzz_no_such_db", "postgresql://u@h/db",
        f"postgresql+psycopg://postgres@127.0.0.1:{CLOSED_PORT}/x", "mysql://x/y", "nonsense"]))
    argv = [command, "--redis-url", url, "--database-url", database, "--retry-deadline-s",
            draw(st.sampled_from(["0.5", "0.3"])), "--log-format", "text", "--metrics-port", "0"]
    if command == "run":
        argv.append("--once")                       # the daemon would never return
    for flag, values in (("--batch-size", NUMBERS), ("--block-ms", NUMBERS), ("--metrics-port", NUMBERS),
                         ("--log-level", st.sampled_from(["debug", "LOUD", "", "ERROR"])),
                         ("--log-format", st.sampled_from(["json", "xml", "text"])),
                         ("--trim-keep-s", st.sampled_from(["-1", "nan", "10", "x"])),
                         ("--config", st.sampled_from([str(tmp / "missing.toml"), str(tmp), str(tmp / "bad.toml"),
                                                       str(tmp / "good.toml")]))):
        if draw(st.integers(0, 5)) == 0:
            argv += [flag, draw(values)]
    if command in ("reconcile", "restore", "status") and draw(st.booleans()):
        argv.append("--json")
    return argv, malformed


# ------------------------------------------------------------------ cashierctl


@pytest.fixture
def fuzz_redis(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield redis_url, client
    client.close()


@hypo(80)
@given(data=st.data())
def test_cashierctl_any_argv(fuzz_redis, tmp_path, data):
    from admin.cashierctl import main
    url, client = fuzz_redis
    argv, malformed, stdin = data.draw(cashierctl_argv(url, tmp_path))
    before = snapshot(client)
    code, _, err = invoke(main, argv, stdin)
    check("cashierctl", code, err, argv, expect_bad_url=malformed)
    if code == EXIT_BAD_INPUT:
        assert snapshot(client) == before, (argv, err)


# ------------------------------------------------------------------ reconcile-service


@pytest.fixture
def reconcile_files(tmp_path):
    (tmp_path / "bad.toml").write_text("batch_size = 'many'\n")
    (tmp_path / "good.toml").write_text("batch_size = 100\n")
    return tmp_path


@hypo(30)
@given(data=st.data())
def test_reconcile_service_any_argv(fuzz_redis, reconcile_files, data, monkeypatch):
    from reconcile_service.cli import main
    url, client = fuzz_redis
    monkeypatch.delenv("CASHIER_REDIS_URL", raising=False)
    monkeypatch.delenv("CASHIER_DATABASE_URL", raising=False)
    monkeypatch.delenv("CASHIER_RECONCILE_CONFIG", raising=False)
    pg_base = f"postgresql+psycopg://{admin_user()}@{PG_HOST}:{PG_PORT}"   # a server with no such database
    argv, malformed = data.draw(reconcile_argv(url, reconcile_files, pg_base))
    before = snapshot(client)
    files_before = sorted(p.name for p in reconcile_files.iterdir())
    code, _, err = invoke(main, argv)
    check("reconcile-service", code, err, argv, expect_bad_url=malformed)
    if code == EXIT_BAD_INPUT:
        assert snapshot(client) == before, (argv, err)
    if argv[0] == "status":                     # status only reads: it creates no database file
        assert sorted(p.name for p in reconcile_files.iterdir()) == files_before, argv


# ------------------------------------------------------------------ demo


@st.composite
def demo_argv(draw, good_url: str, tmp: Path):
    """Every run is refused before the shop starts (a full demo takes seconds): the data
    directory is always unusable, or the timeout is not positive, or --reset is asked
    of a folder that is not a demo's."""
    url, _ = draw(redis_urls(good_url))
    bad_dir = draw(st.sampled_from([str(tmp / "a-file"), str(tmp / "a-file" / "sub"), "/proc/nope/demo",
                                    str(tmp / "not-a-demo")]))
    argv = ["--headless", "--redis-url", url, "--data-dir", bad_dir]
    if draw(st.booleans()):
        argv += ["--timeout-s", draw(st.sampled_from(["0", "-1", "nan", "x", "5"]))]
    if bad_dir.endswith("not-a-demo"):
        argv.append("--reset")
    if draw(st.booleans()):
        argv.append("--private-redis")
    return argv


@hypo(25)
@given(data=st.data())
def test_demo_any_bad_argv(fuzz_redis, tmp_path, data):
    from demo.cli import main
    url, client = fuzz_redis
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "not-a-demo").mkdir(exist_ok=True)
    (tmp_path / "not-a-demo" / "precious.txt").write_text("the shop's")
    argv = data.draw(demo_argv(url, tmp_path))
    before = snapshot(client)
    code, _, err = invoke(main, argv)
    check("python -m demo", code, err, argv)
    assert code == EXIT_BAD_INPUT, (argv, code, err)
    assert snapshot(client) == before
    assert (tmp_path / "not-a-demo" / "precious.txt").exists()


# ------------------------------------------------------------------ the table and real processes


def test_help_of_every_program_prints_the_exit_code_table():
    from admin.cashierctl import main as ctl
    from demo.cli import main as demo
    from reconcile_service.cli import main as rs
    for prog, main in (("cashierctl", ctl), ("reconcile-service", rs), ("demo", demo)):
        code, out, _ = invoke(main, ["--help"])
        assert code == 0
        for number, name, _meaning in TABLE:
            assert re.search(rf"^\s+{number}\s+{name}: ", out, re.MULTILINE), (prog, number)


def test_operations_doc_holds_the_table():
    from core.exit_codes import markdown_table
    assert markdown_table() in (ROOT / "docs" / "operations.md").read_text()


def test_every_flag_has_help_text():
    import argparse

    from admin.cashierctl import build_parser as ctl_parser
    from reconcile_service.cli import build_parser as rs_parser

    def walk(parser, where):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, f"{where} {name}")
            elif not isinstance(action, argparse._HelpAction):
                yield where, action
    from demo.cli import build_parser as demo_parser
    missing = [f"{where}: {action.option_strings or action.dest}"
               for parser, name in ((ctl_parser(), "cashierctl"), (rs_parser(), "reconcile-service"),
                                    (demo_parser(), "demo"))
               for where, action in walk(parser, name) if not action.help
               and not where.startswith(("cashierctl split", "cashierctl merge"))]   # being deleted (CONTRACTS.md)
    assert not missing, missing


@pytest.mark.parametrize("argv, field", [
    (["-m", "admin.cashierctl", "--redis-url", "redis://127.0.0.1:notaport/0", "balance", "A-1"], "redis_url"),
    (["-m", "admin.cashierctl", "--redis-url", "redis://127.0.0.1:6379/abc", "balance", "A-1"], "redis_url"),
    (["-m", "reconcile_service", "status", "--redis-url", "redis://127.0.0.1:notaport/0"], "redis_url"),
    (["-m", "demo", "--headless", "--data-dir", "/proc/nope"], "data_dir"),
])
def test_real_processes_exit_2_naming_the_field(argv, field, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_BAD_INPUT, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and field in proc.stderr, proc.stderr


def test_a_closed_port_is_unavailable_within_the_deadline():
    from admin.cashierctl import main
    code, _, err = invoke(main, ["--redis-url", f"redis://127.0.0.1:{CLOSED_PORT}/0", "--retry-deadline-s", "0.3",
                                 "balance", "A-1"])
    assert code == EXIT_UNAVAILABLE and "within 0.3 s" in err and names_a_field("cashierctl", err)
