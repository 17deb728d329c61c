"""`cashier-gateway run`: serve the ledger gateway with uvicorn; `cashier-gateway self-test`:
check the installation offline (gateway/selftest.py).

    cashier-gateway run --redis-url redis://gateway:...@10.0.0.5:6379/0 --host 0.0.0.0 --port 8443 \
        --tls-cert /etc/cashier/gateway.crt --tls-key /etc/cashier/gateway.key

The Redis URL may also come from CASHIER_REDIS_URL (keep passwords out of argv). On
SIGTERM/SIGINT uvicorn stops accepting, lets requests in flight finish (at most
--graceful-shutdown-s) and the program exits 0 (what a systemd unit expects); a till
whose request was cut off retries it with the same txn id and gets the first answer.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import ssl
import sys

import uvicorn

from core import Ledger, RetryPolicy, __version__
from core.connection import redacted
from core.exit_codes import EXIT_BAD_INPUT, EXIT_OK, classify

from .app import Gateway, GatewaySettings, create_app
from .sessions import DEFAULT_TTL_S
from .wire import MAX_BODY_BYTES

log = logging.getLogger("gateway")

DEFAULT_PORT = 8470
DEFAULT_CALL_DEADLINE_S = 2.0      # below a till's timeout, so a till hears "unavailable", not silence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cashier-gateway", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("run", help="serve the gateway")
    p.add_argument("--redis-url", default=os.environ.get("CASHIER_REDIS_URL", "redis://127.0.0.1:6379/0"),
                   help="central Redis (env CASHIER_REDIS_URL)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--tls-cert", help="PEM certificate chain (TLS on the shop LAN)")
    p.add_argument("--tls-key", help="PEM private key of --tls-cert")
    p.add_argument("--approval-above-minor", type=int, default=0,
                   help="charges, holds and top-ups above this (minor units) need a supervisor's PIN (0: off)")
    p.add_argument("--session-ttl-s", type=int, default=DEFAULT_TTL_S, help="cashier session lifetime")
    p.add_argument("--call-deadline-s", type=float, default=DEFAULT_CALL_DEADLINE_S,
                   help="how long one ledger call may retry Redis")
    p.add_argument("--max-concurrency", type=int, default=200, help="connections served at once (then 503)")
    p.add_argument("--graceful-shutdown-s", type=float, default=10.0)
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    sub.add_parser("self-test", help="check the installation offline (imports, Lua scripts, the app answers; "
                                     "no Redis needed)")
    return parser


def server_config(app, args: argparse.Namespace) -> uvicorn.Config:
    """uvicorn's settings for `run` (the self-test loads the same ones). HTTP/1.1 through
    uvicorn's "auto" protocol (h11, or httptools when installed), no WebSocket (the API has
    none), the asyncio loop ("auto": uvloop when installed), no lifespan."""
    return uvicorn.Config(
        app, host=args.host, port=args.port, ssl_certfile=args.tls_cert, ssl_keyfile=args.tls_key,
        limit_concurrency=args.max_concurrency, timeout_keep_alive=30,
        timeout_graceful_shutdown=args.graceful_shutdown_s,
        h11_max_incomplete_event_size=16 * 1024, server_header=False, date_header=False, access_log=False,
        log_level=args.log_level, lifespan="off", http="auto", ws="none", loop="auto")


def tls_problem(cert: str, key: str) -> str | None:
    """Why the certificate and key cannot serve TLS (a missing or unreadable file, not a
    PEM certificate and its key), naming the option; None when they can. Checked before
    uvicorn starts, so a unit with a wrong path exits 2 with one line (and systemd does
    not restart it in a loop) instead of a traceback."""
    for field, path in (("tls_cert", cert), ("tls_key", key)):
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            return f"{field}: {path}: {exc.strerror or exc}"
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except (ssl.SSLError, ValueError) as exc:
        return f"tls_cert/tls_key: {cert} and {key} are not a PEM certificate and its private key ({exc})"
    return None


def _stopped(signum, _frame) -> None:
    """uvicorn stops gracefully on SIGTERM/SIGINT, then raises the signal again with the
    handler it found: this one, so a stop that was asked for ends with exit 0 (not 143,
    not a KeyboardInterrupt traceback)."""
    raise SystemExit(EXIT_OK)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "self-test":
        from .selftest import run_selftest
        return run_selftest()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if bool(args.tls_cert) != bool(args.tls_key):
        print("cashier-gateway: --tls-cert and --tls-key go together", file=sys.stderr)
        return EXIT_BAD_INPUT
    problem = tls_problem(args.tls_cert, args.tls_key) if args.tls_cert else None
    if problem:
        print(f"cashier-gateway: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        ledger = Ledger.from_url(args.redis_url, auto_init=False, retry=RetryPolicy(deadline_s=args.call_deadline_s))
    except Exception as exc:
        known = classify(exc, args.redis_url)
        if known is None:
            raise
        print(f"cashier-gateway: {known[1]}", file=sys.stderr)
        return known[0]
    gateway = Gateway(ledger, GatewaySettings(approval_above_minor=args.approval_above_minor,
                                              session_ttl_s=args.session_ttl_s, max_body_bytes=MAX_BODY_BYTES))
    log.info("gateway on %s:%d (%s) for %s", args.host, args.port, "TLS" if args.tls_cert else "plain HTTP",
             redacted(args.redis_url))
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _stopped)
    try:
        uvicorn.Server(server_config(create_app(gateway), args)).run()
    finally:
        ledger.close()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
