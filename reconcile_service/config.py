"""Settings of the reconcile service and where they come from.

Precedence, highest first: command-line flags, environment (`CASHIER_REDIS_URL`,
`CASHIER_DATABASE_URL`), the TOML file named by `--config` (or `CASHIER_RECONCILE_CONFIG`),
then the defaults below. Every bad value raises `ConfigError` with a message that names
the setting and the reason, so the CLI can print it and exit non-zero without a traceback.

Each setting is declared once, in `SETTINGS`: its type, default, bounds, command-line flag,
environment variable and what the docs say of its default. The `Settings` dataclass, the
validation, the CLI's flags (reconcile_service/cli.py) and the settings table of
docs/reconcile.md and docs/operations.md (`python -m reconcile_service.config --doc-table`;
tests/test_docs.py checks the pages hold it) are all made from that one tuple.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, make_dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import platformdirs

from core.errors import ConfigError  # noqa: F401  (one hierarchy; importable from here as before)

APP_NAME = "cashier-ledger"
ENV_REDIS_URL = "CASHIER_REDIS_URL"
ENV_DATABASE_URL = "CASHIER_DATABASE_URL"
ENV_CONFIG = "CASHIER_RECONCILE_CONFIG"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
_MAX_BATCH = 50_000  # one transaction stays short; SQLite executemany has no parameter limit


def default_database_url() -> str:
    """The embedded default: an SQLite file in the platform's per-user data directory."""
    directory = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return f"sqlite:///{directory / 'reconcile.sqlite3'}"


def _check_zone(value: str, where: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: {value!r} is not a time zone name (e.g. Asia/Shanghai)") from None


def _check_port(number: int, where: str) -> None:
    if number > 65535:
        raise ConfigError(f"{where}: must be a TCP port 0..65535, got {number}")


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: a field of `Settings`, a TOML key, maybe a flag and an environment variable."""
    name: str
    type: type
    default: Any
    help: str | None = None          # the flag's help; None: no flag (TOML only)
    minimum: float | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    upper_case: bool = False         # given in any case, kept upper-case (log levels)
    check: Callable[[Any, str], None] | None = None   # a last check: (value, "name (from source)")
    env: str | None = None
    doc_default: str | None = None   # the docs' default column when the value alone says too little
    doc_note: str = ""               # appended to the docs' default column, in parentheses
    doc_flag: str | None = None      # the docs' flag column for a setting without a flag

    @property
    def flag(self) -> str | None:
        return None if self.help is None else "--" + self.name.replace("_", "-")


# In the order of `--help` and of the docs' table.
SETTINGS: tuple[Setting, ...] = (
    Setting("redis_url", str, DEFAULT_REDIS_URL, "ledger Redis (env CASHIER_REDIS_URL)", env=ENV_REDIS_URL,
            doc_note="also `rediss://`, `redis+cluster://`"),
    Setting("database_url", str, "",                                   # "" -> default_database_url()
            "database of record (env CASHIER_DATABASE_URL; default: SQLite file in the user data directory)",
            env=ENV_DATABASE_URL,
            doc_default="SQLite `reconcile.sqlite3` in the user data dir (platformdirs, app `cashier-ledger`)"),
    Setting("consumer_name", str, "", "this instance's consumer name (default host-pid)",  # "" -> <hostname>-<pid>
            doc_default="`<hostname>-<pid>`"),
    # journal entries per database transaction (one statement per table)
    Setting("batch_size", int, 10_000, "entries per database transaction", minimum=1, maximum=_MAX_BATCH),
    # XREADGROUP BLOCK when every partition is idle
    Setting("block_ms", int, 1000, "how long an idle read waits for new entries", minimum=0),
    # pending this long -> its consumer is presumed dead
    Setting("claim_idle_ms", int, 30_000, "claim entries pending this long at another consumer", minimum=0),
    Setting("reconcile_interval_s", float, 300.0, "seconds between the daemon's passes", minimum=0.0),
    Setting("trim_interval_s", float, 60.0, "seconds between trims of applied journal entries", minimum=0.0),
    # keep applied entries this long (recent-history reads)
    Setting("trim_keep_s", float, 3600.0, "keep applied journal entries this long", minimum=0.0),
    Setting("hold_expiry_interval_s", float, 10.0, "seconds between journaling the release of expired holds",
            minimum=0.0, doc_note="0 = off"),
    Setting("restore_on_start", bool, True, "restore a Redis that lost everything before consuming"),
    Setting("metrics_host", str, "127.0.0.1", "address of the /metrics endpoint (default 127.0.0.1)"),
    Setting("metrics_port", int, 9464, "Prometheus /metrics and /healthz port of the daemon "
            "(default 9464; 0 = off; `run --once` opens none)", minimum=0, check=_check_port,
            doc_note="0 = off; `run --once` opens none"),
    # the back-office page: loopback unless you mean it; port 0 = the daemon serves none
    Setting("backoffice_host", str, "127.0.0.1", "address of the back-office page (default 127.0.0.1)"),
    Setting("backoffice_port", int, 0, "port of the back-office page (0 = off, the default)", minimum=0,
            check=_check_port, doc_note="off"),
    # waitress speaks no TLS: anything but loopback would carry passwords in clear
    Setting("insecure_http", bool, False, "serve the back-office page over plain HTTP on an address "
            "other than loopback (passwords cross the network in clear; default: refused)"),
    Setting("retry_deadline_s", float, 0.0, "give up when a server is away this long (0: daemon never, one-shot 60 s)",
            minimum=0.0, doc_note="the daemon never gives up; one-shot commands 60 s"),
    Setting("first_backoff_s", float, 0.5, minimum=0.0),
    Setting("max_backoff_s", float, 30.0, minimum=0.0),
    Setting("log_level", str, "INFO", "DEBUG, INFO, WARNING or ERROR (default INFO)",
            choices=("DEBUG", "INFO", "WARNING", "ERROR"), upper_case=True),
    Setting("log_format", str, "json", "json (default, for journald and log shippers) or text",
            choices=("json", "text")),
    # reports and the back-office page show times in it
    Setting("shop_timezone", str, "Asia/Shanghai", check=_check_zone, doc_note="reports and the page",
            doc_flag="TOML only (`report --tz` overrides it for one report)"),
)
SETTING_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
SETTING_NAMES = tuple(s.name for s in SETTINGS)
FLAG_SETTINGS = tuple(s for s in SETTINGS if s.flag)     # the ones the CLI has a flag for


def _resolved_database_url(self) -> str:
    return self.database_url or default_database_url()


Settings = make_dataclass(
    "Settings", [(s.name, s.type, field(default=s.default)) for s in SETTINGS],
    namespace={"resolved_database_url": _resolved_database_url,
               "__doc__": "The reconcile service's settings (one field per entry of SETTINGS)."},
    frozen=True, slots=True)
Settings.__module__ = __name__     # for pickle and reprs (make_dataclass's module= is Python 3.12+)


def _coerce(name: str, value: Any, source: str) -> Any:
    setting = SETTING_BY_NAME[name]
    kind, low = setting.type, setting.minimum
    where = f"{name} (from {source})"
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.lower() in ("1", "true", "yes", "on")
        raise ConfigError(f"{where}: {value!r} is not true or false")
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: must be a string, got {value!r}")
        if setting.upper_case:
            value = value.upper()
        if setting.choices and value not in setting.choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(setting.choices)}")
        if setting.check:
            setting.check(value, where)
        return value
    if isinstance(value, bool):
        raise ConfigError(f"{where}: must be a number, got {value!r}")
    try:
        number = kind(value)
        if kind is int and isinstance(value, float) and value != int(value):
            raise ValueError
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: must be a {'whole ' if kind is int else ''}number, got {value!r}") from None
    if low is not None and number < low:
        raise ConfigError(f"{where}: must be at least {low:g}, got {number}")
    if setting.maximum is not None and number > setting.maximum:
        raise ConfigError(f"{where}: must be at most {setting.maximum}, got {number}")
    if setting.check:
        setting.check(number, where)
    return number


def read_toml(path: str | os.PathLike) -> dict[str, Any]:
    file = Path(path)
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {file}: does not exist") from None
    except PermissionError:
        raise ConfigError(f"config file {file}: not readable (permission denied)") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {file}: is a directory, not a TOML file") from None
    except OSError as exc:
        raise ConfigError(f"config file {file}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {file}: not valid TOML (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {file}: not valid TOML ({exc})") from None
    # Settings may sit at the top level or under [reconcile_service].
    section = data.pop("reconcile_service", {})
    if not isinstance(section, dict):
        raise ConfigError(f"config file {file}: [reconcile_service] must be a table")
    data.update(section)
    unknown = sorted(set(data) - set(SETTING_BY_NAME))
    if unknown:
        raise ConfigError(f"config file {file}: unknown setting(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(SETTING_BY_NAME))}")
    return data


def load_settings(flags: Mapping[str, Any] | None = None, *, config_path: str | None = None,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Merge defaults < TOML file < environment < flags (None flags are 'not given')."""
    environ = os.environ if environ is None else environ
    settings = Settings()
    path = config_path or environ.get(ENV_CONFIG)
    layers: list[tuple[str, Mapping[str, Any]]] = []
    if path:
        layers.append((f"config file {path}", read_toml(path)))
    env_layer = {s.name: environ[s.env] for s in SETTINGS if s.env and environ.get(s.env)}
    layers.append(("environment", env_layer))
    layers.append(("command line", {k: v for k, v in (flags or {}).items() if v is not None}))
    for source, layer in layers:
        values = {name: _coerce(name, value, source) for name, value in layer.items()}
        settings = replace(settings, **values)
    _check_urls(settings)
    return settings


def _check_urls(settings: Settings) -> None:
    from urllib.parse import urlsplit

    from core.connection import parse_redis_url
    from core.errors import InvalidRequest
    try:        # core's one parser: the same refusal (naming redis_url) as every other program
        parse_redis_url(settings.redis_url)
    except InvalidRequest as exc:
        raise ConfigError(str(exc)) from None
    if settings.database_url:
        db_scheme = urlsplit(settings.database_url).scheme
        if not (db_scheme.startswith("postgresql") or db_scheme.startswith("sqlite")):
            raise ConfigError(f"database_url: scheme {db_scheme!r} is not supported; use "
                              "postgresql+psycopg://user:pass@host/db or sqlite:///path/file.sqlite3")
        if db_scheme in ("postgresql", "postgres"):
            raise ConfigError("database_url: name the driver: postgresql+psycopg://... (psycopg 3)")


def _doc_default(setting: Setting) -> str:
    if setting.doc_default is not None:
        text = setting.doc_default
    elif setting.type is bool:
        text = "true" if setting.default else "false"
    elif setting.type is str:
        text = f"`{setting.default}`"
    else:
        text = f"{setting.default:g}"
    notes = []
    if setting.maximum is not None:
        notes.append(f"{setting.minimum:g}..{setting.maximum}")
    if setting.choices:
        notes.append(", ".join(f"`{c}`" for c in setting.choices))
    if setting.doc_note:
        notes.append(setting.doc_note)
    return f"{text} ({'; '.join(notes)})" if notes else text


def markdown_table() -> str:
    """The settings table of docs/reconcile.md and docs/operations.md (tests/test_docs.py
    checks that both pages hold this text; print it with --doc-table)."""
    rows = ["| setting | flag | environment | default |", "|---|---|---|---|"]
    for s in SETTINGS:
        if s.type is bool and s.flag:
            flag = f"`--[no-]{s.flag[2:]}`"
        else:
            flag = f"`{s.flag}`" if s.flag else (s.doc_flag or "TOML only")
        env = f"`{s.env}`" if s.env else ""
        rows.append(f"| `{s.name}` | {flag} | {env} | {_doc_default(s)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--doc-table"]:
        sys.exit("usage: python -m reconcile_service.config --doc-table   (prints the docs' settings table)")
    print(markdown_table())
