"""`cashier-terminal` / `python -m desktop`: starts the cashier terminal.

Order of a start: settings (the dialog on first run, or with ``--settings``), UI
language, the local data directory and its log, the engine (which resolves what an
earlier run left unresolved before anything else is sent) and the main window.
``--self-test`` checks the installation without a display and exits 0 or 1 with one
line. Options override the settings for one run; they are meant for installers and
tests (``--data-dir``, ``--config``, ``--redis-url``, ``--terminal-id``, ``--lang``).
``--fullscreen`` (or the setting ui/fullscreen) starts full screen, for kiosk tills.
With no display to show the window on, the terminal says so in one line and exits
with EXIT_NO_DISPLAY (3) instead of letting Qt abort the process (exit 134).
"""
from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import socket
import sys
from pathlib import Path


LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 5
EXIT_NO_DISPLAY = 3
# Qt platforms that need no display server
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "vkkhrdisplay", "eglfs", "linuxfb")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="cashier-terminal", description="Cashier terminal for member-card payments")
    p.add_argument("--self-test", action="store_true", help="check the installation (no display needed) and exit")
    p.add_argument("--settings", action="store_true", help="open the settings dialog before starting")
    p.add_argument("--data-dir", help="local data (outbox, logs); env CASHIER_TERMINAL_DATA_DIR")
    p.add_argument("--config", help="settings INI file instead of the system store; env CASHIER_TERMINAL_CONFIG")
    p.add_argument("--redis-url", help="central Redis for this run (not saved)")
    p.add_argument("--terminal-id", help="terminal id for this run (not saved)")
    p.add_argument("--lang", choices=["system", "en", "zh_CN"], help="UI language for this run")
    p.add_argument("--fullscreen", action="store_true", help="start full screen (kiosk tills); setting ui/fullscreen")
    return p.parse_args(argv)


def _x_display_reachable(display: str) -> bool:
    """Can an X client connect to `display` (':0', ':1.0', 'host:0', 'unix:0')?"""
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit():
        return False
    try:
        if host in ("", "unix"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(2.0)
            try:
                sock.connect(f"/tmp/.X11-unix/X{number}")
            except OSError:     # Linux also listens on the abstract socket
                sock.connect(f"\0/tmp/.X11-unix/X{number}")
        else:
            sock = socket.create_connection((host, 6000 + int(number)), timeout=2.0)
        sock.close()
        return True
    except OSError:
        return False


def display_problem(env=None, platform: str = sys.platform) -> str | None:
    """Why the window cannot be shown here (one sentence), or None. Checked before Qt
    starts, because Qt aborts the process when its platform plugin has no display."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return None             # Windows and macOS always have their own display
    qpa = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip()
    if qpa in HEADLESS_PLATFORMS:
        return None
    wayland = env.get("WAYLAND_DISPLAY", "")
    if qpa.startswith("wayland") or (not qpa and wayland and not env.get("DISPLAY")):
        runtime = env.get("XDG_RUNTIME_DIR", "")
        if wayland and (Path(wayland).is_absolute() or runtime) and \
                Path(runtime, wayland).exists():
            return None
        return "no Wayland display (WAYLAND_DISPLAY is not set or its socket is missing)"
    display = env.get("DISPLAY", "")
    if not display:
        return "no display: DISPLAY is not set (start the terminal in the till's desktop session)"
    if not _x_display_reachable(display):
        return f"no display: the X server at DISPLAY={display} does not answer"
    return None


def setup_logging(data_dir) -> None:
    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(logs / "terminal.log", maxBytes=LOG_MAX_BYTES,
                                                   backupCount=LOG_BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        from .selftest import run
        return run()

    problem = display_problem()
    if problem is not None:
        print(f"cashier-terminal: {problem}. Nothing was started. "
              "(`cashier-terminal --self-test` checks an installation without a display.)", file=sys.stderr)
        return EXIT_NO_DISPLAY

    from PySide6.QtWidgets import QApplication, QDialog

    from . import i18n
    from .engine import Engine
    from .main_window import MainWindow
    from .settings import SettingsDialog, TerminalSettings, data_dir

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("cashier-terminal")
    settings = TerminalSettings(args.config)
    i18n.install(args.lang or settings.language)
    if args.settings or not (settings.complete or (args.redis_url and args.terminal_id)):
        dialog = SettingsDialog(settings, first_run=not settings.complete)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return 1
        i18n.install(args.lang or settings.language)
    directory = data_dir(args.data_dir)
    setup_logging(directory)
    log = logging.getLogger("desktop")
    engine = Engine(args.redis_url or settings.redis_url, args.terminal_id or settings.terminal_id, directory,
                    hold_ttl_s=settings.hold_minutes * 60,
                    read_cache_max_age_s=settings.read_cache_max_age_ms / 1000)
    log.info("terminal %s starting; data in %s", engine.terminal_id, directory)
    window = MainWindow(engine, settings)
    if args.fullscreen or settings.fullscreen:
        window.show_full_screen()
    else:
        window.show_on_screen()
    engine.start()
    code = app.exec()
    engine.close()
    log.info("terminal %s stopped", engine.terminal_id)
    return code


if __name__ == "__main__":
    sys.exit(main())
