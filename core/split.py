"""Hot accounts split across slots: the part of the Ledger that turns one account into
N sub-balances ('<account_id>#<k>') on other hash slots, spends from them in an order
fixed by the txn id, moves funds between them with journaled, idempotent two-half
transfers, settles transfers a crash left half done, and merges them back.

`SplitAccounts` is a mixin of `core.ledger.Ledger` (it uses the Ledger's script runner,
retries and key schema); `SplitView` is one read of every sub-balance of an account.
The design, the journal fields and the one case where a covered amount can still be
declined are in docs/ledger.md ("Hot accounts split across slots").
"""
from __future__ import annotations

import time
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

from redis.exceptions import AskError, ClusterDownError, MovedError, NoScriptError

from . import validation as v
from .connection import is_cluster
from .errors import (AccountNotFound, InvalidRequest, LedgerNotInitialized, LedgerUnavailable,
                     TxnConflict)
from .keys import MAX_SHARDS, internal_id, shard_id
from .result import Result, Status, status_of

# A settled transfer's in-flight record is forgotten only once its receipt is this old,
# so that a balance() read running across the two halves never misses the money.
SETTLE_GRACE_MS = 5000


class SplitAccounts:
    """Split-account operations of the Ledger (a mixin: see the module docstring)."""

    def split_account(self, account_id: str, *, shards: int, txn_id: str,
                      terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Turn one hot account into `shards` sub-balances ('<account_id>#<k>') on other slots.

        Steps, each idempotent, so a retry with the same txn id completes whatever an
        earlier call left undone: open the shards (shard_admin.lua), mark the root split
        (split.lua, journaled 'split'), then move the root's available balance to the
        shards with transfers (journaled 'xfer_out' / 'xfer_in'). Afterwards
        deductions and holds visit the shards in an order fixed by their txn id
        (start = crc32(txn_id) % N, then the next ones), credits land on shard
        crc32(txn_id) % N; when no single shard covers an amount the total covers, the
        ledger settles transfers in flight, moves funds into the start shard and
        decides there. `balance()` / `available()` answer the total.

        Statuses: APPLIED (balance_minor = the total), ACCOUNT_NOT_FOUND, ALREADY_SPLIT,
        ACCOUNT_HAS_HOLDS (active holds on the account: resolve them first).
        """
        v.check_id(account_id, "account_id")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        if len(account_id) > 61:
            raise InvalidRequest("account_id", "at most 61 characters for a split account "
                                 "(a shard id adds '#<k>' and must fit 64)")
        if isinstance(shards, bool) or not isinstance(shards, int) or not 2 <= shards <= MAX_SHARDS:
            raise InvalidRequest("shards", f"must be an int from 2 to {MAX_SHARDS}")
        self._with_retry(self._check_policy, txn_id=txn_id)
        try:
            view = self._split_view(account_id, [txn_id], count=shards)
            if view.root is not None and not view.record(account_id, txn_id) and not view.sh:
                ops = [self._shard_admin_op(account_id, k, "open", txn_id, str(shards), view.root.status)
                       for k in range(shards)]
                self._check_replies(self._pipeline(ops))
            part = self.schema.partition_of(account_id)
            keys = [part.account(account_id), part.txn(txn_id), part.journal,
                    part.holds(account_id), part.hold_expiries(account_id)]
            args = [txn_id, account_id, 0, self.retention_s, terminal_id or "", cashier_id or "", shards]
            result = self._run("split", "split", keys, args, account_id, 0, txn_id)
            if result.applied:
                view = self._split_view(account_id, count=shards)
                if view.sh:
                    self._split_accounts[account_id] = max(view.sh, view.msh)
                    self._spread_root(view, txn_id)
            return result
        finally:
            self.read_cache.invalidate(account_id)

    def merge_account(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                      cashier_id: str | None = None) -> Result:
        """Fold a split account's sub-balances back into the root.

        Closes every shard (no new deductions, holds or credits land there), settles
        transfers in flight, moves each shard's money to the root, then marks the root
        plain again (merge.lua, journaled 'merge'). A retry with the same txn id finishes
        a merge a crash interrupted. For the retention afterwards, operations on the
        account first look for their txn id on the old shards (one extra round trip),
        so a retry of a txn decided on a shard replays.

        Statuses: APPLIED (balance_minor = the total, now all on the root),
        ACCOUNT_NOT_FOUND, NOT_SPLIT, ACCOUNT_HAS_HOLDS (active holds keep money on a
        shard; not stored: resolve them and run merge again; the shards stay closed).
        """
        v.check_id(account_id, "account_id")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        self._with_retry(self._check_policy, txn_id=txn_id)
        part = self.schema.partition_of(account_id)
        keys = [part.account(account_id), part.txn(txn_id), part.journal]
        try:
            for _ in range(5):
                view = self._split_view(account_id, [txn_id])
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    return self._run("merge", "merge", keys, [txn_id, account_id, 0, self.retention_s,
                                     terminal_id or "", cashier_id or "", 0], account_id, 0, txn_id)
                ops = [self._shard_admin_op(account_id, k, "close", txn_id)
                       for k in range(view.sh) if view.shard(k) is not None and not view.shard(k).closed]
                if ops:
                    self._check_replies(self._pipeline(ops))
                self.settle_transfers(account_id)
                view = self._split_view(account_id)
                if any(s.balance_minor > 0 for s in view.shard_subs()):
                    if any(s.balance_minor > s.available_minor for s in view.shard_subs()):
                        return Result(Status.ACCOUNT_HAS_HOLDS, view.total_minor, False, txn_id,
                                      account_id, "merge", 0)
                    continue
                reply = self._with_retry(self._script, "merge", keys,
                                         [txn_id, account_id, 0, self.retention_s, terminal_id or "",
                                          cashier_id or "", view.total_minor], txn_id=txn_id)
                if reply[0] == "MERGE_INCOMPLETE":
                    continue
                result = self._decode(reply, "merge", account_id, 0, txn_id)
                self._split_accounts[account_id] = max(view.sh, view.msh)
                return result
            raise LedgerUnavailable(f"account {account_id!r} kept changing during the merge", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def settle_transfers(self, account_id: str) -> int:
        """Complete internal transfers of a split (or merged) account that a crash left
        half done, sweep money on closed shards to the root, and forget transfers
        received more than `settle_grace_ms` ago. Safe to run at any time, by anyone
        (the ledger runs it before every rebalancing and in merge; the reconcile service
        may run it on every split account). Returns how many second halves it applied."""
        v.check_id(account_id, "account_id")
        view = self._split_view(account_id)
        if view.root is None:
            raise AccountNotFound(account_id)
        subs = {s.id: s for s in view.subs()}
        pending = [(xid, src.id, dest, amount) for src in subs.values()
                   for xid, (amount, dest, _) in src.in_flight.items()
                   if dest not in subs or xid not in subs[dest].received]
        completed, done_unmarked = 0, []
        if pending:
            replies = self._pipeline([self._xfer_op("xfer_in", xid, src, dest, amount, account_id, "")
                                      for xid, src, dest, amount in pending])
            self._check_replies(replies)
            for (xid, src, dest, _), reply in zip(pending, replies):
                if reply[0] == "APPLIED":
                    if reply[2]:
                        done_unmarked.append((src, xid))     # received long ago, mark already gone
                    else:
                        completed += 1
        sweeps = [(internal_id("sweep", s.id, s.last_journal_id, s.available_minor), s.id, account_id,
                   s.available_minor) for s in view.shard_subs() if s.closed and s.available_minor > 0]
        if sweeps:
            self._transfer_many(account_id, sweeps, "")
        now_ms = int(time.time() * 1000)
        old = lambda ms: now_ms - ms >= self.settle_grace_ms
        clear_src: dict[str, list[str]] = {}
        clear_dest: dict[str, list[str]] = {}
        for src, xid in done_unmarked:
            clear_src.setdefault(src, []).append(xid)
        flying = set()
        for src in subs.values():
            for xid, (_, dest, _) in src.in_flight.items():
                flying.add(xid)
                ms = subs[dest].received.get(xid) if dest in subs else None
                if ms is not None and old(ms):
                    clear_src.setdefault(src.id, []).append(xid)
                    clear_dest.setdefault(dest, []).append(xid)
        for dest in subs.values():
            for xid, ms in dest.received.items():
                if xid not in flying and old(ms):
                    clear_dest.setdefault(dest.id, []).append(xid)
        for clears, key_of in ((clear_src, "in_flight"), (clear_dest, "received")):   # source first
            ops = [("script", "xfer_clear",
                    [getattr(self.schema.partition_of(sub), key_of)(sub)], sorted(set(xids)))
                   for sub, xids in clears.items()]
            if ops:
                self._check_replies(self._pipeline(ops))
        return completed

    def transfer_out_only(self, account_id: str, source_id: str, dest_id: str, amount_minor: int,
                          transfer_id: str) -> str:
        """FOR TESTS: run only the first half of a transfer (as if the process died
        before the second). Returns the xfer id; `settle_transfers` completes it."""
        xid = internal_id("test", transfer_id)
        reply = self._pipeline([self._xfer_op("xfer_out", xid, source_id, dest_id, amount_minor,
                                              account_id, "")])[0]
        self._check_replies([reply])
        if reply[0] != "APPLIED":
            raise InvalidRequest("amount_minor", f"transfer declined: {reply[0]}")
        return xid

    def split_state(self, account_id: str) -> "SplitView":
        """Every sub-balance of an account as Redis holds it now (for operators and tests)."""
        v.check_id(account_id, "account_id")
        view = self._split_view(account_id)
        if view.root is None:
            raise AccountNotFound(account_id)
        return view

    # -- internals of split accounts

    @staticmethod
    def _split_marks(marks) -> bool:
        sh, msh, mx = (m or "" for m in marks)
        return bool(sh) or (bool(msh) and int(mx or 0) > time.time() * 1000)

    def _sub_keys(self, sub_id: str) -> list[str]:
        part = self.schema.partition_of(sub_id)
        return [part.account(sub_id), part.holds(sub_id), part.hold_expiries(sub_id),
                part.in_flight(sub_id), part.received(sub_id)]

    def _split_view(self, account_id: str, txn_ids: Sequence[str] = (), *, count: int | None = None) -> "SplitView":
        """The root and shards 0..count-1 (sub_balance.lua each) and the records of
        `txn_ids` in each of their slots, in one pipeline (one per node on a Cluster).
        Reads again when the root says there are more shards than were read."""
        count = count if count is not None else self._split_accounts.get(account_id) or MAX_SHARDS
        fields = ("f", "s", "b", "j", "ph")
        while True:
            ids = [account_id] + [shard_id(account_id, k) for k in range(count)]
            ops: list[tuple] = []
            for sub in ids:
                ops.append(("script", "sub_balance", self._sub_keys(sub), []))
                part = self.schema.partition_of(sub)
                ops.extend(("hmget", part.sub_txn(sub, t), fields) for t in txn_ids)
            replies = self._pipeline(ops)
            self._check_replies(replies)
            view = SplitView(account_id)
            step = 1 + len(txn_ids)
            for i, sub in enumerate(ids):
                view.add(sub, replies[i * step], {t: dict(zip(fields, r))
                                                  for t, r in zip(txn_ids, replies[i * step + 1:(i + 1) * step])})
            wanted = max(view.sh, view.msh)
            if wanted <= count:
                return view
            count = wanted

    def _pipeline(self, ops: Sequence[tuple]) -> list:
        """Run ("script", name, keys, args) / ("hmget", key, fields) operations in one
        pipeline (one per node on a Cluster), with retries; replies in order. Every
        script is idempotent, so a retried or NOSCRIPT-repeated batch is safe."""
        def run():
            if not is_cluster(self.client):
                return self._run_ops(self.client, ops)
            by_node: dict[str, tuple[Any, list[int]]] = {}
            for pos, op in enumerate(ops):
                node = self.client.get_node_from_key(op[2][0] if op[0] == "script" else op[1])
                by_node.setdefault(node.name, (node, []))[1].append(pos)
            replies: list = [None] * len(ops)
            for node, positions in by_node.values():
                try:
                    node_replies = self._run_ops(node.redis_connection, [ops[p] for p in positions])
                except (MovedError, AskError) as exc:
                    self.client.nodes_manager.initialize()
                    raise ClusterDownError(str(exc)) from exc
                for p, reply in zip(positions, node_replies):
                    replies[p] = reply
            return replies
        return self._with_retry(run, txn_id=None) if ops else []

    def _run_ops(self, client, ops) -> list:
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            for op in ops:
                if op[0] == "script":
                    script = self.scripts[op[1]]
                    pipe.evalsha(script.sha, len(op[2]), *op[2], *op[3])
                else:
                    pipe.hmget(op[1], *op[2])
            replies = pipe.execute(raise_on_error=False)
            missing = {op[1] for op, r in zip(ops, replies) if isinstance(r, NoScriptError)}
            if not missing:
                break
            for name in missing:
                self.scripts.load(client, self.scripts[name])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    @staticmethod
    def _check_replies(replies) -> None:
        for reply in replies:
            if isinstance(reply, list) and reply and reply[0] == "INVALID":
                field, _, reason = reply[3].partition(": ")
                raise InvalidRequest(field, reason)
            if isinstance(reply, list) and reply and reply[0] == "NOT_INITIALIZED":
                raise LedgerNotInitialized("a shard's journal partition is missing")

    def _shard_admin_op(self, account_id: str, k: int, op: str, origin: str, n: str = "",
                        status: str = "") -> tuple:
        sid = shard_id(account_id, k)
        part = self.schema.partition_of(sid)
        xid = internal_id(op, origin, sid)
        return ("script", "shard_admin", [part.account(sid), part.sub_txn(sid, xid), part.journal, part.accounts],
                [xid, sid, 0, self.retention_s, "", "", op, n, status, origin])

    def _xfer_op(self, script: str, xid: str, src: str, dest: str, amount_minor: int, root: str,
                 origin: str) -> tuple:
        if script == "xfer_out":
            part = self.schema.partition_of(src)
            return ("script", script, [part.account(src), part.sub_txn(src, xid), part.journal, part.holds(src),
                                       part.hold_expiries(src), part.in_flight(src)],
                    [xid, src, amount_minor, self.retention_s, "", "", dest, root, origin])
        part = self.schema.partition_of(dest)
        return ("script", script, [part.account(dest), part.sub_txn(dest, xid), part.journal, part.received(dest)],
                [xid, dest, amount_minor, self.retention_s, "", "", src, root, origin])

    def _transfer_many(self, account_id: str, moves, origin: str) -> int:
        """Both halves of each (xfer_id, source, dest, amount) move; returns the amount moved."""
        outs = self._pipeline([self._xfer_op("xfer_out", *m, account_id, origin) for m in moves])
        self._check_replies(outs)
        done = [m for m, r in zip(moves, outs) if r[0] == "APPLIED"]
        if done:
            self._check_replies(self._pipeline([self._xfer_op("xfer_in", *m, account_id, origin)
                                                for m in done]))
        return sum(m[3] for m in done)

    def _spread_root(self, view: "SplitView", origin: str) -> None:
        """Move the root's available balance to the shards in equal parts."""
        available = view.root.available_minor if view.root else 0
        if available <= 0 or not view.sh:
            return
        share, rest = divmod(available, view.sh)
        moves = []
        for k in range(view.sh):
            amount = share + (rest if k == 0 else 0)
            if amount > 0:
                sid = shard_id(view.account_id, k)
                moves.append((internal_id("split", origin, sid, amount), view.account_id, sid, amount))
        self._transfer_many(view.account_id, moves, origin)

    def _rebalance(self, view: "SplitView", target: int, amount_minor: int, origin: str) -> int:
        """Move funds from other sub-balances into shard `target` so it covers the amount,
        when the total available does. Transfer ids derive from the txn id, the source
        and the amount, so a retry that computes the same move replays it."""
        sid = shard_id(view.account_id, target)
        tgt = view.sub(sid)
        if tgt is None or tgt.closed:       # a merge is under way: the root decides, fed by the sweep
            return 0
        need = amount_minor - tgt.available_minor
        sources = sorted((s for s in view.subs() if s.id != sid and s.available_minor > 0),
                         key=lambda s: -s.available_minor)
        if need <= 0 or sum(s.available_minor for s in sources) < need:
            return 0
        moves = []
        for s in sources:
            take = min(s.available_minor, need)
            moves.append((internal_id("rebalance", origin, s.id, sid, take), s.id, sid, take))
            need -= take
            if need == 0:
                break
        return self._transfer_many(view.account_id, moves, origin)

    def _sync_status(self, view: "SplitView") -> None:
        """Copy the root's status to shards that differ (a freeze interrupted half way)."""
        op = "freeze" if view.root.status == "frozen" else "unfreeze"
        origin = internal_id("sync", view.root.last_journal_id)
        ops = [self._shard_admin_op(view.account_id, k, op, origin)
               for k in range(view.sh) if view.shard(k) and view.shard(k).status != view.root.status]
        if ops:
            self._check_replies(self._pipeline(ops))

    def _propagate_status(self, account_id: str, op: str, txn_id: str) -> None:
        if not isinstance(account_id, str):
            return
        part = self.schema.partition_of(account_id)
        sh = self._with_retry(self.client.hget, part.account(account_id), "sh", txn_id=txn_id)
        if sh:
            self._split_accounts[account_id] = max(int(sh), self._split_accounts.get(account_id, 0))
            self._check_replies(self._pipeline([self._shard_admin_op(account_id, k, op, txn_id)
                                                for k in range(int(sh))]))

    def _replay_from_shards(self, view: "SplitView", txn_id: str, kind: str, expected_tail: str,
                            amount_minor: int, *, passes: bool = True) -> Result | None:
        """The stored final decision of `txn_id` on one of the shards, if any (raises
        TxnConflict when a shard holds it for another request)."""
        for sub in view.shard_subs(include_missing=True):
            rec = view.records.get((sub, txn_id)) or {}
            if not rec.get("f"):
                continue
            expected = f"{kind}|{sub}|{expected_tail}"
            if rec["f"] != expected:
                raise TxnConflict(txn_id, rec["f"], expected)
            if rec["s"] != "PASS":
                return Result(Status(status_of(rec["s"])), int(rec["b"]), True, txn_id, view.account_id, kind,
                              amount_minor, rec.get("j") or "")
        return None

    def _split_spend(self, kind: str, account_id: str, amount_minor: int, txn_id: str,
                     terminal_id: str | None, cashier_id: str | None, hold_ttl_s: int = 0) -> Result:
        v.check_amount(amount_minor, "amount_minor")
        self._common(account_id, txn_id, terminal_id, cashier_id)
        self._with_retry(self._check_policy, txn_id=txn_id)
        tail = f"{amount_minor}" + (f"|{hold_ttl_s}" if kind == "hold" else "")
        extra = [hold_ttl_s] if kind == "hold" else []
        root_op = lambda: self._balance_op(kind, account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                           extra_keys=self._hold_keys(account_id),
                                           extra_args=[*extra, "1"])
        try:
            for _ in range(4):
                view = self._split_view(account_id, [txn_id])
                found = self._replay_from_shards(view, txn_id, kind, tail, amount_minor)
                if found:
                    return found
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    if view.root is not None and not view.msh:
                        self._split_accounts.pop(account_id, None)    # plain again for good
                    return root_op()
                n = view.sh
                if any(s.status != view.root.status for s in view.shard_subs()):
                    self._sync_status(view)
                start = zlib.crc32(txn_id.encode()) % n
                order = [(start + i) % n for i in range(n)]
                stale = False
                for phase in (0, 1):
                    if phase == 1:
                        self.settle_transfers(account_id)
                        view = self._split_view(account_id)
                        if self._rebalance(view, start, amount_minor, txn_id):
                            view = self._split_view(account_id)
                    for k in (order if phase == 0 else order[:1]):
                        sid = shard_id(account_id, k)
                        rec = view.records.get((sid, txn_id)) or {}
                        if phase == 0 and rec.get("s") == "PASS":
                            continue
                        sub = view.sub(sid)
                        others = (view.available_minor - sub.available_minor if kind == "hold"
                                  else view.total_minor - sub.balance_minor) if sub else view.total_minor
                        part = self.schema.partition_of(sid)
                        keys = [part.account(sid), part.sub_txn(sid, txn_id), part.journal, part.holds(sid),
                                part.hold_expiries(sid)]
                        args = [txn_id, sid, amount_minor, self.retention_s, terminal_id or "",
                                cashier_id or "", kind, phase, n, others, hold_ttl_s]
                        reply = self._with_retry(self._script, "shard_spend", keys, args,
                                                 txn_id=txn_id)
                        if reply[0] == "STALE":
                            stale = True
                            break
                        if reply[0] != "PASS":
                            return self._decode(reply, kind, account_id, amount_minor, txn_id)
                    if stale:
                        break
                if stale:
                    self._split_accounts.pop(account_id, None)
                    continue
                return root_op()            # the start shard is closed: a merge is under way
            raise LedgerUnavailable(f"split account {account_id!r} kept changing", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def _split_credit(self, kind, account_id, amount_minor, txn_id, original, terminal_id, cashier_id) -> Result:
        v.check_amount(amount_minor, "amount_minor")
        self._common(account_id, txn_id, terminal_id, cashier_id)
        self._with_retry(self._check_policy, txn_id=txn_id)
        root_op = lambda: self._balance_op("credit", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                           extra_args=[kind, original, "1"], kind=kind)
        try:
            for _ in range(4):
                view = self._split_view(account_id, [txn_id])
                found = self._replay_from_shards(view, txn_id, kind, f"{amount_minor}|{original}", amount_minor)
                if found:
                    return found
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    if view.root is not None and not view.msh:
                        self._split_accounts.pop(account_id, None)    # plain again for good
                    return root_op()
                sid = shard_id(account_id, zlib.crc32(txn_id.encode()) % view.sh)
                sub = view.sub(sid)
                if sub is None or sub.closed:
                    return root_op()
                part = self.schema.partition_of(sid)
                keys = [part.account(sid), part.sub_txn(sid, txn_id), part.journal]
                args = [txn_id, sid, amount_minor, self.retention_s, terminal_id or "", cashier_id or "",
                        kind, original, "1"]
                reply = self._with_retry(self._script, "credit", keys, args, txn_id=txn_id)
                if reply[0] == "SHARD_CLOSED":
                    continue
                result = self._decode(reply, kind, account_id, amount_minor, txn_id)
                others = view.total_minor - sub.balance_minor
                return Result(result.status, result.balance_minor + others, result.replayed, txn_id,
                              account_id, kind, amount_minor, result.journal_id)
            raise LedgerUnavailable(f"split account {account_id!r} kept changing", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def _split_refund(self, account_id, amount_minor, txn_id, original, terminal_id, cashier_id) -> Result:
        try:
            view = self._split_view(account_id, [txn_id, original])
            found = self._replay_from_shards(view, txn_id, "refund", f"{amount_minor}|{original}", amount_minor)
            if found:
                return found
            holder = None
            for sub in view.shard_subs(include_missing=True):
                rec = view.records.get((sub, original)) or {}
                if status_of(rec.get("s")) == "APPLIED" and (rec.get("f") or "").startswith((f"deduct|{sub}|", f"capture|{sub}|")):
                    holder = sub
            part = self.schema.partition_of(holder or account_id)
            acct = holder or account_id
            keys = [part.account(acct), part.sub_txn(acct, txn_id), part.journal, part.sub_txn(acct, original)]
            args = [txn_id, acct, amount_minor, self.retention_s, terminal_id or "", cashier_id or "",
                    original, "1"]
            result = self._run("refund", "refund", keys, args, account_id, amount_minor, txn_id)
            sub = view.sub(holder) if holder else None
            if sub is not None and sub.closed and result.applied:
                self.settle_transfers(account_id)        # a merged account: the refund goes to the root
            if holder and sub is not None:
                return Result(result.status, result.balance_minor + view.total_minor - sub.balance_minor,
                              result.replayed, txn_id, account_id, "refund", amount_minor, result.journal_id)
            return result
        finally:
            self.read_cache.invalidate(account_id)

    def _split_resolve_hold(self, script, hold_txn_id, amount_minor, txn_id, account_id, terminal_id,
                            cashier_id) -> Result:
        view = self._split_view(account_id, [txn_id, hold_txn_id])
        found = self._replay_from_shards(view, txn_id, script, f"{amount_minor}|{hold_txn_id}", amount_minor)
        if found:
            return found
        holder = None
        for sub in view.shard_subs(include_missing=True):
            rec = view.records.get((sub, hold_txn_id)) or {}
            if status_of(rec.get("s")) == "APPLIED" and (rec.get("f") or "").startswith(f"hold|{sub}|"):
                holder = sub
        if holder is None:
            return self._resolve_hold_on(account_id, script, hold_txn_id, amount_minor, txn_id,
                                         terminal_id, cashier_id, routed="1")
        result = self._resolve_hold_on(account_id, script, hold_txn_id, amount_minor, txn_id,
                                       terminal_id, cashier_id, routed="1", sub_id=holder)
        sub = view.sub(holder)
        others = view.total_minor - sub.balance_minor if sub else 0
        return Result(result.status, result.balance_minor + others, result.replayed, txn_id, account_id,
                      script, amount_minor, result.journal_id)

    def _run_sub(self, script, kind, keys, args, account_id, amount_minor, txn_id) -> Result:
        return self._run(script, kind, keys, args, account_id, amount_minor, txn_id)


@dataclass(frozen=True, slots=True)
class SubBalance:
    """One sub-balance of a split account (the root or a shard) read at one instant."""
    id: str
    balance_minor: int
    available_minor: int
    status: str
    closed: bool
    last_journal_id: str
    in_flight: dict            # xfer id -> (amount_minor, dest id, sent ms)
    received: dict             # xfer id -> received ms


@dataclass
class SplitView:
    """An account's root and shards, and some txn records in their slots.

    On a Cluster the sub-balances are read on several nodes, not as one snapshot: a
    read running while a transfer completes may count it twice for that read, never
    zero times (the in-flight record stays until its receipt is `settle_grace_ms` old).
    """
    account_id: str
    root: SubBalance | None = None
    sh: int = 0
    msh: int = 0
    subs_by_id: dict = None
    records: dict = None

    def __post_init__(self):
        self.subs_by_id, self.records = {}, {}

    def add(self, sub_id: str, reply, records: dict) -> None:
        for t, rec in records.items():
            if rec.get("f"):
                self.records[(sub_id, t)] = rec
        if not reply:
            return
        pairs = lambda flat: dict(zip(flat[::2], flat[1::2]))
        in_flight = {x: (int(val.split("|")[0]), val.split("|")[1], int(val.split("|")[2]))
                     for x, val in pairs(reply[6]).items()}
        sub = SubBalance(sub_id, int(reply[0]), int(reply[1]), reply[2], bool(int(reply[3])), reply[5],
                         in_flight, {x: int(ms) for x, ms in pairs(reply[7]).items()})
        self.subs_by_id[sub_id] = sub
        if sub_id == self.account_id:
            self.root = sub
            self.sh = int(reply[8] or 0)
            self.msh = int(reply[9] or 0) if (reply[8] or int(reply[10] or 0) > time.time() * 1000) else 0

    def sub(self, sub_id: str) -> SubBalance | None:
        return self.subs_by_id.get(sub_id)

    def shard(self, k: int) -> SubBalance | None:
        return self.subs_by_id.get(shard_id(self.account_id, k))

    def subs(self) -> list[SubBalance]:
        return list(self.subs_by_id.values())

    def shard_subs(self, include_missing: bool = False):
        if include_missing:
            return [shard_id(self.account_id, k) for k in range(MAX_SHARDS)]
        return [s for s in self.subs_by_id.values() if s.id != self.account_id]

    def record(self, sub_id: str, txn_id: str) -> dict | None:
        return self.records.get((sub_id, txn_id))

    @property
    def in_flight_minor(self) -> int:
        """Money that left one sub-balance and has not (as read) reached the other."""
        return sum(amount for s in self.subs_by_id.values() for x, (amount, dest, _) in s.in_flight.items()
                   if x not in (self.subs_by_id[dest].received if dest in self.subs_by_id else {}))

    @property
    def total_minor(self) -> int:
        return sum(s.balance_minor for s in self.subs_by_id.values()) + self.in_flight_minor

    @property
    def available_minor(self) -> int:
        return sum(s.available_minor for s in self.subs_by_id.values()) + self.in_flight_minor
