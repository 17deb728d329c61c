"""A TCP proxy for fault injection between a client and a real Redis: it forwards
every request, and can drop a reply after Redis has executed the request (the client
sees a reset connection and cannot know whether its command ran) or delay replies.
This is the failure that makes retries dangerous without idempotency."""
from __future__ import annotations

import random
import socket
import threading


class FaultyProxy:
    def __init__(self, upstream_port: int, *, drop_reply_probability: float = 0.0,
                 delay_s: float = 0.0, seed: int = 1):
        self.upstream_port = upstream_port
        self.drop_reply_probability = drop_reply_probability
        self.delay_s = delay_s
        self.random = random.Random(seed)
        self.dropped_replies = 0
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        self._closing = False
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "FaultyProxy":
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _should_drop(self) -> bool:
        with self._lock:
            drop = self.random.random() < self.drop_reply_probability
            if drop:
                self.dropped_replies += 1
            return drop

    def _pump(self, source: socket.socket, sink: socket.socket, is_reply: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if is_reply:
                    if self.delay_s:
                        threading.Event().wait(self.delay_s)
                    if self._should_drop():
                        break            # Redis ran the command; the client never hears back
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self._closing = True
        self._server.close()
