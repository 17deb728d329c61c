"""A small TCP proxy between the terminal and a real Redis that can lose traffic on
purpose: 'pass' forwards both ways; 'drop_replies' forwards requests but, on every
connection that has sent an EVALSHA, throws the replies away from then on (the
script runs, the terminal never hears; other connections, e.g. pings, still work);
'blackhole' throws everything away (nothing reaches Redis). It fakes nothing of
Redis itself."""
from __future__ import annotations

import socket
import threading

from tests.support.servers import free_port


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1"):
        self.target = (target_host, target_port)
        self.port = free_port()
        self.mode = "pass"
        self.requests_forwarded = 0
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            poisoned = {"script_seen": False}
            threading.Thread(target=self._pump, args=(client, upstream, True, poisoned), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False, poisoned), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, is_request: bool, poisoned: dict) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            if self.mode == "blackhole":
                continue
            if self.mode == "drop_replies" and is_request and b"fcall" in data.lower():
                poisoned["script_seen"] = True
            if poisoned["script_seen"] and not is_request:
                continue
            if is_request:
                self.requests_forwarded += 1
            try:
                dst.sendall(data)
            except OSError:
                return

    def cut_connections(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut_connections()
