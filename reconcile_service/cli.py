"""Command line of the reconcile service (`reconcile-service`, entry point `main`).

Subcommands: run (the daemon; --once drains, reconciles once and exits), migrate,
reconcile, restore, status (--json), self-test (offline check of the installation);
--version. Exit codes (`core.exit_codes`, the same for every program of the shop;
printed by `--help`): 0 fine; 1 a discrepancy is open that was not repaired; 2 a
configuration or usage mistake (including a database that does not exist or a wrong
password: said at once, not retried); 3 Redis or the database stayed away past the
retry deadline; 4 the operation was refused (schema not migrated, nothing to restore,
Redis holds no ledger, unsafe Redis); 130 interrupted. Operator mistakes get one clear
line on stderr naming the setting, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time

from core.exit_codes import (EXIT_BAD_INPUT, EXIT_DECLINED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED,
                             EXIT_UNAVAILABLE, classify, epilog)

from .config import FLAG_SETTINGS, ConfigError, load_settings
from .logs import setup_logging

log = logging.getLogger("reconcile_service")

EXIT_DISCREPANCY, EXIT_CONFIG = EXIT_DECLINED, EXIT_BAD_INPUT


def _common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("configuration (flags > environment > --config file > defaults)")
    g.add_argument("--config", metavar="FILE", help="TOML file of settings (see docs/reconcile.md)")
    for setting in FLAG_SETTINGS:         # one flag per setting that has one, from config.SETTINGS
        if setting.type is bool:
            g.add_argument(setting.flag, action=argparse.BooleanOptionalAction, default=None, help=setting.help)
        else:
            g.add_argument(setting.flag, type=None if setting.type is str else setting.type, help=setting.help)
    return p


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    from core import __version__
    parser = argparse.ArgumentParser(prog="reconcile-service", description=__doc__.split("\n\n")[0],
                                     epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"reconcile-service {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", parents=[common], help="the daemon")
    run.add_argument("--once", action="store_true", help="drain, reconcile once and exit")
    sub.add_parser("migrate", parents=[common], help="create or upgrade the database tables")
    rec = sub.add_parser("reconcile", parents=[common], help="one reconciliation pass")
    rec.add_argument("--no-drain", action="store_true",
                     help="do not apply pending journal entries first (in-flight accounts are skipped)")
    rec.add_argument("--json", action="store_true", help="print the pass report as JSON")
    res = sub.add_parser("restore", parents=[common], help="load lost balances from the database into Redis")
    res.add_argument("--json", action="store_true", help="print the restore report as JSON")
    st = sub.add_parser("status", parents=[common], help="lag per partition, last pass, open discrepancies")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    sub.add_parser("self-test", help="check the installation offline (Lua scripts, migrations on a "
                                     "scratch SQLite database, psycopg); needs no server")
    from .reports.commands import add_parsers as add_report_parsers
    add_report_parsers(sub, common)        # report ..., resolve, backoffice-user (database only)
    return parser


_SETTING_FLAGS = tuple(setting.name for setting in FLAG_SETTINGS)


class Progress:
    """A one-line progress counter on stderr, for people at a terminal only."""

    def __init__(self, label: str):
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.last_s = 0.0

    def __call__(self, count: int) -> None:
        now = time.monotonic()
        if self.enabled and now - self.last_s >= 0.5:
            self.last_s = now
            print(f"\r{self.label}: {count} accounts", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.enabled and self.last_s:
            print(file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "self-test":
        from .selftest import run_selftest
        return run_selftest()
    try:
        flags = {name: getattr(args, name) for name in _SETTING_FLAGS}
        settings = load_settings(flags, config_path=args.config)
    except ConfigError as exc:
        print(f"reconcile-service: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    setup_logging(settings.log_level, settings.log_format)
    try:
        from .reports import commands as reports
        if args.command in reports.COMMANDS:
            return reports.run_command(args, settings)
        return _dispatch(args, settings)
    except ConfigError as exc:
        print(f"reconcile-service: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("reconcile-service: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        # what core and redis-py raise for a wrong URL or an unusable Redis (core's
        # InvalidRequest / ConfigError naming redis_url, ...): one line, the shop's codes
        known = classify(exc, settings.redis_url)
        if known is None:
            raise
        code, message = known
        kind = "configuration error: " if code == EXIT_BAD_INPUT else ""
        print(f"reconcile-service: {kind}{message}", file=sys.stderr)
        return code


def _dispatch(args, settings) -> int:
    # imported here, not at the top: `report` (an accountant's command, timed by the
    # bench) needs none of the daemon's modules (alembic, the journal, restore)
    from core import LedgerNotInitialized, UnsafeRedisConfig
    from core.connection import redacted

    from .db import SchemaNotCurrent, migrate
    from .metrics import MetricsServer
    from .restore import RestoreRefused
    from .service import Service, Stopped, Unavailable

    # `status` only reads: it must not create an SQLite file (or its folder) that is not there
    service = Service(settings, create_database=args.command != "status")
    server = web = None
    try:
        if args.command == "migrate":
            before, after = service.with_retry(lambda: migrate(service.engine), "migrating",
                                               service.one_shot_deadline_s())
            print(f"database {service.describe()['database']}: schema "
                  f"{'already at' if before == after else f'{before} ->'} {after}")
            return EXIT_OK
        if args.command == "status":
            settings_deadline = min(service.one_shot_deadline_s(), 10.0)
            service.with_retry(lambda: service.prepare_database(auto_migrate=False), "reading status",
                               settings_deadline)
            info = service.with_retry(service.status, "reading status", settings_deadline)
            _print_status(info, args.json)
            return EXIT_DISCREPANCY if info["open_discrepancies"] else EXIT_OK
        if args.command == "run":
            service.install_signal_handlers()
            # a one-shot run ends before anyone could scrape it: it opens no metrics port
            if settings.metrics_port and not args.once:
                try:
                    server = MetricsServer(service.metrics, settings.metrics_host, settings.metrics_port).start()
                except OSError as exc:
                    raise ConfigError(f"metrics_port: cannot listen on {settings.metrics_host}:"
                                      f"{settings.metrics_port} ({exc.strerror or exc}); give another "
                                      "--metrics-port, or --metrics-port 0 to run without the "
                                      "metrics endpoint") from None
            if settings.backoffice_port and not args.once:
                from .web.server import start_backoffice
                web = start_backoffice(service.engine, settings)
            return service.run_once() if args.once else service.run_daemon()
        deadline = service.one_shot_deadline_s()
        service.with_retry(lambda: service.prepare_database(auto_migrate=True), "migrating", deadline)
        if args.command == "restore":
            service.install_signal_handlers()
            progress = Progress("restore")
            report = service.with_retry(lambda: service.run_restore(progress=progress), "restoring", deadline)
            progress.done()
            if args.json:
                print(json.dumps(report.as_dict(), indent=2))
            else:
                print(f"restore: {report.accounts_restored} account(s) restored, {report.accounts_present} "
                      f"already in Redis (left untouched), {report.entries_drained} journal entries "
                      f"drained first")
            return EXIT_OK
        if args.command == "reconcile":
            service.with_retry(lambda: service.ready(restore_if_empty=False), "connecting", deadline)
            progress = Progress("reconcile")
            report = service.with_retry(lambda: service.reconcile_cycle(drain=not args.no_drain,
                                                                        progress=progress),
                                        "reconciling", deadline)
            progress.done()
            if args.json:
                print(json.dumps(report.as_dict(), indent=2))
            else:
                print(f"pass {report.pass_id}: {report.accounts_checked} accounts compared, "
                      f"{report.accounts_in_flight} in flight, {len(report.findings)} discrepancies found, "
                      f"{len(report.repairs)} repaired, {report.open_discrepancies} open")
                for f in report.findings:
                    print(f"  {f.kind} {f.account_id}: {f.cause}")
            return EXIT_OK if report.clean else EXIT_DISCREPANCY
        raise AssertionError(args.command)
    except Unavailable as exc:
        print(f"reconcile-service: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except Stopped:
        return EXIT_OK
    except SchemaNotCurrent as exc:
        print(f"reconcile-service: database_url: {redacted(service.database_url)}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except (RestoreRefused, UnsafeRedisConfig, LedgerNotInitialized) as exc:
        code, message = classify(exc, settings.redis_url) or (EXIT_REFUSED, str(exc))
        print(f"reconcile-service: {message}", file=sys.stderr)
        return code
    finally:
        if server:
            server.close()
        if web:
            web.close()
        service.close()


def _print_status(info: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(info, indent=2, default=str))
        return
    print(f"redis     {info['redis']}")
    print(f"database  {info['database']}")
    if info.get("redis_error"):
        print(f"redis error: {info['redis_error']}")
    for p in info["partitions"]:
        print(f"partition {p['partition']:>3}: unapplied {p['unapplied']} (new {p['lag']}, pending "
              f"{p['pending']}), stream {p['stream_length']} entries, applied {p['db_entries_applied']}, "
              f"last batch {p['db_last_batch_at'] or '-'}")
    lp = info["last_pass"]
    if lp:
        print(f"last pass {lp['id']} {lp['outcome']} at {lp['finished_at']}: {lp['accounts_checked']} compared, "
              f"{lp['discrepancies_found']} found, {lp['repairs_made']} repaired")
    else:
        print("last pass: none yet")
    holds = info.get("holds") or {}
    print(f"active holds: {holds.get('active_count', 0)} holding {holds.get('active_minor', 0)} minor units "
          f"on {holds.get('accounts', 0)} account(s); {holds.get('expired_unreleased', 0)} expired, "
          "release not journaled yet")
    for h in holds.get("by_account", []):
        print(f"  {h['account_id']}: {h['count']} active hold(s), {h['sum_minor']} minor units")
    print(f"open discrepancies: {info['open_discrepancies']}")
    for d in info["discrepancies"]:
        print(f"  #{d['id']} {d['kind']} {d['account_id'] or ''} {d['txn_id'] or ''}: {d['cause']}")


if __name__ == "__main__":
    sys.exit(main())
