"""What the ledger costs in Redis memory, and the estimate a shop plans its Redis with.

The per-part byte costs are the one place they are written down: `cashierctl capacity`,
docs/operations.md ("Capacity") and the bench (`python -m bench --parts capacity`, which
measures them on a real Redis and checks these constants within 10 %) all read them here.
Measured on Redis 7.0 (jemalloc), one partition, deductions with txn ids as the till makes
them (`T-01-d-<uuid4 hex>`), a terminal and a cashier id; members with a Chinese name and a phone.

Memory held at a steady rate R operations/s, with A accounts::

    R × retention_s × (RECORD_BYTES + KEYSPACE_BYTES_PER_KEY)      idempotency records (TTL = retention)
  + R × (journal_keep_s + trim_interval_s + lag_s) × JOURNAL_ENTRY_BYTES   journal until trimmed
  + A × ACCOUNT_BYTES                                               accounts, set, member index
  + BASE_BYTES                                                      an empty Redis with the ledger

Plan maxmemory at least that divided by `PLAN_FILL` so that the 70 % warning stays quiet
in steady state (fragmentation, client buffers and a replica's backlog take the rest).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

# above this share of maxmemory the till shows a supervisor notice and doctor warns
# (desktop/engine.py, docs/terminal.md)
MEMORY_NOTICE_SHARE = 0.90

# bytes, from `bench.parts.capacity.measure` over 100,000 (INFO used_memory deltas)
RECORD_BYTES = 224             # one idempotency record: key, hash, dict entry and expiry entry
JOURNAL_ENTRY_BYTES = 93       # one journal entry in the stream, until the daemon trims it
ACCOUNT_BYTES = 870            # one member account: hash (balance, name, phone), account set, member index,
                               # the phone's identity entry (issue 25; measured 874 over 20,000)
KEYSPACE_BYTES_PER_KEY = 24    # the keyspace's and expiry table's bucket arrays (8 bytes a slot, half to full)
BASE_BYTES = 2 * 1024 ** 2     # an empty Redis holding the ledger's meta and function library

PLAN_FILL = 0.70               # steady state under the first alert (70 % of maxmemory)


@dataclass(frozen=True)
class Estimate:
    ops_per_s: float
    accounts: int
    retention_s: int
    journal_held_s: float        # journal keep + trim interval + lag: how long an entry stays
    records_held: int
    journal_entries_held: int
    record_bytes: int
    journal_bytes: int
    account_bytes: int
    base_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.record_bytes + self.journal_bytes + self.account_bytes + self.base_bytes

    @property
    def maxmemory_bytes(self) -> int:
        """The maxmemory to plan for: the steady state at `PLAN_FILL` of it."""
        return int(self.total_bytes / PLAN_FILL)

    @property
    def per_operation_bytes(self) -> float:
        """Memory one operation holds while its journal entry is still in Redis."""
        return RECORD_BYTES + KEYSPACE_BYTES_PER_KEY + JOURNAL_ENTRY_BYTES

    def as_dict(self) -> dict:
        return dict(asdict(self), total_bytes=self.total_bytes, maxmemory_bytes=self.maxmemory_bytes,
                    per_operation_bytes=self.per_operation_bytes)


def estimate(ops_per_s: float, *, accounts: int, retention_s: int, journal_keep_s: float,
             trim_interval_s: float = 0.0, lag_s: float = 0.0) -> Estimate:
    """Steady-state Redis memory at `ops_per_s` (see the module docstring)."""
    held_s = journal_keep_s + trim_interval_s + lag_s
    records = int(ops_per_s * retention_s)
    entries = int(ops_per_s * held_s)
    return Estimate(ops_per_s=ops_per_s, accounts=accounts, retention_s=retention_s, journal_held_s=held_s,
                    records_held=records, journal_entries_held=entries,
                    record_bytes=records * (RECORD_BYTES + KEYSPACE_BYTES_PER_KEY),
                    journal_bytes=entries * JOURNAL_ENTRY_BYTES, account_bytes=accounts * ACCOUNT_BYTES,
                    base_bytes=BASE_BYTES)


def memory_use(client) -> tuple[int, int]:
    """(used_memory, maxmemory) in bytes of the Redis behind `client`: of its fullest
    primary on a Cluster (the first to refuse writes); maxmemory 0 means none is set.
    What `cashierctl capacity`, doctor and the till's memory notice read."""
    info = client.info("memory")
    nodes = info.values() if info and all(isinstance(v, dict) for v in info.values()) else [info]
    fullest = max(nodes, key=lambda n: int(n.get("used_memory", 0)) / max(int(n.get("maxmemory", 0)), 1))
    return int(fullest.get("used_memory", 0)), int(fullest.get("maxmemory", 0))


def memory_share(used: int, limit: int) -> float | None:
    """used / maxmemory, or None when no maxmemory is set (no percentage can warn)."""
    return used / limit if limit else None


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} bytes"
