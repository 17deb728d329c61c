"""Runs a load *driver* in N forked worker processes for a fixed duration and merges
what they measured. A driver is a small picklable object with `prepare(procs)` (in the
parent: reset and seed its store), `worker(index, procs)` (in the child: connect and
answer a `step()` callable that makes one request and returns
``(ops, retries, failures, applied_minor)``) and `verify(measurement)` (in the parent:
check the final balances). Workers are processes, not threads: each one is a client
with its own connection, like a cashier terminal, and the GIL of one process never
caps the load. All workers start together behind a barrier. With `rate_per_s` the
run is open-loop: each worker sends on a fixed schedule and latency is counted from
the scheduled send time, so a slow answer is not hidden by the next send waiting
(coordinated omission).
"""
from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from array import array

from .stats import Measurement, WorkerResult

_FORK = mp.get_context("fork")


def _worker_main(driver, index: int, procs: int, duration_s: float, rate_per_s: float | None,
                 barrier, queue) -> None:
    result = WorkerResult()
    try:
        step = driver.worker(index, procs)
    except BaseException:
        result.error = traceback.format_exc()
        barrier.abort()
        queue.put(result)
        return
    lat, service = array("q"), array("q")
    ops = retries = failures = applied = requests = 0
    try:
        barrier.wait(60)
        clock = time.perf_counter_ns
        start = clock()
        deadline = start + int(duration_s * 1e9)
        if rate_per_s:
            interval_ns = int(procs * 1e9 / rate_per_s)
            due = start + interval_ns * index // procs
            while due < deadline:
                now = clock()
                if now < due:
                    if due - now > 200_000:
                        time.sleep((due - now - 100_000) / 1e9)
                    while clock() < due:
                        pass
                sent = clock()
                o, r, f, a = step()
                done = clock()
                lat.append(done - due)
                service.append(done - sent)
                ops += o; retries += r; failures += f; applied += a; requests += 1
                due += interval_ns
        else:
            now = start
            while now < deadline:
                o, r, f, a = step()
                done = clock()
                lat.append(done - now)
                now = done
                ops += o; retries += r; failures += f; applied += a; requests += 1
        result.elapsed_s = (clock() - start) / 1e9
    except BaseException:
        result.error = traceback.format_exc()
    result.ops, result.retries, result.failures = ops, retries, failures
    result.applied_minor, result.requests = applied, requests
    result.latencies, result.service_latencies = lat.tobytes(), service.tobytes()
    extra = getattr(driver, "worker_extra", None)
    if callable(extra):
        result.extra = extra()
    queue.put(result)


class WorkerFailed(RuntimeError):
    pass


def run(driver, procs: int, duration_s: float, *, rate_per_s: float | None = None,
        name: str | None = None) -> Measurement:
    """Prepare, run `procs` workers for `duration_s`, merge, verify; answer the Measurement."""
    driver.prepare(procs)
    barrier = _FORK.Barrier(procs + 1)
    queue = _FORK.Queue()
    workers = [_FORK.Process(target=_worker_main,
                             args=(driver, i, procs, duration_s, rate_per_s, barrier, queue),
                             daemon=True) for i in range(procs)]
    for w in workers:
        w.start()
    try:
        barrier.wait(120)
    except Exception:
        pass  # a worker failed to start; its error arrives on the queue
    results = [queue.get(timeout=duration_s + 180) for _ in workers]
    for w in workers:
        w.join(30)
    errors = [r.error for r in results if r.error]
    if errors:
        raise WorkerFailed(f"{name or driver.name}: {len(errors)} worker(s) failed:\n{errors[0]}")
    elapsed_s = sum(r.elapsed_s for r in results) / len(results)
    m = Measurement.merge(name or driver.name, procs, elapsed_s, results)
    m.extra.update(driver.verify(m) or {})
    return m
