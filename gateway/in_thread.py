"""The ledger gateway served by uvicorn in a thread of the calling process, on a free
loopback port: for the till's tests (tests/support/gateway.py), the terminal benchmark
(bench/terminal_probe.py) and tools that need a gateway without a second process. A
shop runs `cashier-gateway run` (gateway/cli.py) instead.

    server, url = serve_in_thread(Gateway(ledger))
    ...
    stop(server)
"""
from __future__ import annotations

import socket
import threading
import time

import uvicorn

from .app import Gateway, create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_in_thread(gateway: Gateway, *, port: int | None = None,
                    start_timeout_s: float = 10.0) -> tuple[uvicorn.Server, str]:
    """Start serving `gateway` on 127.0.0.1 (`port`, else a free one); returns once it
    accepts requests: (the server, its http:// URL). RuntimeError when it does not start."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(gateway), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off", access_log=False, ws="none", timeout_keep_alive=30))
    # uvicorn installs no signal handlers outside the main thread
    thread = threading.Thread(target=server.run, name=f"gateway-{port}", daemon=True)
    thread.start()
    server.thread = thread
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the in-process gateway on port {port} did not start")
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{port}"


def stop(server: uvicorn.Server, timeout_s: float = 15.0) -> None:
    """Stop serving (requests in flight finish) and wait for the thread."""
    server.should_exit = True
    thread = getattr(server, "thread", None)
    if thread is not None:
        thread.join(timeout_s)
