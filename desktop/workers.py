"""Runs blocking work (Redis calls, PIN hashing, the outbox) off the UI thread.

`Background.run(fn, on_done, on_error)` runs `fn` on a QThreadPool and delivers its
return value (or exception) to the callbacks on the UI thread through a queued
signal, the way Anki's taskman does. It answers a `Task`: `task.cancel()` drops the
answer (the work itself still runs to its end), so a caller that no longer wants an
answer (the cashier typed or scanned something else meanwhile) cancels its task
instead of numbering its requests. A pool with one thread runs its jobs one after
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


class Task:
    """The handle of one job: `cancel()` and its callbacks are never called (an answer
    that arrives afterwards is dropped); `done` once its answer was delivered or dropped."""

    __slots__ = ("cancelled", "done")

    def __init__(self):
        self.cancelled = False
        self.done = False

    def cancel(self) -> None:
        self.cancelled = True

    @property
    def pending(self) -> bool:
        """Still wanted and not answered yet."""
        return not (self.cancelled or self.done)


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
            on_error: Callable[[Exception], None] | None = None) -> Task:
        self._next_id += 1
        task = Task()
        self._callbacks[self._next_id] = (task, on_done, on_error)
        self.pool.start(_Job(self._next_id, fn, self._dispatcher))
        return task

    def _deliver(self, job_id: int, ok: bool, value) -> None:
        task, on_done, on_error = self._callbacks.pop(job_id, (None, None, None))
        if task is not None:
            task.done = True
            if task.cancelled:
                return                   # nobody wants this answer any more
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
