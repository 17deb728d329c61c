"""`cashier-gateway self-test`: checks an installation offline, with no Redis.

Proves that the gateway runs (from a source checkout, a wheel or the PyInstaller bundle
alike): its modules import; the ledger's Lua scripts it runs are found through
`core.resources` with their includes expanded (core.selftest, shared with cashierctl and
reconcile-service); uvicorn loads the settings of `run` (the HTTP protocol, lifespan and
event loop it imports by name at run time, which a bundle must carry); and the ASGI app
builds and answers in-process: `GET /v1/health` 200, `GET /v1/ping` without a credential
401 `unauthorized`, an unknown path 404 `not_found` (all three before any Redis call; the
ledger is made for an unreachable address and never connects). Prints one line; exit 0,
or 1 with the first problem (never a traceback).
"""
from __future__ import annotations

import importlib
import json

from core import selftest

MODULES = ("core", "core.cashiers", "core.history", "core.shifts", "core.records", "gateway.wire",
           "gateway.schema", "gateway.sessions", "core.terminals", "gateway.app", "gateway.cli")
# What a till's requests run (gateway/schema.py OPS, sign-in's PIN counter, the available balance).
REQUIRED_SCRIPTS = ("deduct", "credit", "refund", "hold", "capture", "void", "available", "open_account",
                    "card_issue", "card_block", "close_account", "shift_close", "cashier_pin_attempt",
                    "member_code_use")
NOWHERE_URL = "redis://127.0.0.1:1/0"      # never contacted: the checks below answer before Redis


async def _ask(app, path: str) -> tuple[int, dict]:
    """One GET through the ASGI interface, as uvicorn would call the app: (status, JSON body)."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"self-test")], "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 0)}
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(body)


def check() -> str:
    """The summary line of a healthy installation; raises on the first problem."""
    for name in MODULES:
        importlib.import_module(name)
    scripts = selftest.check_scripts(REQUIRED_SCRIPTS)

    import anyio
    import uvicorn

    from core import Ledger

    from .app import Gateway, create_app
    from .cli import build_parser, server_config
    from .wire import API_VERSION
    ledger = Ledger.from_url(NOWHERE_URL, auto_init=False)
    try:
        config = server_config(create_app(Gateway(ledger)), build_parser().parse_args(["run"]))
        config.load()                       # imports the protocol and lifespan classes by name
        config.get_loop_factory()           # and the event loop's
        expected = {f"/{API_VERSION}/health": (200, "ok"), f"/{API_VERSION}/ping": (401, "unauthorized"),
                    f"/{API_VERSION}/no-such-endpoint": (404, "not_found")}
        for path, (want_status, want_word) in expected.items():
            status, body = anyio.run(_ask, config.loaded_app, path)
            word = body.get("status") if want_status == 200 else body.get("error")
            if (status, word) != (want_status, want_word):
                raise RuntimeError(f"GET {path} answered {status} {body}, expected {want_status} {want_word}")
    finally:
        ledger.close()
    return (f"{len(MODULES)} modules, {len(scripts)} Lua scripts, app answers /{API_VERSION}/health, "
            f"uvicorn {uvicorn.__version__} with {config.http_protocol_class.__name__}, {selftest.origin()}")


def run_selftest() -> int:
    return selftest.run("cashier-gateway", check)
