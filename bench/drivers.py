"""Load drivers for the product path and its bare baselines on a private Redis
(standalone or Cluster): `LedgerDriver` calls `Ledger.deduct` (batch 1) or
`Ledger.deduct_many` (batch > 1); `BareScriptDriver` runs the very same deduct
function with a plain redis-py client (same connection options as the product:
`core.connection.connect`, decoded replies), one FCALL per call or a
non-transactional pipeline of `batch` FCALLs. Both deduct 1 minor unit per
request from accounts that start with `INITIAL_BALANCE_MINOR`, and `verify` checks
that the final balances equal the opening balances minus exactly what the clients
saw applied (integers only).
"""
from __future__ import annotations

import secrets

from core import Ledger, Status
from core.connection import connect, is_cluster
from core.ledger import DEFAULT_RETENTION_S, DeductRequest
from core.runner import reply_status

INITIAL_BALANCE_MINOR = 100_000_000_000      # the most one open_account may give
AMOUNT_MINOR = 1
HOT_ACCOUNTS = ("H0",)
SPREAD_ACCOUNT_COUNT = 1000


def deduct_keys(part, account_id: str, txn_id: str) -> list[str]:
    """KEYS of the deduct script, exactly as `Ledger.deduct_many` builds them (account,
    txn record, journal, holds, hold expiries, the partition's settings). The bare
    drivers and the ceiling use this, so a bare call is the product's call without the
    Ledger; `check_bare_call` fails loudly if the call stops applying."""
    return part.deduct_keys(account_id, txn_id)


def check_bare_call(url: str, account_id: str) -> None:
    """One bare FCALL must be APPLIED, else the bare baseline would measure errors."""
    ledger = Ledger.from_url(url)
    try:
        part = ledger.schema.partition_of(account_id)
        keys = deduct_keys(part, account_id, "bench-selfcheck")
        reply = ledger.client.fcall(ledger.scripts.function("deduct"), len(keys), *keys, "bench-selfcheck",
                                      account_id, AMOUNT_MINOR, DEFAULT_RETENTION_S, "T1", "c1")
        if reply_status(reply) != "APPLIED":
            raise RuntimeError(f"bare deduct call answered {reply}: bench.drivers.deduct_keys is out of "
                               "step with core's deduct script")
        ledger.client.hincrby(part.account(account_id), "bal", AMOUNT_MINOR)   # undo, keep totals exact
    finally:
        ledger.close()


def spread_accounts(count: int = SPREAD_ACCOUNT_COUNT) -> tuple[str, ...]:
    return tuple(f"S{i:05d}" for i in range(count))


def flush_redis(url: str) -> None:
    """FLUSHALL the private server (every primary of a private Cluster)."""
    client = connect(url)
    try:
        if is_cluster(client):
            for node in client.get_primaries():
                client.flushall(target_nodes=node)
        else:
            client.flushall()
    finally:
        client.close()


def reset_ledger(url: str, accounts: tuple[str, ...], initial_minor: int = INITIAL_BALANCE_MINOR) -> None:
    """Empty the private Redis, create the ledger and open `accounts`."""
    flush_redis(url)
    ledger = Ledger.from_url(url)
    try:
        ledger.init()
        for a in accounts:
            r = ledger.open_account(a, txn_id=f"open-{a}", initial_minor=initial_minor)
            assert r.status is Status.APPLIED, r
    finally:
        ledger.close()


def verify_balances(url: str, accounts: tuple[str, ...], applied_minor: int,
                    initial_minor: int = INITIAL_BALANCE_MINOR) -> dict:
    """Exactness: final total == opening total - applied (all ints)."""
    ledger = Ledger.from_url(url)
    try:
        infos = ledger.accounts(list(accounts))
    finally:
        ledger.close()
    final_total = sum(i.balance_minor for i in infos.values() if i is not None)
    expected_total = initial_minor * len(accounts) - applied_minor
    oversold = sum(-i.balance_minor for i in infos.values() if i is not None and i.balance_minor < 0)
    return {"money_created_minor": final_total - expected_total, "oversold_minor": oversold,
            "exact": final_total == expected_total and oversold == 0}


class _Base:
    name = "base"

    def __init__(self, url: str, accounts: tuple[str, ...], batch: int = 1):
        self.url, self.accounts, self.batch = url, accounts, batch
        self.nonce = ""

    def prepare(self, procs: int) -> None:
        reset_ledger(self.url, self.accounts)
        self.nonce = secrets.token_hex(3)
        if isinstance(self, BareScriptDriver):
            check_bare_call(self.url, self.accounts[0])

    def verify(self, m) -> dict:
        return verify_balances(self.url, self.accounts, m.applied_minor)

    def _requests(self, index: int):
        """Endless (account_id, txn_id) pairs for worker `index`."""
        accounts, n = self.accounts, len(self.accounts)
        i = 0
        prefix = f"{self.nonce}-{index}-"
        offset = index * 7919
        while True:
            yield accounts[(offset + i) % n], prefix + str(i)
            i += 1


class LedgerDriver(_Base):
    """The product: `Ledger.deduct` per request, or `Ledger.deduct_many` of `batch`."""

    @property
    def name(self) -> str:
        return "Ledger.deduct" if self.batch == 1 else f"Ledger.deduct_many({self.batch})"

    ledger_kwargs: dict = {}          # extra Ledger options (e.g. wait_replicas) for the workers

    def worker(self, index: int, procs: int):
        ledger = Ledger.from_url(self.url, **self.ledger_kwargs)
        _ = ledger.schema
        reqs = self._requests(index)
        applied = Status.APPLIED
        if self.batch == 1:
            def step():
                account_id, txn_id = next(reqs)
                r = ledger.deduct(account_id, AMOUNT_MINOR, txn_id=txn_id, terminal_id="T1", cashier_id="c1")
                return (1, 0, 0, AMOUNT_MINOR) if r.status is applied else (1, 0, 0, 0)
            return step
        batch = self.batch

        def step_many():
            items = [DeductRequest(a, AMOUNT_MINOR, t, "T1", "c1") for a, t in
                     (next(reqs) for _ in range(batch))]
            results = ledger.deduct_many(items)
            ok = sum(1 for r in results if getattr(r, "status", None) is applied)
            return batch, 0, batch - ok if ok < batch else 0, ok * AMOUNT_MINOR
        return step_many


class BareScriptDriver(_Base):
    """The same deduct function by FCALL from a bare redis-py client (no Ledger)."""

    @property
    def name(self) -> str:
        return "bare redis-py FCALL" if self.batch == 1 else f"bare redis-py pipeline({self.batch})"

    def worker(self, index: int, procs: int):
        ledger = Ledger.from_url(self.url)            # only to learn the key schema and the function
        schema = ledger.schema
        function = ledger.scripts.function("deduct")
        ledger.close()
        client = connect(self.url)
        reqs = self._requests(index)
        retention = str(DEFAULT_RETENTION_S)

        def args(account_id: str, txn_id: str):
            keys = deduct_keys(schema.partition_of(account_id), account_id, txn_id)
            return (function, len(keys), *keys, txn_id, account_id, AMOUNT_MINOR, retention, "T1", "c1")

        if self.batch == 1:
            def step():
                reply = client.fcall(*args(*next(reqs)))
                return (1, 0, 0, AMOUNT_MINOR) if reply_status(reply) == "APPLIED" else (1, 0, 0, 0)
            return step
        batch = self.batch

        def step_many():
            pipe = client.pipeline(transaction=False)
            for _ in range(batch):
                pipe.fcall(*args(*next(reqs)))
            replies = pipe.execute()
            ok = sum(1 for r in replies if reply_status(r) == "APPLIED")
            return batch, 0, batch - ok, ok * AMOUNT_MINOR
        return step_many
