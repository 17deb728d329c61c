"""`python -m demo`: a complete shop on one PC, proven end to end, stopped cleanly.

Steps: choose Redis (`demo.redis_choice`: the configured one if it is safe to use, else
a private redis-server with AOF in the data directory); start the reconcile service
(`python -m reconcile_service run`) on an SQLite database in the data directory;
create the ledger if Redis has none (or let the service restore it from the database);
open the demo accounts and the demo cashier and print the credentials; make one charge
end to end and print the database's row (`demo.shop`); then open a cashier terminal
(`python -m desktop`) and wait until it is closed. The terminals reach the ledger only
through a ledger gateway (`python -m gateway run`) the demo starts on loopback, with a
terminal credential it enrols and keeps in the data directory (mode 0600), as a shop's
tills do: no till holds a Redis login. Without a display (no DISPLAY or
WAYLAND_DISPLAY on Linux, or ``--headless``) it says how to get one and stops after
the check. Ctrl-C or SIGTERM stops everything the demo started, in order: terminal,
gateway, reconcile service (warm: it finishes its batch), private Redis (fsyncs its AOF).

After the check it prints the exact `cashierctl` and `reconcile-service` commands (with
the demo's Redis URL and SQLite file) to look at its shop. `--reset` deletes what the
demo keeps (its data directory, and the demo's own database on a shared Redis, only
while that database holds the demo's marker key) so the next run starts a new shop.

Exit codes (`core.exit_codes`, the same as cashierctl and reconcile-service): 0 the shop
ran and the end-to-end check passed; 1 the check failed; 2 a usage or environment
problem (the message names the field: redis_url, data_dir, timeout_s; no traceback);
3 Redis did not answer; 4 Redis refused (e.g. it may evict keys); 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import platformdirs

from core.connection import redacted
from core.exit_codes import EXIT_BAD_INPUT, EXIT_DECLINED, EXIT_INTERRUPTED, EXIT_OK, classify, epilog
from core.money import format_minor

from .redis_choice import DemoError, choose, free_port, new_session, reset_redis

EXIT_CHECK_FAILED, EXIT_USAGE = EXIT_DECLINED, EXIT_BAD_INPUT
DEFAULT_TIMEOUT_S = 30.0
TERMINAL_ID = "DEMO-T1"
CHILD_STOP_TIMEOUT_S = 15.0
SOURCE_ROOT = Path(__file__).resolve().parent.parent     # holds core/, desktop/, reconcile_service/


def parse_args(argv=None) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m demo", description=__doc__.split("\n\n")[0],
                                epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--redis-url", help="Redis to use if it answers and its database is empty or the "
                                       "demo's (env CASHIER_REDIS_URL; default redis://127.0.0.1:6379/15)")
    p.add_argument("--private-redis", action="store_true",
                   help="always start a private redis-server (AOF in the data directory)")
    p.add_argument("--data-dir", help="where the demo keeps its Redis AOF, SQLite database, terminal "
                                      "outbox and logs (default: the platform's user data directory)")
    p.add_argument("--headless", action="store_true", help="do not open the terminal window")
    p.add_argument("--timeout-s", type=float, default=DEFAULT_TIMEOUT_S,
                   help="bound on each wait (server start, charge, reconcile) (default %(default)s)")
    p.add_argument("--reset", action="store_true",
                   help="delete the demo's shop (its data directory, and its database on the configured "
                        "Redis if that holds the demo's marker) and exit; the next run starts afresh")
    return p


def say(line: str = "") -> None:
    print(line, flush=True)


def has_display() -> bool:
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True       # Windows and macOS always have a desktop session when a user runs this


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Child:
    """A child process the demo started, stopped politely (SIGTERM) and then firmly."""

    def __init__(self, name: str, args: list[str], log_path: Path, env: dict[str, str] | None = None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                     env={**_child_env(), **(env or {})}, cwd=str(SOURCE_ROOT), **new_session())

    def died(self) -> str | None:
        """None while running, else a message with the end of its log."""
        code = self.proc.poll()
        if code is None:
            return None
        try:
            tail = self.log_path.read_text(errors="replace").strip().splitlines()[-5:]
        except OSError:
            tail = []
        return f"{self.name} exited with code {code}; last lines of {self.log_path}:\n    " + "\n    ".join(tail)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(CHILD_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(CHILD_STOP_TIMEOUT_S)
        self.log.close()


class DataDirLock:
    """One demo per data directory: two would share one AOF and one SQLite file."""

    def __init__(self, directory: Path):
        self.path = directory / "demo.lock"
        self.fh = None

    def __enter__(self):
        self.fh = open(self.path, "a+")
        try:
            if os.name == "nt":
                import msvcrt
                msvcrt.locking(self.fh.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.fh.close()
            raise DemoError(f"another demo is running on {self.path.parent}; stop it first "
                            "(or give this one its own --data-dir)") from None
        return self

    def __exit__(self, *exc):
        self.fh.close()


def _stop_on_sigterm() -> None:
    """SIGTERM behaves like Ctrl-C: the finally blocks stop every child."""
    def handler(signum, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


def database_has_data(database_url: str) -> bool:
    from reconcile_service.db import make_engine
    from reconcile_service.restore import database_partitions
    engine = make_engine(database_url)
    try:
        return database_partitions(engine) is not None
    except Exception:      # no tables yet (never migrated): nothing to restore
        return False
    finally:
        engine.dispose()


def start_reconcile(redis_url: str, database_url: str, data_dir: Path) -> tuple[Child, int]:
    metrics_port = free_port()
    args = [sys.executable, "-m", "reconcile_service", "run", "--redis-url", redis_url,
            "--database-url", database_url, "--consumer-name", "demo", "--metrics-port", str(metrics_port),
            "--log-format", "text", "--log-level", "INFO"]
    return Child("reconcile service", args, data_dir / "reconcile.log"), metrics_port


def start_gateway(redis_url: str, data_dir: Path, timeout_s: float) -> tuple[Child, str]:
    """The shop's ledger gateway on a free loopback port (plain HTTP: loopback only); the
    Redis URL goes in its environment, never on its command line. Waits until it answers."""
    import httpx
    port = free_port()
    args = [sys.executable, "-m", "gateway", "run", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning"]
    child = Child("ledger gateway", args, data_dir / "gateway.log", env={"CASHIER_REDIS_URL": redis_url})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while True:
        if (problem := child.died()) is not None:
            raise DemoError(problem)
        try:
            if httpx.get(f"{url}/v1/health", timeout=0.5).status_code == 200:
                return child, url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            child.stop()
            raise DemoError(f"the ledger gateway did not answer within {timeout_s:.0f} s (see {child.log_path})")
        time.sleep(0.05)


def enrol_terminal(ledger, terminal_id: str, data_dir: Path) -> tuple[str, Path]:
    """A fresh credential for `terminal_id` (`cashierctl terminal enroll`), kept in a 0600
    file of the data directory for the terminal to read (--token-file)."""
    from core.terminals import TerminalRegistry
    token = TerminalRegistry(ledger.client).enroll(terminal_id)
    path = data_dir / f"{terminal_id}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token, path


def run(args: argparse.Namespace) -> int:
    from core import Ledger

    from . import shop

    started_s = time.monotonic()
    data_dir = prepare_data_dir(args.data_dir)
    headless = args.headless or not has_display()
    with ExitStack() as stack:
        stack.enter_context(DataDirLock(data_dir))
        say(f"cashier demo: data in {data_dir}")
        chosen = choose(args.redis_url, data_dir, force_private=args.private_redis)
        if chosen.private:
            stack.callback(chosen.private.stop)
        say(f"redis:     {chosen.note}")

        database_url = f"sqlite:///{data_dir / f'reconcile-{chosen.db_tag}.sqlite3'}"
        had_books = database_has_data(database_url)
        ledger = Ledger.from_url(chosen.url, auto_init=False)
        stack.callback(ledger.close)
        children: list[Child] = []
        stack.callback(lambda: [child.stop() for child in reversed(children)])

        def start_service() -> None:
            child, port = start_reconcile(chosen.url, database_url, data_dir)
            children.append(child)
            say(f"reconcile: service started (pid {child.proc.pid}) on {redacted(database_url)}; "
                f"metrics http://127.0.0.1:{port}/metrics; log {child.log_path}")

        if had_books:           # Redis may have lost the ledger: the service restores it
            start_service()
            say(f"ledger:    {shop.ensure_ledger(ledger, True, args.timeout_s)}")
        else:                   # a new shop: create the ledger first, then the service finds it
            say(f"ledger:    {shop.ensure_ledger(ledger, False, args.timeout_s)}")
            start_service()

        say("demo shop:")
        for line in shop.seed(ledger):
            say(line)

        gateway, gateway_url = start_gateway(chosen.url, data_dir, args.timeout_s)
        children.append(gateway)
        check_token, _ = enrol_terminal(ledger, shop.CHECK_TERMINAL_ID, data_dir)
        _, terminal_token_file = enrol_terminal(ledger, TERMINAL_ID, data_dir)
        say(f"gateway:   started (pid {gateway.proc.pid}) on {gateway_url}; terminals {shop.CHECK_TERMINAL_ID} "
            f"and {TERMINAL_ID} enrolled (credentials in {data_dir}, mode 0600); log {gateway.log_path}")

        def alive() -> str | None:
            return children[0].died() or gateway.died()

        say(f"checking the whole path: charge {format_minor(shop.CHECK_AMOUNT_MINOR)} on "
            f"{shop.CHECK_ACCOUNT_ID} at terminal {shop.CHECK_TERMINAL_ID} by cashier {shop.DEMO_CASHIER_ID}")
        try:
            result = shop.charge_end_to_end(ledger, gateway_url, check_token, database_url,
                                            data_dir / "check-terminal", args.timeout_s, alive=alive)
        except DemoError as exc:
            say(f"end-to-end FAILED: {exc}")
            return EXIT_CHECK_FAILED
        row = result.db_row
        say(f"  terminal -> gateway -> ledger: {result.status}, balance after "
            f"{format_minor(result.balance_after_minor)}, txn {result.txn_id}")
        say(f"  redis journal:      entry {result.journal_id} (partition {row['journal_partition']})")
        say(f"  database row:       ledger_entries txn_id={row['txn_id']} kind={row['kind']} "
            f"account_id={row['account_id']} amount_minor={row['amount_minor']} "
            f"balance_after_minor={row['balance_after_minor']} terminal_id={row['terminal_id']} "
            f"cashier_id={row['cashier_id']} ({result.seconds_to_database:.2f} s after the charge)")
        say(f"end-to-end OK: terminal -> gateway -> Redis -> journal -> reconcile service -> database "
            f"({time.monotonic() - started_s:.1f} s since start)")
        for line in look_commands(chosen.url, database_url, data_dir, private=chosen.private is not None,
                                  headless=headless):
            say(line)

        terminal_args = [sys.executable, "-m", "desktop", "--config", str(data_dir / "terminal.ini"),
                         "--gateway-url", gateway_url, "--token-file", str(terminal_token_file),
                         "--terminal-id", TERMINAL_ID,
                         "--data-dir", str(data_dir / "terminal")]
        if headless:
            say("no display here, so no terminal window. To see it, run `python -m demo` in a desktop "
                "session, or log in with `ssh -X` (X forwarding sets DISPLAY) and run it again; the shop's "
                "data stays in the data directory between runs.")
            say("demo finished: stopping what it started")
            return EXIT_OK
        terminal = Child("cashier terminal", terminal_args, data_dir / "terminal.log")
        children.append(terminal)
        say(f"terminal:  window opened (terminal id {TERMINAL_ID}); sign in as {shop.DEMO_CASHIER_ID!r} "
            f"with PIN {shop.DEMO_CASHIER_PIN}. Close the window (or press Ctrl-C here) to stop the demo.")
        while terminal.proc.poll() is None:
            time.sleep(0.2)
            if (problem := alive()) is not None:
                say(f"warning: {problem}")
                break
        say("terminal closed: stopping what the demo started")
        return EXIT_OK


DEFAULT_DATA_DIR_NAME = "cashier-demo"


def data_dir_of(given: str | None) -> Path:
    return Path(given or platformdirs.user_data_dir(DEFAULT_DATA_DIR_NAME, appauthor=False)).expanduser()


def prepare_data_dir(given: str | None) -> Path:
    """The data directory, created if missing; a path that cannot be one is a DemoError."""
    data_dir = data_dir_of(given)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except FileExistsError:
        raise DemoError(f"data_dir: {data_dir} is a file, not a directory; give another --data-dir") from None
    except OSError as exc:
        raise DemoError(f"data_dir: cannot use {data_dir} ({exc.strerror or exc}); "
                        "give a directory you may write to with --data-dir") from None
    return data_dir


def _program(name: str, module: str) -> str:
    """How to run one of the shop's commands from here: the installed script next to this
    Python (a venv's bin/) if there is one, else `python -m`."""
    script = Path(sys.executable).with_name(name + (".exe" if os.name == "nt" else ""))
    if script.is_file():
        return str(script)
    return f"{sys.executable} -m {module}"


def look_commands(redis_url: str, database_url: str, data_dir: Path, *, private: bool,
                  headless: bool) -> list[str]:
    """The exact commands that show the demo's shop (the demo uses its own Redis database
    or server, which a bare `cashierctl` would not look at), and how to start over."""
    ctl = f"{_program('cashierctl', 'admin.cashierctl')} --redis-url {redis_url}"
    rs = _program("reconcile-service", "reconcile_service")
    lines = ["look at the demo's shop"
             + (" (its private Redis runs only while the demo does, on a new port each run):"
                if private else ":"),
             f"  {ctl} balance D-1001",
             f"  {ctl} journal D-1001",
             f"  {rs} status --redis-url {redis_url} --database-url {database_url}",
             f"start over: {sys.executable} -m demo --reset --data-dir {data_dir}"
             + ("" if private else f" --redis-url {redis_url}")]
    if private and headless:
        lines.insert(1, "  (run the demo with a display, or with --redis-url of a Redis of yours, to keep it up)")
    return lines


def reset(args) -> int:
    """Delete the demo's shop: its data directory and, on the configured Redis, its database
    if (and only if) it holds the demo's marker key."""
    import shutil

    data_dir = data_dir_of(args.data_dir)
    said = []
    if data_dir.is_dir():
        if not (data_dir / "demo.lock").exists() and any(data_dir.iterdir()):
            raise DemoError(f"data_dir: {data_dir} is not a demo data directory (no demo.lock); "
                            "left alone")
        with DataDirLock(data_dir):          # refuses while a demo runs on it
            pass
        shutil.rmtree(data_dir)
        said.append(f"deleted {data_dir}")
    elif data_dir.exists():
        raise DemoError(f"data_dir: {data_dir} is a file, not a demo data directory")
    said.append(reset_redis(args.redis_url))
    for line in said:
        say(f"reset: {line}")
    return EXIT_OK


def main(argv=None) -> int:
    args = parse_args(argv)
    if not args.timeout_s > 0:
        print("python -m demo: timeout_s: --timeout-s must be a positive number of seconds", file=sys.stderr)
        return EXIT_USAGE
    _stop_on_sigterm()
    try:
        if args.reset:
            return reset(args)
        code = run(args)
    except DemoError as exc:
        print(f"python -m demo: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        known = classify(exc, args.redis_url)
        if known is None:
            raise
        print(f"python -m demo: {known[1]}", file=sys.stderr)
        return known[0]
    except KeyboardInterrupt:
        print("python -m demo: interrupted; everything the demo started has been stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    say("demo stopped cleanly")
    return code
