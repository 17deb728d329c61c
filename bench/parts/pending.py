"""Parts that depend on code other engineers are still building. Each is one
function that, for now, adds a row saying it is pending; when the code lands, the
function body becomes the measurement (see `bench.parts.registry`).
"""
from __future__ import annotations


def reconcile_drain(ctx) -> None:
    """Part 6: entries/s from the journal into PostgreSQL (1 and 2 instances) vs raw COPY; lag at 10,000/s."""
    ctx.row("6 reconcile drain", "reconcile-service drain (1 and 2 instances) vs raw COPY; lag at 10,000/s",
            "pending (reconcile service not yet built)", target="≥ 30,000 entries/s; lag < 1 s")


def terminal(ctx) -> None:
    """Part 8: press Charge -> result shown (pytest-qt offscreen, real Redis) p50/p99; start-up time."""
    ctx.row("8 terminal", "Charge -> result shown p50/p99; terminal start-up",
            "pending (terminal not yet built)", target="p99 < 50 ms; start-up < 2 s")
