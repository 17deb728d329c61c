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
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger(__name__)

MEMORY_WINDOW_S = 3600.0     # the growth rate (and time to full) is over the last hour


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
        self.unreplicated = Counter("reconcile_batches_unreplicated",
                                    "Batches not booked (yet) because fewer replicas than wait_replicas "
                                    "confirmed holding them", ["partition"], registry=r)
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
        self.pass_interval = Gauge("reconcile_pass_interval_seconds",
                                   "The daemon's reconcile_interval_s (alerts compare the last pass's age with it)",
                                   registry=r)
        self.started = Gauge("reconcile_start_timestamp_seconds", "When this daemon started", registry=r)
        self.last_pass_outcome_ok = Gauge("reconcile_last_pass_clean", "1 if the last pass found nothing open",
                                          registry=r)
        self.redis_up = Gauge("reconcile_redis_up", "1 while Redis answers", registry=r)
        self.database_up = Gauge("reconcile_database_up", "1 while the database answers", registry=r)
        self.redis_full = Gauge("reconcile_redis_full",
                                "1 while Redis refuses writes for memory (maxmemory, noeviction)", registry=r)
        self.redis_used_memory = Gauge("reconcile_redis_used_memory_bytes", "Redis used_memory", registry=r)
        self.redis_maxmemory = Gauge("reconcile_redis_maxmemory_bytes", "Redis maxmemory (0: no limit)",
                                     registry=r)
        self.redis_memory_growth = Gauge("reconcile_redis_memory_growth_bytes_per_second",
                                         "Growth of used_memory over the last hour", registry=r)
        self.redis_full_in = Gauge("reconcile_redis_full_in_seconds",
                                   "Time until used_memory reaches maxmemory at the last hour's growth "
                                   "(-1: not growing or no limit)", registry=r)
        self.periodic_failures = Counter("reconcile_periodic_failures",
                                         "Failed runs of the daemon's periodic work, by task", ["task"], registry=r)
        self.restored_accounts = Counter("reconcile_restored_accounts", "Accounts restored into Redis",
                                         registry=r)
        self.redis_up.set(0)
        self.database_up.set(0)
        self.heartbeat_monotonic = time.monotonic()
        self.stale_after_s = 120.0
        self.memory_samples: deque[tuple[float, int]] = deque()

    def observe_memory(self, client) -> None:
        """Sample Redis memory (INFO memory; on a Cluster the fullest node counts)."""
        info = client.info("memory")
        nodes = info.values() if info and all(isinstance(v, dict) for v in info.values()) else [info]
        fullest = max(nodes, key=lambda n: int(n.get("used_memory", 0)) / max(int(n.get("maxmemory", 0)), 1))
        used, limit = int(fullest.get("used_memory", 0)), int(fullest.get("maxmemory", 0))
        now = time.monotonic()
        self.memory_samples.append((now, used))
        while self.memory_samples and now - self.memory_samples[0][0] > MEMORY_WINDOW_S:
            self.memory_samples.popleft()
        first_t, first_used = self.memory_samples[0]
        growth = (used - first_used) / (now - first_t) if now - first_t >= 1 else 0.0
        self.redis_used_memory.set(used)
        self.redis_maxmemory.set(limit)
        self.redis_memory_growth.set(growth)
        self.redis_full_in.set((limit - used) / growth if limit and growth > 0 else -1)

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
