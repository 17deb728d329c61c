"""Issue 9, the read-side cache: one hot account's balance read by many terminals
(`READERS` processes, closed loop, `Ledger.balance`) with the per-process read cache
off and at the published ~10 ms maximum age, while one more process keeps deducting
from the same account so the balance really changes. Reports reads/s, read latency
and the Redis commands per second the run caused (INFO total_commands_processed
delta; the writer's own commands are counted and subtracted).
"""
from __future__ import annotations

import multiprocessing as mp

from core import Ledger

from .. import load
from ..drivers import AMOUNT_MINOR, HOT_ACCOUNTS, reset_ledger

READERS = 8
CALIBRATION_WRITES = 200
CACHE_MAX_AGE_S = 0.010
_FORK = mp.get_context("fork")


def _writer(url: str, stop, done_count) -> None:
    ledger = Ledger.from_url(url)
    i = 0
    while not stop.is_set():
        ledger.deduct(HOT_ACCOUNTS[0], AMOUNT_MINOR, txn_id=f"w-{i}")
        i += 1
    done_count.value = i


class ReadDriver:
    """Readers call `balance()` on the hot account; a writer process runs beside them."""

    def __init__(self, url: str, client_factory, max_age_s: float):
        self.url, self.client_factory, self.max_age_s = url, client_factory, max_age_s
        self.name = f"balance() reads, cache {'off' if not max_age_s else f'{max_age_s * 1000:g} ms'}"
        self.commands_before = 0
        self.stop = self.writer = self.writes = None

    def _commands(self) -> int:
        c = self.client_factory()
        try:
            return int(c.info("stats")["total_commands_processed"])
        finally:
            c.close()

    def prepare(self, procs: int) -> None:
        reset_ledger(self.url, HOT_ACCOUNTS)
        # Redis commands one deduct costs (EVALSHA + the commands the script runs), to
        # subtract the writer's share from the total.
        ledger = Ledger.from_url(self.url)
        before = self._commands()
        for i in range(CALIBRATION_WRITES):
            ledger.deduct(HOT_ACCOUNTS[0], AMOUNT_MINOR, txn_id=f"cal-{i}")
        self.commands_per_write = (self._commands() - before - 1) / CALIBRATION_WRITES
        ledger.close()
        self.stop, self.writes = _FORK.Event(), _FORK.Value("q", 0)
        self.writer = _FORK.Process(target=_writer, args=(self.url, self.stop, self.writes), daemon=True)
        self.writer.start()
        self.commands_before = self._commands()

    def worker(self, index: int, procs: int):
        ledger = Ledger.from_url(self.url, read_cache_max_age_s=self.max_age_s)
        account = HOT_ACCOUNTS[0]

        def read():
            ledger.balance(account)
            return 1, 0, 0, 0
        return read

    def verify(self, m) -> dict:
        commands = self._commands() - self.commands_before
        self.stop.set()
        self.writer.join(30)
        writes = self.writes.value
        return {"redis_commands": commands, "writes": writes,
                "reader_commands": max(0, commands - round(writes * self.commands_per_write))}


def run(ctx) -> None:
    url = ctx.redis.url
    readers = 3 if ctx.smoke else READERS
    results = {}
    for age in (0.0, CACHE_MAX_AGE_S):
        results[age] = load.run(ReadDriver(url, ctx.redis.client, age), readers, ctx.duration_s)
    ctx.data["cache"] = {"readers": readers, "results": results}
