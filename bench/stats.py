"""Measurements and their statistics: one `Measurement` per load run (operations done,
attempts that failed or were retried, per-request latencies in integer nanoseconds,
the wall-clock duration in seconds), with throughput and latency percentiles computed
on demand. Money never passes through here; only counts and times do.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field


def percentile_ns(sorted_ns: "array | list[int]", q: float) -> int:
    """Nearest-rank percentile of already sorted values (q in 0..100); 0 when empty."""
    if not sorted_ns:
        return 0
    rank = max(1, min(len(sorted_ns), -(-int(q * len(sorted_ns) * 1000) // 100_000)))
    return sorted_ns[rank - 1]


@dataclass
class WorkerResult:
    """What one worker process sends back (latencies as bytes of array('q'))."""
    ops: int = 0                     # logical operations completed (deductions decided)
    requests: int = 0                # requests completed (a batch counts once)
    retries: int = 0                 # attempts that had to be repeated
    failures: int = 0                # requests given up on / errors
    applied_minor: int = 0           # money the worker saw applied (int minor units)
    latencies: bytes = b""           # array('q') of per-request latency in ns
    service_latencies: bytes = b""   # paced runs: send-to-answer ns (latencies then count from the schedule)
    elapsed_s: float = 0.0
    error: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Measurement:
    """The merged result of one run of `procs` workers for `duration_s`."""
    name: str
    procs: int
    duration_s: float
    ops: int
    requests: int
    retries: int
    failures: int
    applied_minor: int
    latencies_ns: array
    extra: dict = field(default_factory=dict)
    service_latencies_ns: array = field(default_factory=lambda: array("q"))

    @classmethod
    def merge(cls, name: str, procs: int, duration_s: float, parts: list[WorkerResult]) -> "Measurement":
        lat, service = array("q"), array("q")
        extra: dict = {}
        for p in parts:
            lat.frombytes(p.latencies)
            service.frombytes(p.service_latencies)
            for k, v in p.extra.items():
                extra[k] = extra.get(k, 0) + v
        lat = array("q", sorted(lat))
        return cls(name, procs, duration_s, sum(p.ops for p in parts), sum(p.requests for p in parts),
                   sum(p.retries for p in parts), sum(p.failures for p in parts),
                   sum(p.applied_minor for p in parts), lat, extra, array("q", sorted(service)))

    @property
    def throughput_per_s(self) -> float:
        return self.ops / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def attempts(self) -> int:
        return self.requests + self.retries + self.failures

    @property
    def failed_or_retried_share(self) -> float:
        return (self.retries + self.failures) / self.attempts if self.attempts else 0.0

    def latency_ms(self, q: float) -> float:
        return percentile_ns(self.latencies_ns, q) / 1e6

    @property
    def latency_ms_mean(self) -> float:
        return sum(self.latencies_ns) / len(self.latencies_ns) / 1e6 if self.latencies_ns else 0.0

    @property
    def latency_ms_p50(self) -> float:
        return self.latency_ms(50)

    @property
    def latency_ms_p99(self) -> float:
        return self.latency_ms(99)

    @property
    def latency_ms_p999(self) -> float:
        return self.latency_ms(99.9)
