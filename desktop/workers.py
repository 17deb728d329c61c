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

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal

log = logging.getLogger(__name__)


class _Dispatcher(QObject):
    """Lives on the UI thread for the pool's whole life; the workers emit its signal,
    so delivery is queued to the UI thread. (One long-lived object rather than one
    per job: dropping a per-job QObject from inside its own slot crashed PySide6.)"""
    finished = Signal(int, bool, object)     # job id, succeeded, value or exception


class _Job(QRunnable):
    def __init__(self, job_id: int, fn: Callable[[], Any], dispatcher: _Dispatcher):
        super().__init__()
        self.setAutoDelete(True)
        self._job_id, self._fn, self._dispatcher = job_id, fn, dispatcher

    def run(self) -> None:
        try:
            value = self._fn()
        except Exception as exc:        # delivered to on_error on the UI thread
            self._dispatcher.finished.emit(self._job_id, False, exc)
        else:
            self._dispatcher.finished.emit(self._job_id, True, value)


class Background:
    """A private thread pool of `threads` workers (1 = jobs run strictly in order)."""

    def __init__(self, threads: int, name: str = "worker"):
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(threads)
        self.name = name
        self._dispatcher = _Dispatcher()
        self._dispatcher.finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._callbacks: dict[int, tuple] = {}
        self._next_id = 0

    def run(self, fn: Callable[[], Any], on_done: Callable[[Any], None] | None = None,
            on_error: Callable[[Exception], None] | None = None) -> None:
        self._next_id += 1
        self._callbacks[self._next_id] = (on_done, on_error)
        self.pool.start(_Job(self._next_id, fn, self._dispatcher))

    def _deliver(self, job_id: int, ok: bool, value) -> None:
        on_done, on_error = self._callbacks.pop(job_id, (None, None))
        if ok:
            if on_done:
                on_done(value)
        elif on_error:
            on_error(value)
        else:
            log.error("%s job failed: %s: %s", self.name, type(value).__name__, value)

    @property
    def busy(self) -> bool:
        return bool(self._callbacks)

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until every job has run (for shutdown and tests). True when all did."""
        return self.pool.waitForDone(timeout_ms)
