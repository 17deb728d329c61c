"""`cashier-terminal` / `python -m desktop`: starts the cashier terminal.

Order of a start: settings (the dialog on first run, or with ``--settings``), UI
language, the local data directory and its log, the engine (which resolves what an
earlier run left unresolved before anything else is sent) and the main window.
``--self-test`` checks the installation without a display and exits 0 or 1 with one
line. Options override the settings for one run; they are meant for installers and
tests (``--data-dir``, ``--config``, ``--gateway-url``, ``--terminal-id``, ``--lang``; the
terminal's credential for such a run comes from ``--token-file`` or the environment
variable CASHIER_TERMINAL_TOKEN, never from the command line, which other users of the PC
can read). The till holds no Redis login: it reaches the ledger only through the shop's
gateways.
``--fullscreen`` (or the setting ui/fullscreen) starts full screen, for kiosk tills;
so does an X display without a window manager (kiosk tills often have none: nothing
would place or size the window, and it would open at its default size in a corner).
The first-run settings dialog shows the server address and terminal id given on the
command line (what this run uses), not the defaults. Started in Chinese (zh_CN) where no
font can draw Chinese, the terminal says so (stderr, its log and a message in English).
With no display to show the window on, the terminal says so in one line and exits
with EXIT_NO_DISPLAY (3) instead of letting Qt abort the process (exit 134). Likewise,
before Qt loads its X11 platform (QT_QPA_PLATFORM xcb, or unset with a DISPLAY), the
system libraries that plugin needs are checked (desktop/xcb_libs.py): one missing, the
terminal names it with its package and the `apt-get install` line, and exits
EXIT_MISSING_LIBRARIES (2).
"""
from __future__ import annotations

import argparse
import ctypes
import logging
import logging.handlers
import os
import socket
import sys
from pathlib import Path


LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 5
EXIT_NO_DISPLAY = 3
EXIT_MISSING_LIBRARIES = 2
TOKEN_ENV = "CASHIER_TERMINAL_TOKEN"
# Qt platforms that need no display server
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "vkkhrdisplay", "eglfs", "linuxfb")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="cashier-terminal", description="Cashier terminal for member-card payments")
    p.add_argument("--self-test", action="store_true", help="check the installation (no display needed) and exit")
    p.add_argument("--settings", action="store_true", help="open the settings dialog before starting")
    p.add_argument("--data-dir", help="local data (outbox, logs); env CASHIER_TERMINAL_DATA_DIR")
    p.add_argument("--config", help="settings INI file instead of the system store; env CASHIER_TERMINAL_CONFIG")
    p.add_argument("--gateway-url", action="append",
                   help="a ledger gateway for this run (repeat for a second one; not saved)")
    p.add_argument("--token-file", help="file holding this terminal's credential for this run "
                                        f"(or env {TOKEN_ENV}; not saved)")
    p.add_argument("--ca-file", help="the shop's CA certificate for this run (not saved)")
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


class _XcbCookie(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint)]


class _XcbScreenIterator(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(ctypes.c_uint32)), ("rem", ctypes.c_int), ("index", ctypes.c_int)]


class _XcbInternAtomReply(ctypes.Structure):
    _fields_ = [("response_type", ctypes.c_uint8), ("pad0", ctypes.c_uint8), ("sequence", ctypes.c_uint16),
                ("length", ctypes.c_uint32), ("atom", ctypes.c_uint32)]


XCB_ATOM_WINDOW = 33


def x_window_manager_running(display: str | None = None) -> bool | None:
    """Does an (EWMH) window manager run on the X display? True/False, None when it cannot
    be told (no libxcb, no connection). A window manager that follows EWMH (all current
    ones) sets _NET_SUPPORTING_WM_CHECK on the root window; with none, it is absent."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    xcb.xcb_get_setup.restype = ctypes.c_void_p
    xcb.xcb_get_setup.argtypes = [ctypes.c_void_p]
    xcb.xcb_setup_roots_iterator.restype = _XcbScreenIterator
    xcb.xcb_setup_roots_iterator.argtypes = [ctypes.c_void_p]
    xcb.xcb_screen_next.argtypes = [ctypes.POINTER(_XcbScreenIterator)]
    xcb.xcb_intern_atom.restype = _XcbCookie
    xcb.xcb_intern_atom.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_char_p]
    xcb.xcb_intern_atom_reply.restype = ctypes.POINTER(_XcbInternAtomReply)
    xcb.xcb_intern_atom_reply.argtypes = [ctypes.c_void_p, _XcbCookie, ctypes.c_void_p]
    xcb.xcb_get_property.restype = _XcbCookie
    xcb.xcb_get_property.argtypes = [ctypes.c_void_p, ctypes.c_uint8] + [ctypes.c_uint32] * 5
    xcb.xcb_get_property_reply.restype = ctypes.c_void_p
    xcb.xcb_get_property_reply.argtypes = [ctypes.c_void_p, _XcbCookie, ctypes.c_void_p]
    xcb.xcb_get_property_value_length.restype = ctypes.c_int
    xcb.xcb_get_property_value_length.argtypes = [ctypes.c_void_p]
    libc.free.argtypes = [ctypes.c_void_p]
    screen_number = ctypes.c_int(0)
    conn = xcb.xcb_connect(display.encode() if display else None, ctypes.byref(screen_number))
    try:
        if not conn or xcb.xcb_connection_has_error(conn):
            return None
        roots = xcb.xcb_setup_roots_iterator(xcb.xcb_get_setup(conn))
        for _ in range(screen_number.value):
            xcb.xcb_screen_next(ctypes.byref(roots))
        root_window = roots.data[0]            # xcb_screen_t starts with its root window
        name = b"_NET_SUPPORTING_WM_CHECK"
        atom_reply = xcb.xcb_intern_atom_reply(conn, xcb.xcb_intern_atom(conn, 1, len(name), name), None)
        if not atom_reply:
            return None
        atom = atom_reply.contents.atom
        libc.free(atom_reply)
        if atom == 0:                          # only_if_exists: no client ever named it
            return False
        reply = xcb.xcb_get_property_reply(
            conn, xcb.xcb_get_property(conn, 0, root_window, atom, XCB_ATOM_WINDOW, 0, 1), None)
        if not reply:
            return None
        length = xcb.xcb_get_property_value_length(reply)
        libc.free(reply)
        return length > 0
    finally:
        if conn:
            xcb.xcb_disconnect(conn)


def should_fill_screen(args: argparse.Namespace, settings, platform_name: str, env=None) -> bool:
    """Full screen: asked for (--fullscreen, ui/fullscreen), or an X display with no window
    manager (nothing else would size the window to the till's screen)."""
    if args.fullscreen or settings.fullscreen:
        return True
    env = os.environ if env is None else env
    return platform_name == "xcb" and x_window_manager_running(env.get("DISPLAY")) is False


def chinese_font_warning(lang: str):
    """Started in zh_CN where Chinese cannot be drawn: say so (stderr, log, a message in
    English, which the Latin font can draw). Returns the message box shown, or None."""
    if lang != "zh_CN":
        return None
    from . import fonts
    problem = fonts.chinese_problem()
    if problem is None:
        return None
    print(f"cashier-terminal: {problem}", file=sys.stderr, flush=True)
    logging.getLogger("desktop").warning("%s", problem)
    from PySide6.QtWidgets import QMessageBox
    box = QMessageBox(QMessageBox.Icon.Warning, "Cashier terminal: no Chinese font", problem[0].upper() + problem[1:])
    box.setObjectName("chineseFontWarning")
    box.setModal(False)
    box.show()
    return box


def run_token(args) -> str:
    """This run's terminal credential: --token-file's first line, else CASHIER_TERMINAL_TOKEN
    ('' : the stored one)."""
    if args.token_file:
        try:
            return Path(args.token_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, IndexError, UnicodeDecodeError) as exc:
            raise SystemExit(f"cashier-terminal: --token-file {args.token_file}: cannot be read "
                             f"({getattr(exc, 'strerror', None) or type(exc).__name__})") from None
    return os.environ.get(TOKEN_ENV, "").strip()


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

    # first the libraries (installed once), then the display (it may just not be up yet)
    from .xcb_libs import xcb_problem
    missing = xcb_problem()
    if missing is not None:
        print(f"cashier-terminal: {missing}\nNothing was started.", file=sys.stderr)
        return EXIT_MISSING_LIBRARIES
    problem = display_problem()
    if problem is not None:
        print(f"cashier-terminal: {problem}. Nothing was started. "
              "(`cashier-terminal --self-test` checks an installation without a display.)", file=sys.stderr)
        return EXIT_NO_DISPLAY

    from PySide6.QtWidgets import QApplication, QDialog

    from . import i18n
    from .engine import Engine
    from .main_window import MainWindow
    from .settings import SettingsDialog, TerminalSettings, data_dir, gateway_client

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("cashier-terminal")
    settings = TerminalSettings(args.config)
    font_warning = chinese_font_warning(i18n.install(args.lang or settings.language))
    token = run_token(args)
    if args.settings or not (settings.complete or (args.gateway_url and args.terminal_id and token)):
        # what this run uses: the command line's values before the stored ones
        in_use = {"gateway_urls": args.gateway_url or settings.gateway_urls,
                  "terminal_id": args.terminal_id or settings.terminal_id}
        dialog = SettingsDialog(settings, first_run=not settings.complete, in_use=in_use)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return 1
        lang = i18n.install(args.lang or settings.language)
        font_warning = font_warning or chinese_font_warning(lang)
    directory = data_dir(args.data_dir)
    setup_logging(directory)
    log = logging.getLogger("desktop")
    ledger = gateway_client(args.gateway_url or settings.gateway_urls, token or settings.token,
                            args.ca_file or settings.ca_file)
    engine = Engine(ledger, args.terminal_id or settings.terminal_id, directory,
                    hold_ttl_s=settings.hold_minutes * 60)
    log.info("terminal %s starting; data in %s", engine.terminal_id, directory)
    window = MainWindow(engine, settings)
    if should_fill_screen(args, settings, app.platformName()):
        window.show_full_screen()
    else:
        window.show_on_screen()
    if font_warning is not None:
        font_warning.raise_()
    engine.start()
    code = app.exec()
    engine.close()
    log.info("terminal %s stopped", engine.terminal_id)
    return code


if __name__ == "__main__":
    sys.exit(main())
