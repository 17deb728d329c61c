"""Runs blocking work (Redis calls, PIN hashing, the outbox) off the UI thread.

`Background.run(fn, on_done, on_error)` runs `fn` on a QThreadPool and delivers its
return value (or exception) to the callbacks on the UI thread through a queued
signal, the way Anki's taskman does. A pool with one thread runs its jobs one after
another, which is how the terminal keeps its money operations in order (Vorta's
per-repository job queue). `wait()` lets a window or a test wait for every job at
shutdown so nothing runs against a closed connection.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)


class _Delivery(QObject):
    """Lives on the UI thread; its signals are emitted by the worker and so queued."""
    done = Signal(object)
    failed = Signal(object)

    def __init__(self, owner: "Background", on_done, on_error):
        super().__init__()
        self._owner, self._on_done, self._on_error = owner, on_done, on_error
        self.done.connect(self._deliver_done)
        self.failed.connect(self._deliver_failed)

    @Slot(object)
    def _deliver_done(self, value) -> None:
        self._owner._finished(self)
        if self._on_done:
            self._on_done(value)

    @Slot(object)
    def _deliver_failed(self, exc) -> None:
        self._owner._finished(self)
        if self._on_error:
            self._on_error(exc)
        else:
            log.error("background job failed: %s: %s", type(exc).__name__, exc)


class _Job(QRunnable):
    def __init__(self, fn: Callable[[], Any], delivery: _Delivery):
        super().__init__()
        self.setAutoDelete(True)
        self._fn, self._delivery = fn, delivery

    def run(self) -> None:
        try:
            value = self._fn()
        except Exception as exc:        # delivered to on_error on the UI thread
            self._delivery.failed.emit(exc)
        else:
            self._delivery.done.emit(value)


class Background:
    """A private thread pool of `threads` workers (1 = jobs run strictly in order)."""

    def __init__(self, threads: int, name: str = "worker"):
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(threads)
        self.name = name
        self._deliveries: set[_Delivery] = set()

    def run(self, fn: Callable[[], Any], on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[Exception], None] | None = None) -> None:
        delivery = _Delivery(self, on_done, on_error)
        self._deliveries.add(delivery)      # kept alive until it has delivered
        self.pool.start(_Job(fn, delivery))

    def _finished(self, delivery: _Delivery) -> None:
        self._deliveries.discard(delivery)

    @property
    def busy(self) -> bool:
        return bool(self._deliveries)

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until every job has run (for shutdown and tests). True when all did."""
        return self.pool.waitForDone(timeout_ms)
