"""Smoke test of the benchmark suite: `python -m bench --smoke` runs every quick part
for a fraction of a second each against private servers it starts itself, writes its
report into pytest's tmp_path (never docs/), and the report holds the issue 7 table
and the issue 9 section. Not a timed assertion: no figure is checked, only that the
suite still runs end to end and writes what it promises.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK_PARTS = ("ceiling,client,wait,hot,latency,reconcile,memory,terminal,compare,cache,server_cost,members,"
               "capacity,soak")

pytestmark = [pytest.mark.slow,    # 1-2 min each: runs the bench; not in the fast lane
              pytest.mark.skipif(shutil.which("redis-server") is None or shutil.which("redis-benchmark") is None,
                                 reason="needs redis-server and redis-benchmark")]


def test_bench_smoke_writes_report(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--duration-s", "0.2",
                           "--parts", QUICK_PARTS, "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    report = tmp_path / "benchmarks.md"
    assert report.exists(), proc.stdout + proc.stderr
    text = report.read_text()
    assert "| Part | Measurement | Figure | Ratio | Target | Met | Notes |" in text
    assert "## Issue 9: deduction methods rerun side by side" in text
    for part in ("1 ceiling", "2 baseline", "3 product", "4 hot account", "5 latency", "6 reconcile drain",
                 "7 memory", "8 terminal"):
        assert f"| {part} |" in text, part
    assert "not yet built" not in text and "not built yet" not in text      # no placeholder rows left
    assert "entries/s" in text and "raw COPY" in text                  # part 6 measured
    assert "skipped in smoke" in text                                  # part 6's lag run
    assert "chargeButton" in text and "--self-test" in text            # part 8 measured
    assert "split into" not in text and "batching, not splitting" in text   # issue 12: no split rows
    assert "| 17 server cost | product deduct (fresh) |" in text       # issue 17 server cost
    assert "| 17 client CPU |" in text
    assert "## Issue 17: lean ledger, every target of this run" in text   # issue 17's own table
    assert "| 17 server cost: product deduct in deduct_many" in text
    assert "## Issue 30: the lean journal, every target of this run" in text   # issue 30's own table
    for row in ("server cost: product deduct (fresh)", "server cost: product refund", "drain: one reconcile-service",
                "idempotency record", "`deduct_many` with 2 client processes"):
        assert f"| {row}" in text, row
    assert "| 33 capacity | idempotency record" in text and "| 33 soak | memory per operation" in text
    assert (tmp_path / "soak.md").exists() and (tmp_path / "benchmarks" / "soak_memory.png").stat().st_size > 0
    assert "FAILED" not in text, proc.stdout + proc.stderr
    assert (tmp_path / "benchmarks" / "throughput_vs_concurrency.png").stat().st_size > 0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (ROOT / "docs" / "benchmarks.md").samefile(report) if (ROOT / "docs" / "benchmarks.md").exists() else True


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_drain_instructions_counts_one_batch(tmp_path):
    raw = tmp_path / "raw.pkl"
    proc = subprocess.run([sys.executable, "-m", "bench.drain_instructions", "--entries", "300", "--raw", str(raw)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    per_entry = int(proc.stdout.strip().splitlines()[-1].split()[0].replace(",", ""))
    assert raw.exists() and 10_000 < per_entry < 1_000_000, proc.stdout     # an entry is tens of thousands


def test_gateway_part_smoke(tmp_path):
    """Issue 24's part runs end to end (gateway processes, one and two of them, batches) and
    writes its four rows with the balances checked; no figure is asserted."""
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--parts", "gateway", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    text = (tmp_path / "benchmarks.md").read_text() if (tmp_path / "benchmarks.md").exists() else ""
    rows = [line for line in text.splitlines() if line.startswith("| issue 24 gateway |")]
    assert len(rows) == 4 and "FAILED" not in text, proc.stdout + proc.stderr
    assert "two gateway processes" in text and "deduct_many, batches of 100" in text
    assert text.count("balances exact: True") >= 3 and "balances exact: False" not in text
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bench_member_import_smoke(tmp_path):
    """Issue 29's part: a smoke import (2,000 members) and its re-run write their rows."""
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--parts", "member_import", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (tmp_path / "benchmarks.md").read_text()
    assert "| 29 import | import 2,000 members (CSV, cards, bonus) into Redis |" in text
    assert "| 29 import | re-run of the same 2,000 members" in text and "FAILED" not in text
