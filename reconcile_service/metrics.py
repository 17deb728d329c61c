"""Prometheus metrics and the /healthz endpoint of the reconcile service.

One private `CollectorRegistry` per process (so tests can run several services in one
interpreter), served by a small threaded HTTP server: ``/metrics`` in the Prometheus
text format and ``/healthz`` answering 200 while the main loop is alive and both
servers answer, 503 otherwise (with the reason as JSON).
"""
from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger(__name__)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.entries_applied = Counter("reconcile_entries_applied", "Journal entries written to the database",
                                       ["partition"], registry=r)
        self.entries_redelivered = Counter("reconcile_entries_redelivered",
                                           "Entries delivered again that the database already had",
                                           ["partition"], registry=r)
        self.duplicates = Counter("reconcile_duplicate_txns", "Txn ids applied twice in Redis (detected)",
                                  registry=r)
        self.quarantined = Counter("reconcile_entries_quarantined", "Malformed journal entries quarantined",
                                   ["partition"], registry=r)
        self.batch_seconds = Histogram("reconcile_batch_seconds", "Time to apply and acknowledge one batch",
                                       buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10), registry=r)
        self.lag = Gauge("reconcile_lag_entries", "Journal entries not yet durably applied (new + pending)",
                         ["partition"], registry=r)
        self.pending = Gauge("reconcile_pending_entries", "Entries delivered but not yet acknowledged",
                             ["partition"], registry=r)
        self.discrepancies_found = Counter("reconcile_discrepancies_found", "Discrepancies found, by kind",
                                           ["kind"], registry=r)
        self.discrepancies_open = Gauge("reconcile_discrepancies_open", "Discrepancies not repaired",
                                        registry=r)
        self.repairs = Counter("reconcile_repairs", "Automatic repairs (compensating credits)", registry=r)
        self.last_pass = Gauge("reconcile_last_pass_timestamp_seconds", "End of the last reconciliation pass",
                               registry=r)
        self.last_pass_outcome_ok = Gauge("reconcile_last_pass_clean", "1 if the last pass found nothing open",
                                          registry=r)
        self.redis_up = Gauge("reconcile_redis_up", "1 while Redis answers", registry=r)
        self.database_up = Gauge("reconcile_database_up", "1 while the database answers", registry=r)
        self.restored_accounts = Counter("reconcile_restored_accounts", "Accounts restored into Redis",
                                         registry=r)
        self.redis_up.set(0)
        self.database_up.set(0)
        self.heartbeat_monotonic = time.monotonic()
        self.stale_after_s = 120.0

    def beat(self) -> None:
        self.heartbeat_monotonic = time.monotonic()

    def health(self) -> tuple[bool, dict]:
        age_s = time.monotonic() - self.heartbeat_monotonic
        state = {"redis_up": bool(self.redis_up._value.get()),
                 "database_up": bool(self.database_up._value.get()),
                 "loop_age_s": round(age_s, 3)}
        ok = state["redis_up"] and state["database_up"] and age_s < self.stale_after_s
        return ok, state


class MetricsServer:
    """Serves /metrics and /healthz on a background thread until `close()`."""

    def __init__(self, metrics: Metrics, host: str, port: int):
        self.metrics = metrics
        handler = self._handler()
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="metrics-http", daemon=True)

    def _handler(self):
        metrics = self.metrics

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path.split("?")[0] == "/metrics":
                    body, status, ctype = generate_latest(metrics.registry), 200, CONTENT_TYPE_LATEST
                elif self.path.split("?")[0] == "/healthz":
                    ok, state = metrics.health()
                    body = json.dumps(dict(state, ok=ok)).encode()
                    status, ctype = (200 if ok else 503), "application/json"
                else:
                    body, status, ctype = b"not found\n", 404, "text/plain"
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, fmt, *args):  # scrapes every few seconds: keep them out of the log
                pass

        return Handler

    def start(self) -> "MetricsServer":
        self.thread.start()
        log.info("metrics endpoint listening", extra={"port": self.port})
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
