"""The description of the machine and software a run measured: CPU model, cores,
RAM, OS, load average, and the versions of Redis, PostgreSQL, Python, redis-py,
hiredis and psycopg, read from the running system (not hard-coded).
"""
from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def ram_gib() -> float:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2 ** 20
    return 0.0


def os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return f"{line.split('=', 1)[1].strip(chr(34))} (kernel {platform.release()})"
    return platform.platform()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe(redis_client=None, pg_dsn: str | None = None) -> dict[str, str]:
    info = {
        "CPU": cpu_model(),
        "Cores (logical)": str(os.cpu_count()),
        "RAM": f"{ram_gib():.1f} GiB",
        "OS": os_name(),
        "Python": platform.python_version(),
        "redis-py": _version("redis"),
        "hiredis": _version("hiredis"),
        "psycopg": _version("psycopg"),
    }
    if redis_client is not None:
        server = redis_client.info("server")
        info["Redis"] = f"{server['redis_version']} (private redis-server, persistence off, noeviction)"
    if pg_dsn:
        try:
            import psycopg
            with psycopg.connect(pg_dsn, connect_timeout=3) as conn:
                version = conn.execute("show server_version").fetchone()[0]
                sync = conn.execute("show synchronous_commit").fetchone()[0]
            info["PostgreSQL"] = f"{version} (machine's server, own database, synchronous_commit={sync})"
        except Exception as exc:  # the DB contenders report their own failure
            info["PostgreSQL"] = f"unavailable ({exc.__class__.__name__})"
    return info


def load_average() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def uptime() -> str:
    """The `uptime` line (time, up, users, load averages), or the load average alone."""
    import subprocess
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip() or load_average()
    except (OSError, subprocess.SubprocessError):
        return load_average()
