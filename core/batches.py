"""Batches of deductions, a part of `Ledger` (`deduct_many` is the Ledger's own method):
many `deduct`s in as few round trips as the topology allows, through deduct.lua's
`deduct_batch` function, each item decided as the single `deduct` would decide it.
"""
from __future__ import annotations

from typing import Any, Sequence

from redis.exceptions import RedisError

from . import validation as v
from .errors import InvalidRequest, LedgerError, TxnConflict
from .records import DeductRequest
from .result import Result
from .runner import DECIDED, decode, new_result

# deduct_many: items per deduct_batch call. One call saves each item a command's parsing,
# reply and client packing; the cap keeps one call short (Redis runs nothing else meanwhile).
BATCH_ITEMS_PER_CALL = 50


class Batches:
    """`deduct_many` of a `core.Ledger`, on its runner."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def deduct_many(self, requests: Sequence[DeductRequest]) -> list[Result | LedgerError]:
        """Run many deductions in as few round trips as the topology allows.

        Answers one item per request, in the same order. Each item is the `Result`
        the single `deduct` would give (same validation, idempotency and statuses),
        or, for a request that could not be decided, the *exception instance* that
        `deduct` would have raised (`InvalidRequest`, `TxnConflict`, `LedgerUnavailable`
        for an item Redis refused, e.g. out of memory) placed at its position instead of
        being raised, so one bad request never drops the others: every item is a
        `Result` or a `LedgerError`, never a raw redis-py exception. Check with
        ``isinstance(item, Result)``.

        All valid requests go out in one pipeline (on a Cluster, one per node) of
        `deduct_batch` calls: one call per partition and up to BATCH_ITEMS_PER_CALL
        items, each item decided by deduct.lua's own code. A connection failure
        retries the whole batch with the same txn ids, which is safe: every script is
        idempotent. If the deadline
        passes, `LedgerUnavailable` is raised for the batch: every outcome is unknown
        and the batch must be retried as it was.
        """
        out: list[Result | LedgerError | None] = [None] * len(requests)
        calls: list[tuple[int, list[str], list[Any], DeductRequest]] = []
        retention_s = self.ledger.retention_s
        for i, req in enumerate(requests):
            account_id, txn_id, amount = req.account_id, req.txn_id, req.amount_minor
            try:
                if type(amount) is not int or not 0 < amount <= v.MAX_AMOUNT_MINOR:   # the common case, fast
                    v.check_amount(amount, "amount_minor")
                part = self.ledger._common(account_id, txn_id, req.terminal_id, req.cashier_id)
                if req.card_no is not None:
                    v.check_id(req.card_no, "card_no", optional=True)
            except InvalidRequest as exc:
                out[i] = exc
                continue
            calls.append((i, part.deduct_keys(account_id, txn_id),
                          [txn_id, account_id, amount, retention_s, req.terminal_id or "", req.cashier_id or "",
                           req.card_no or ""],
                          req))
        if calls:
            self.runner.check_policy(txn_id=None)
            try:
                replies = self.runner.with_retry(self.runner.run_batched, "deduct",
                                                 [(keys, args) for _, keys, args, _ in calls],
                                                 BATCH_ITEMS_PER_CALL, txn_id=None)
            finally:
                if self.runner.read_cache.enabled:
                    for _, _, _, req in calls:
                        self.runner.read_cache.invalidate(req.account_id)
            for (i, _, _, req), reply in zip(calls, replies):
                if type(reply) is str:                # a decision 'status|balance|replayed|detail'
                    status_name, balance, replayed, detail = reply.split("|", 3)
                    status = DECIDED.get(status_name)
                    if status is not None:            # the common case, decoded here
                        out[i] = new_result(status, int(balance), replayed == "1", req.txn_id, req.account_id,
                                            "deduct", req.amount_minor, detail)
                        continue
                elif type(reply) is list:             # the array form (a script not converted)
                    status = DECIDED.get(reply[0])
                    if status is not None:
                        out[i] = new_result(status, int(reply[1]), reply[2] == 1, req.txn_id, req.account_id,
                                            "deduct", req.amount_minor, reply[3])
                        continue
                if isinstance(reply, RedisError):     # this item only (others were decided)
                    out[i] = self.runner.as_ledger_error(reply, req.txn_id)
                    continue
                try:
                    out[i] = decode(reply, "deduct", req.account_id, req.amount_minor, req.txn_id)
                except (InvalidRequest, TxnConflict) as exc:
                    out[i] = exc
        return out  # type: ignore[return-value]
