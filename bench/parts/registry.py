"""The ordered registry of benchmark parts: name -> (function, description). The
order matters: later parts read figures earlier ones measured (the ceiling for
ratios, part 3's peak for part 5's pacing). Adding a part is one function here.
"""
from __future__ import annotations

from . import (backoffice, cache, capacity, ceiling, client, compare, gateway, hot, latency, member_import, members,
               memory, reconcile, server_cost, soak, terminal, wait)

PARTS = {
    "ceiling": (ceiling.run, "1: redis-benchmark running the product's deduct script"),
    "client": (client.run, "2+3: bare redis-py vs Ledger.deduct / deduct_many"),
    "wait": (wait.run, "3 (optional): Ledger.deduct with wait_replicas=1 on a primary + replica"),
    "hot": (hot.run, "4: one hot account vs many, standalone and 3-master Cluster"),
    "latency": (latency.run, "5: deduct latency at half of peak, open loop"),
    "reconcile": (reconcile.run, "6: reconcile drain vs raw COPY; journal lag at 10,000 deductions/s"),
    "memory": (memory.run, "7: memory per account / idempotency record"),
    "terminal": (terminal.run, "8: terminal Charge -> result shown; start-up"),
    "backoffice": (backoffice.run, "9: report liability over 1,000,000 entries; back-office page p99"),
    "compare": (compare.run, "issue 9: comparison of deduction methods"),
    "cache": (cache.run, "issue 9: read-side cache for hot balances"),
    "server_cost": (server_cost.run, "issue 17: server cost per script call vs a minimal script; client CPU"),
    "members": (members.run, "issue 14: find_members over 100,000 members; memory per member"),
    "capacity": (capacity.run, "issue 33: Redis memory per operation by part, against core.capacity"),
    "soak": (soak.run, "issue 33: open-loop soak with the daemon; memory per operation, lag, RSS over time"),
    "gateway": (gateway.run, "issue 24: gateway vs direct: charge p99, charges/s on 1 and 2 gateways, deduct_many"),
    "member_import": (member_import.run, "issue 29: cashierctl member import of 100,000 members"),
}
