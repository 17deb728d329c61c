"""Settings of the reconcile service and where they come from.

Precedence, highest first: command-line flags, environment (`CASHIER_REDIS_URL`,
`CASHIER_DATABASE_URL`), the TOML file named by `--config` (or `CASHIER_RECONCILE_CONFIG`),
then the defaults below. Every bad value raises `ConfigError` with a message that names
the setting and the reason, so the CLI can print it and exit non-zero without a traceback.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping

import platformdirs

APP_NAME = "cashier-ledger"
ENV_REDIS_URL = "CASHIER_REDIS_URL"
ENV_DATABASE_URL = "CASHIER_DATABASE_URL"
ENV_CONFIG = "CASHIER_RECONCILE_CONFIG"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class ConfigError(Exception):
    """A setting is missing or wrong; the message says which one and why."""


def default_database_url() -> str:
    """The embedded default: an SQLite file in the platform's per-user data directory."""
    directory = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return f"sqlite:///{directory / 'reconcile.sqlite3'}"


@dataclass(frozen=True, slots=True)
class Settings:
    redis_url: str = DEFAULT_REDIS_URL
    database_url: str = ""                 # "" -> default_database_url()
    consumer_name: str = ""                # "" -> <hostname>-<pid>
    batch_size: int = 10_000               # journal entries per database transaction (one statement per table)
    block_ms: int = 1000                   # XREADGROUP BLOCK when every partition is idle
    claim_idle_ms: int = 30_000            # pending this long -> its consumer is presumed dead
    reconcile_interval_s: float = 300.0    # the daemon's reconciliation passes
    trim_interval_s: float = 60.0
    trim_keep_s: float = 3600.0            # keep applied entries this long (recent-history reads)
    hold_expiry_interval_s: float = 10.0   # journal the release of expired holds this often
    restore_on_start: bool = True          # the daemon restores lost accounts before consuming
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9464               # 0 = no HTTP endpoint
    retry_deadline_s: float = 0.0          # give up when a server is away this long; 0 = never
    first_backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    log_level: str = "INFO"
    log_format: str = "json"               # json | text
    shop_timezone: str = "Asia/Shanghai"   # reports and the back-office page show times in it
    backoffice_host: str = "127.0.0.1"     # the back-office page (loopback unless you mean it)
    backoffice_port: int = 0               # 0 = the daemon serves no back-office page

    def resolved_database_url(self) -> str:
        return self.database_url or default_database_url()


# setting -> (type, lower bound or None)
_TYPES: dict[str, tuple[type, float | None]] = {
    "redis_url": (str, None), "database_url": (str, None), "consumer_name": (str, None),
    "batch_size": (int, 1), "block_ms": (int, 0), "claim_idle_ms": (int, 0),
    "reconcile_interval_s": (float, 0.0), "trim_interval_s": (float, 0.0),
    "trim_keep_s": (float, 0.0), "hold_expiry_interval_s": (float, 0.0), "restore_on_start": (bool, None), "metrics_host": (str, None),
    "metrics_port": (int, 0), "retry_deadline_s": (float, 0.0), "first_backoff_s": (float, 0.0),
    "max_backoff_s": (float, 0.0), "log_level": (str, None), "log_format": (str, None),
    "shop_timezone": (str, None), "backoffice_host": (str, None), "backoffice_port": (int, 0),
}
_CHOICES = {"log_format": ("json", "text"),
            "log_level": ("DEBUG", "INFO", "WARNING", "ERROR")}
_MAX_BATCH = 50_000  # one transaction stays short; SQLite executemany has no parameter limit


def _coerce(name: str, value: Any, source: str) -> Any:
    kind, low = _TYPES[name]
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
        if name == "log_level":
            value = value.upper()
        if name in _CHOICES and value not in _CHOICES[name]:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(_CHOICES[name])}")
        if name == "shop_timezone":
            _check_zone(value, where)
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
    if name == "batch_size" and number > _MAX_BATCH:
        raise ConfigError(f"{where}: must be at most {_MAX_BATCH}, got {number}")
    if name in ("metrics_port", "backoffice_port") and number > 65535:
        raise ConfigError(f"{where}: must be a TCP port 0..65535, got {number}")
    return number


def _check_zone(value: str, where: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: {value!r} is not a time zone name (e.g. Asia/Shanghai)") from None


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
    unknown = sorted(set(data) - set(_TYPES))
    if unknown:
        raise ConfigError(f"config file {file}: unknown setting(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(_TYPES))}")
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
    env_layer = {}
    if environ.get(ENV_REDIS_URL):
        env_layer["redis_url"] = environ[ENV_REDIS_URL]
    if environ.get(ENV_DATABASE_URL):
        env_layer["database_url"] = environ[ENV_DATABASE_URL]
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


SETTING_NAMES = tuple(f.name for f in fields(Settings))
