"""Serving the back-office page from the daemon: waitress (a production WSGI server) on
its own port, in a background thread, bound to 127.0.0.1 unless `backoffice_host` says
otherwise; another thread reads the charts' sums once at start (app.py `warm`), so their
first view is quick too. `BackofficeServer(...).start()` / `.close()`."""
from __future__ import annotations

import ipaddress
import logging
import threading
import time

from waitress.server import create_server

from ..reports.book import shop_zone
from .app import create_app

log = logging.getLogger(__name__)
WARM_ATTEMPTS, WARM_RETRY_S = 24, 5.0      # the charts' first read: tried for about two minutes


class BackofficeServer:
    def __init__(self, engine, host: str, port: int, timezone_name: str, threads: int = 4,
                 redis_url: str | None = None):
        self.app = create_app(engine, shop_zone(timezone_name), redis_url=redis_url)
        self.server = create_server(self.app, host=host, port=port, threads=threads, ident="backoffice",
                                    clear_untrusted_proxy_headers=True)
        self.port = self.server.effective_port
        self.host = host
        self.thread = threading.Thread(target=self._serve, name="backoffice-http", daemon=True)
        self.warmed = threading.Event()         # set when the charts' sums were read (or could not be)
        self.closing = threading.Event()
        self.warm_s: float | None = None

    def _serve(self) -> None:
        try:
            self.server.run()
        except OSError:          # closed under it at shutdown
            pass

    def start(self) -> "BackofficeServer":
        self.thread.start()
        log.info("back-office page listening", extra={"host": self.host, "port": self.port})
        threading.Thread(target=self._warm, name="backoffice-warm", daemon=True).start()
        return self

    def _warm(self, attempts: int = WARM_ATTEMPTS, every_s: float = WARM_RETRY_S) -> None:
        """The charts' sums read once in the background (app.py `warm`). The daemon may
        still be migrating or waiting for the database: tried again every `every_s`; if
        it never works the first request reads them instead (nothing depends on it)."""
        try:
            for attempt in range(attempts):
                started = time.perf_counter()
                try:
                    self.app.extensions["backoffice_warm"]()
                except Exception as exc:      # noqa: BLE001
                    if attempt == attempts - 1:
                        log.warning("back-office charts not prepared in advance", extra={"error": str(exc)[:200]})
                    elif self.closing.wait(every_s):
                        return
                    continue
                self.warm_s = time.perf_counter() - started
                log.info("back-office charts ready", extra={"seconds": round(self.warm_s, 2)})
                return
        finally:
            self.warmed.set()

    def close(self) -> None:
        self.closing.set()
        self.server.close()
        self.server.task_dispatcher.shutdown()
        if self.thread.ident is not None:        # started
            self.thread.join(timeout=5)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def start_backoffice(engine, settings) -> BackofficeServer:
    """The daemon's back-office page per the settings; a port that cannot be bound is a
    configuration error naming `backoffice_port`. The page speaks plain HTTP, so an
    address other than loopback is refused unless `insecure_http` says so: put a TLS
    proxy on this PC in front of 127.0.0.1 instead."""
    from ..config import ConfigError
    if not is_loopback(settings.backoffice_host) and not settings.insecure_http:
        raise ConfigError(f"backoffice_host: {settings.backoffice_host} is not a loopback address and the page "
                          "speaks plain HTTP (passwords would cross the network in clear): serve it on "
                          "127.0.0.1 behind a TLS proxy, or give --insecure-http to accept the risk")
    if not is_loopback(settings.backoffice_host):
        log.warning("back-office page served over plain HTTP beyond this PC (insecure_http)",
                    extra={"host": settings.backoffice_host})
    try:
        return BackofficeServer(engine, settings.backoffice_host, settings.backoffice_port,
                                settings.shop_timezone, redis_url=getattr(settings, "redis_url", None)).start()
    except OSError as exc:
        raise ConfigError(f"backoffice_port: cannot listen on {settings.backoffice_host}:"
                          f"{settings.backoffice_port} ({exc.strerror or exc})") from None
