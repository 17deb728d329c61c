"""The shared state of one benchmark run: options (duration in seconds, smoke mode,
output directory), the private servers (standalone Redis started at once, the
3-master Cluster and the PostgreSQL database only when a part asks for them), the
rows of the report's tables, and the raw measurements kept for the plots.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .servers import PrivateCluster, PrivateRedis, pg_bench_dsn


@dataclass
class Row:
    part: str
    measurement: str
    figure: str
    ratio: str = ""
    target: str = ""
    met: bool | None = None          # None: no target, or not measured
    note: str = ""
    issue: int | None = None         # the issue whose target table lists this row too
    finding: str | None = None       # key into bench.findings.FINDINGS for a missed target


@dataclass
class Context:
    duration_s: float
    smoke: bool
    out_dir: Path
    rows: list[Row] = field(default_factory=list)
    comparison: list = field(default_factory=list)      # issue 9 Measurements
    comparison_pending: list[Row] = field(default_factory=list)
    series: dict = field(default_factory=dict)          # plot name -> {label: [(x, y)]}
    data: dict = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)     # keys into bench.findings.FINDINGS
    ceiling_single_per_s: float | None = None
    ceiling_pipelined_per_s: float | None = None
    _redis: PrivateRedis | None = None
    _cluster: PrivateCluster | None = None
    _pg_dsn: str | None = None

    @property
    def redis(self) -> PrivateRedis:
        if self._redis is None:
            self._redis = PrivateRedis().start()
        return self._redis

    @property
    def cluster(self) -> PrivateCluster:
        if self._cluster is None:
            self._cluster = PrivateCluster(3).start()
        return self._cluster

    @property
    def pg_dsn(self) -> str:
        if self._pg_dsn is None:
            self._pg_dsn = pg_bench_dsn()
        return self._pg_dsn

    def pg_dsn_for(self, database: str) -> str:
        """DSN of another dedicated database of the bench's own (created if missing)."""
        return pg_bench_dsn(database)

    def row(self, part: str, measurement: str, figure: str, *, ratio: str = "", target: str = "",
            met: bool | None = None, note: str = "", finding: str | None = None,
            issue: int | None = None) -> Row:
        r = Row(part, measurement, figure, ratio, target, met, note, issue, finding)
        self.rows.append(r)
        if met is False and finding:
            self.missed.append(finding)
        return r

    def add_point(self, plot: str, label: str, x: float, y: float) -> None:
        self.series.setdefault(plot, {}).setdefault(label, []).append((x, y))

    def close(self) -> None:
        if self._redis:
            self._redis.stop()
        if self._cluster:
            self._cluster.stop()
