"""A recorded history of ledger requests and the invariants it must satisfy (issue 12).

Clients (the multi-process workload in `workload.py`, the hypothesis state machine in
`test_history.py`) describe every call as a `Request`, run it with `execute` and keep
*every* answer they got as a record (a `Result`, or the exception's type). `check`
judges the records together with the Redis journal, read raw (an inexact number must
be seen, not crash the reader), and the balances Redis holds at the end; `check_database`
judges the database of record after `reconcile-service run --once`. Each check that
fails is a `Violation` naming the invariant, so a failing seed says which one.

The checker is the oracle: it does not re-implement the ledger's decisions (concurrent
clients make those depend on timing); it checks that the answers, the journal and the
balances tell one consistent story: one decision per txn id, every applied answer in the
journal once with its exact amounts, the balance arithmetic of every entry, no
overdraft of the available balance, nothing applied while frozen, a hold resolved at
most once and before its expiry, refunds within their charge.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from core import DeductRequest, InvalidRequest, LedgerUnavailable, Result, TxnConflict
from core.journal_codec import read_range
from core.sales import decode_tenders

OPS = ("open", "deduct", "credit", "refund", "hold", "capture", "void", "freeze", "unfreeze", "sale",
       "tender_refund")
# offline settlement (issue 27): `ref` is the till; every sale of a history claims this time,
# so each (account, till) has one window of the server's bound
OFFLINE_MADE_AT_MS = 1_700_000_000_000
OFFLINE_KINDS = ("offline", "offline_debt")
# kinds refused while an offline debt is open
BLOCKED_WHILE_DEBT = ("deduct", "hold", "sale")
# kinds the ledger journals under its own txn ids (never a client's)
INTERNAL_KINDS = ("hold_expire", "compensate")
# kinds refused on a frozen account (refunds, captures, voids and repairs go through)
BLOCKED_WHEN_FROZEN = ("deduct", "credit", "hold", "sale")
_DIGITS = re.compile(r"-?[0-9]+")
# journal ts and a script's clock read can differ by a millisecond or two: a hold whose
# expiry is this close to an entry's ts may count either way, so it is not judged there
_EXPIRY_SLACK_MS = 5


@dataclass(frozen=True)
class Request:
    """One call a client makes. `ref` is the original (refund) or the hold (capture/void)."""
    op: str
    txn_id: str
    account_id: str | None
    amount_minor: int = 0
    ref: str = ""
    ttl_s: int = 0
    retention_s: int = 0          # != 0: sent through a ledger with this (short) retention
    tenders: str = ""             # sale: its other tenders ('cash:100;wechat:20'); tender_refund: the method
    total_minor: int = 0          # sale: card leg (amount_minor) + tenders

    def key(self, account_of_hold: dict[str, str] | None = None) -> tuple:
        """What makes two requests "the same request" (the scripts' fingerprint)."""
        account = self.account_id
        if account is None and self.op in ("capture", "void"):
            account = (account_of_hold or {}).get(self.ref, "?")
        amount = 0 if self.op in ("void", "freeze", "unfreeze") else self.amount_minor
        if self.op in ("sale", "tender_refund"):
            return (self.op, account, amount, self.ref, self.ttl_s, self.tenders, self.total_minor)
        return (self.op, account, amount, self.ref, self.ttl_s)


def same_request(a: tuple, b: tuple) -> bool:
    """Keys equal, where a capture/void whose hold's account is unknown ('?') matches any account."""
    return all(x == y or (i == 1 and "?" in (x, y)) for i, (x, y) in enumerate(zip(a, b)))


def answer_of(outcome) -> dict:
    """A JSON-able record of what one call answered (a Result or an exception)."""
    if isinstance(outcome, Result):
        return {"type": "result", "status": outcome.status.value, "balance_minor": outcome.balance_minor,
                "replayed": outcome.replayed, "journal_id": outcome.journal_id, "debt_minor": outcome.debt_minor}
    if isinstance(outcome, TxnConflict):
        return {"type": "conflict"}
    if isinstance(outcome, InvalidRequest):
        return {"type": "invalid", "field": outcome.field}
    if isinstance(outcome, LedgerUnavailable):
        return {"type": "unavailable"}
    return {"type": "raw_error", "error": f"{type(outcome).__module__}.{type(outcome).__name__}: {outcome}"}


def execute(ledger, req: Request):
    """Run one request; answers the Result or the exception instance (never raises for a
    ledger answer, so every outcome can be recorded)."""
    try:
        if req.op == "open":
            return ledger.open_account(req.account_id, txn_id=req.txn_id, initial_minor=req.amount_minor)
        if req.op == "deduct":
            return ledger.deduct(req.account_id, req.amount_minor, txn_id=req.txn_id, terminal_id="T1")
        if req.op == "credit":
            return ledger.credit(req.account_id, req.amount_minor, txn_id=req.txn_id)
        if req.op == "refund":
            return ledger.refund(req.account_id, req.amount_minor, txn_id=req.txn_id, original_txn_id=req.ref)
        if req.op == "hold":
            return ledger.hold(req.account_id, req.amount_minor, txn_id=req.txn_id, ttl_s=req.ttl_s)
        if req.op == "capture":
            return ledger.capture(req.ref, req.amount_minor, txn_id=req.txn_id, account_id=req.account_id)
        if req.op == "void":
            return ledger.void(req.ref, txn_id=req.txn_id, account_id=req.account_id)
        if req.op == "sale":
            return ledger.sale(req.account_id, req.amount_minor, decode_tenders(req.tenders), txn_id=req.txn_id,
                               total_minor=req.total_minor, terminal_id="T1")
        if req.op == "tender_refund":
            return ledger.tender_refund(req.account_id, req.amount_minor, txn_id=req.txn_id,
                                        original_txn_id=req.ref, method=req.tenders)
        if req.op == "offline":
            return ledger.offline_deduct(req.account_id, req.amount_minor, txn_id=req.txn_id,
                                         terminal_id=req.ref or "T1", cashier_id="C1",
                                         made_at_ms=OFFLINE_MADE_AT_MS)
        if req.op == "freeze":
            return ledger.freeze(req.account_id, txn_id=req.txn_id)
        if req.op == "unfreeze":
            return ledger.unfreeze(req.account_id, txn_id=req.txn_id)
    except Exception as exc:          # noqa: BLE001 - every answer is recorded and judged
        return exc
    raise AssertionError(req.op)


def execute_many(ledger, reqs: list[Request]) -> list:
    """`deduct_many` of deduct requests: one outcome per request (or the batch's exception)."""
    try:
        out = ledger.deduct_many([DeductRequest(r.account_id, r.amount_minor, r.txn_id, terminal_id="T1")
                                  for r in reqs])
    except Exception as exc:          # noqa: BLE001
        return [exc] * len(reqs)
    if len(out) != len(reqs):
        return [AssertionError(f"deduct_many answered {len(out)} items for {len(reqs)}")] * len(reqs)
    return out


def record(client: str, seq: int, req: Request, outcome, *, via: str = "single") -> dict:
    return {"client": client, "seq": seq, "via": via, "req": asdict(req), "answer": answer_of(outcome)}


@dataclass
class Violation:
    invariant: str
    detail: str
    evidence: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return f"[{self.invariant}] {self.detail} {self.evidence or ''}"


def read_journal(client, stream_keys: list[str], after: dict[str, str] | None = None) -> list[dict]:
    """Every entry of the streams, raw fields plus 'id' and 'stream', in stream order."""
    out = []
    for key in stream_keys:
        start = "(" + after[key] if after and after.get(key) else "-"
        while True:
            page = read_range(client, key, start, "+", count=5000)
            for eid, fields in page:
                out.append({"id": eid, "stream": key, **fields})
            if len(page) < 5000:
                break
            start = "(" + page[-1][0]
    return out


def _int(entry: dict, name: str) -> int | None:
    value = entry.get(name)
    return int(value) if isinstance(value, str) and _DIGITS.fullmatch(value) else None


_SIGN = {"open": 1, "credit": 1, "refund": 1, "compensate": 1, "deduct": -1, "capture": -1, "sale": -1,
         "offline": -1}


def check(records: list[dict], journal: list[dict], redis_accounts: dict[str, tuple[int, str]], *,
          available_reads: dict[str, tuple[int, int, int, int]] | None = None,
          expected_duplicates: set[str] = frozenset(),
          redis_debts: dict[str, int] | None = None) -> list[Violation]:
    """Judge a history. `redis_accounts`: account -> (balance, status) read at the end;
    `redis_debts`: account -> its open offline debt read at the end (offline settlement:
    each offline txn applied once, debt = exactly the overdraw, paid first by a top-up, no
    spending while open, never a negative balance);
    `available_reads`: account -> (balance, available, redis ms before, redis ms after) read
    at the end; `expected_duplicates`: txn ids that a client re-sent after its
    idempotency record's retention (documented to apply again; reconcile reverses them)."""
    v: list[Violation] = []
    reqs = [Request(**r["req"]) for r in records]

    # -- answers are of the contract's types only
    for r in records:
        if r["answer"]["type"] == "raw_error":
            v.append(Violation("contract_types", f"{r['req']['op']} {r['req']['txn_id']} raised outside "
                               "the contract", {"error": r["answer"]["error"], "via": r["via"]}))

    account_of_hold: dict[str, str] = {}
    for req, r in zip(reqs, records):
        if req.op == "hold" and r["answer"]["type"] == "result":
            account_of_hold.setdefault(req.txn_id, req.account_id)

    # -- one decision per txn id, kept forever; a reused id never decides a second request
    by_txn: dict[str, list[tuple[Request, dict]]] = defaultdict(list)
    for req, r in zip(reqs, records):
        by_txn[req.txn_id].append((req, r))
    winner: dict[str, tuple[Request, dict]] = {}
    applied_ids: dict[str, set[str]] = {}
    unknown: set[str] = set()
    for txn, items in by_txn.items():
        results = [(q, r) for q, r in items if r["answer"]["type"] == "result"]
        keys_decided = []
        for q, _ in results:
            k = q.key(account_of_hold)
            if not any(same_request(k, o) for o in keys_decided):
                keys_decided.append(k)
        if len(keys_decided) > 1:
            v.append(Violation("reuse_applied_twice", f"txn {txn} decided for {len(keys_decided)} different "
                               "requests", {"requests": keys_decided}))
        answers = {(r["answer"]["status"], r["answer"]["balance_minor"], r["answer"]["journal_id"])
                   for _, r in results}
        if len(answers) > 1 and txn not in expected_duplicates:
            v.append(Violation("identical_answers", f"txn {txn} answered {len(answers)} different decisions",
                               {"answers": sorted(answers, key=str),
                                "requests": sorted({str(q.key(account_of_hold)) for q, _ in results})}))
        for q, r in items:
            kind = r["answer"]["type"]
            k = q.key(account_of_hold)
            if kind == "conflict" and keys_decided and any(same_request(k, o) for o in keys_decided):
                v.append(Violation("identical_answers", f"txn {txn}: TxnConflict for the request it decided",
                                   {"request": k}))
            # capture/void without account_id of a hold not found: refused, nothing decided
            # (InvalidRequest naming hold_txn_id); a retry once the hold exists may decide
            undecided = q.op in ("capture", "void") and q.account_id is None and \
                r["answer"].get("field") == "hold_txn_id"
            if kind == "invalid" and not undecided and \
                    any(same_request(k, q2.key(account_of_hold)) for q2, _ in results):
                v.append(Violation("validation_deterministic", f"txn {txn}: one request both refused as "
                                   "invalid and decided", {"request": k, "field": r["answer"]["field"]}))
        conflicts = [q for q, r in items if r["answer"]["type"] == "conflict"]
        if conflicts and not results and not any(r["answer"]["type"] == "unavailable" for _, r in items):
            v.append(Violation("reuse_applied_twice", f"txn {txn}: TxnConflict but no request of it was "
                               "ever decided", {"requests": [q.key(account_of_hold) for q in conflicts]}))
        if results:
            winner[txn] = results[0]
            applied_ids[txn] = {r["answer"]["journal_id"] for _, r in results
                                if r["answer"]["status"] == "APPLIED"}
        elif any(r["answer"]["type"] == "unavailable" for _, r in items):
            unknown.add(txn)      # never answered: applied once or not at all

    # -- the journal: exact numbers, every applied answer once, nothing else but internal entries
    by_jtxn: dict[str, list[dict]] = defaultdict(list)
    for e in journal:
        for name in ("amt", "bal", "held", "exp", "ts"):
            if name in e and _int(e, name) is None:
                v.append(Violation("journal_exact", f"entry {e['id']} ({e.get('kind')} {e.get('txn')}) "
                                   f"field {name}={e[name]!r} is not exact integer digits", {"entry": e}))
        by_jtxn[e.get("txn", "")].append(e)
    client_txns = set(by_txn)
    for txn, entries in by_jtxn.items():
        kinds = {e.get("kind") for e in entries}
        if len(entries) > 1 and txn not in expected_duplicates:
            v.append(Violation("journal_once", f"txn {txn} journaled {len(entries)} times",
                               {"entries": [(e["id"], e.get("kind"), e.get("acct"), e.get("amt")) for e in entries]}))
        if txn in client_txns and kinds & set(INTERNAL_KINDS):
            v.append(Violation("internal_namespace", f"the ledger journaled its own {sorted(kinds & set(INTERNAL_KINDS))} "
                               f"entry under txn id {txn}, which a client also used",
                               {"client_requests": sorted({str(q.key(account_of_hold)) for q, _ in by_txn[txn]})}))
        if txn not in client_txns and not kinds <= set(INTERNAL_KINDS):
            v.append(Violation("journal_only_applied", f"txn {txn} journaled ({kinds}) but no client sent it"))
    for txn, (q, r) in winner.items():
        client_entries = [e for e in by_jtxn.get(txn, []) if e.get("kind") not in INTERNAL_KINDS]
        if r["answer"]["status"] != "APPLIED":
            if client_entries:
                v.append(Violation("journal_only_applied", f"txn {txn} answered {r['answer']['status']} but "
                                   "journaled", {"entries": [e["id"] for e in client_entries]}))
            continue
        ids = {e["id"] for e in client_entries}
        if ids != applied_ids[txn]:
            v.append(Violation("applied_in_journal_once", f"txn {txn}: answered journal ids "
                               f"{sorted(applied_ids[txn])}, journal has {sorted(ids)}"))
        for e in client_entries:
            expected_acct = q.account_id or account_of_hold.get(q.ref)
            amount = _SIGN.get(q.op, 0) * q.amount_minor
            # an offline charge journals what the balance covered (the rest is its debt, dt); a
            # top-up what the balance got (the rest paid a debt, dp)
            kind_seen = "offline" if q.op == "offline" and e.get("kind") in OFFLINE_KINDS else e.get("kind")
            moved = (_int(e, "amt") or 0) - (_int(e, "dt") or 0) + (_int(e, "dp") or 0)
            if (kind_seen, e.get("acct"), moved) != (q.op, expected_acct, amount):
                v.append(Violation("applied_in_journal_once", f"txn {txn}: journal entry does not match the "
                                   "request", {"entry": e, "request": q.key(account_of_hold)}))
            if q.op == "sale" and (e.get("tn"), _int(e, "tot")) != (q.tenders, q.total_minor):
                v.append(Violation("sale_whole", f"sale {txn}: journaled tenders {e.get('tn')} / total "
                                   f"{e.get('tot')}, requested {q.tenders} / {q.total_minor}"))
            if q.op == "tender_refund" and (e.get("m"), _int(e, "ta")) != (q.tenders, q.amount_minor):
                v.append(Violation("applied_in_journal_once", f"tender refund {txn}: journaled {e.get('m')} "
                                   f"{e.get('ta')}, requested {q.tenders} {q.amount_minor}"))
            if q.op == "hold" and _int(e, "held") != q.amount_minor:
                v.append(Violation("applied_in_journal_once", f"hold {txn}: held {e.get('held')} != {q.amount_minor}"))
            answered = [x["answer"]["balance_minor"] for _, x in by_txn[txn]
                        if x["answer"]["type"] == "result" and x["answer"]["journal_id"] == e["id"]]
            if q.op != "hold" and _int(e, "bal") is not None and answered and answered[0] != _int(e, "bal"):
                v.append(Violation("identical_answers", f"txn {txn}: answered balance {answered[0]}, "
                                   f"journal says {e.get('bal')}"))

    # -- every account's entries, in journal order
    state: dict[str, dict] = {}
    hold_answers = {txn: r["answer"]["balance_minor"] for txn, (q, r) in winner.items()
                    if q.op == "hold" and r["answer"]["status"] == "APPLIED"}
    compensated: dict[str, int] = defaultdict(int)
    tainted: set[str] = set()     # accounts with an inexact entry (reported): their arithmetic is unknown
    for e in journal:
        acct, kind, txn = e.get("acct"), e.get("kind"), e.get("txn")
        # the entry's time: its stream id's ms (older scripts also wrote it as `ts`)
        amt, bal = _int(e, "amt"), _int(e, "bal")
        ts = _int(e, "ts") if "ts" in e else int(str(e.get("id", "0-0")).split("-")[0])
        if amt is None or bal is None:
            tainted.add(acct)                          # reported as journal_exact
            continue
        if acct in tainted:
            continue
        s = state.get(acct)
        if s is None:
            if kind != "open":
                v.append(Violation("balance_arithmetic", f"{kind} {txn} on {acct} before its opening"))
                continue
            s = state[acct] = {"bal": 0, "frozen": False, "holds": {}, "charges": {}, "refunded": defaultdict(int),
                               "tenders": {}, "tenders_back": defaultdict(int), "debt": 0}
        active = {h: x for h, x in s["holds"].items() if x["state"] == "active" and x["exp"] > ts}
        ambiguous = any(abs(x["exp"] - ts) <= _EXPIRY_SLACK_MS for x in s["holds"].values()
                        if x["state"] == "active")
        held_now = sum(x["amt"] for x in active.values())
        before = s["bal"]
        if kind == "open" and before != 0:
            v.append(Violation("balance_arithmetic", f"{acct} opened twice ({txn})"))
        if bal != before + amt:
            v.append(Violation("balance_arithmetic", f"{kind} {txn} on {acct}: {before} {amt:+d} != {bal}",
                               {"entry": e["id"]}))
        if bal < 0:
            v.append(Violation("no_negative_balance", f"{acct} at {bal} after {kind} {txn}"))
        if s["frozen"] and kind in BLOCKED_WHEN_FROZEN:
            v.append(Violation("nothing_while_frozen", f"{kind} {txn} applied on frozen {acct}", {"entry": e["id"]}))
        if s["debt"] > 0 and kind in BLOCKED_WHILE_DEBT:
            v.append(Violation("nothing_while_debt", f"{kind} {txn} applied on {acct} owing {s['debt']}",
                               {"entry": e["id"]}))
        if kind in OFFLINE_KINDS:
            debt = _int(e, "dt") or 0
            if (kind == "offline_debt") != (debt > 0):
                v.append(Violation("debt_is_overdraw", f"{kind} {txn} on {acct} with debt {debt}"))
            if not ambiguous and -amt != min(-amt + debt, max(0, before - held_now)):
                v.append(Violation("debt_is_overdraw", f"{kind} {txn} on {acct}: took {-amt} of {-amt + debt} "
                                   f"with {before - held_now} available ({before} - holds {held_now})"))
            s["debt"] += debt
        if kind == "credit":
            paid = _int(e, "dp") or 0
            if paid != min(s["debt"], paid + amt - ((_int(e, "bd") or 0) if "bd" in e else 0)):
                v.append(Violation("debt_paid_first", f"credit {txn} on {acct} paid {paid} of debt {s['debt']} "
                                   f"and put {amt} in the balance"))
            s["debt"] -= paid
        if kind == "freeze":
            if s["frozen"]:
                v.append(Violation("nothing_while_frozen", f"freeze {txn} of {acct}, already frozen"))
            s["frozen"] = True
        elif kind == "unfreeze":
            if not s["frozen"]:
                v.append(Violation("nothing_while_frozen", f"unfreeze {txn} of {acct}, not frozen"))
            s["frozen"] = False
        elif kind in ("deduct", "sale") and not ambiguous and before - held_now < -amt:
            v.append(Violation("available_respected", f"{kind} {txn} of {-amt} on {acct} with only "
                               f"{before - held_now} available ({before} - holds {held_now})"))
        elif kind == "hold":
            held = _int(e, "held") or 0
            if not ambiguous and before - held_now < held:
                v.append(Violation("available_respected", f"hold {txn} of {held} on {acct} with only "
                                   f"{before - held_now} available"))
            if not ambiguous and txn in hold_answers and hold_answers[txn] != before - held_now - held:
                v.append(Violation("available_respected", f"hold {txn} answered available {hold_answers[txn]}, "
                                   f"balance {before} - holds {held_now} - {held} = {before - held_now - held}"))
            s["holds"][txn] = {"amt": held, "exp": _int(e, "exp") or 0, "state": "active"}
        elif kind in ("capture", "void", "hold_expire"):
            h = s["holds"].get(e.get("orig", ""))
            if h is None:
                v.append(Violation("hold_resolved_once", f"{kind} {txn} of unknown hold {e.get('orig')} on {acct}"))
            else:
                if h["state"] != "active":
                    v.append(Violation("hold_resolved_once", f"hold {e.get('orig')} on {acct} {h['state']} "
                                       f"and then {kind} by {txn}"))
                if kind == "hold_expire" and ts + _EXPIRY_SLACK_MS < h["exp"]:
                    v.append(Violation("hold_resolved_once", f"hold {e.get('orig')} released as expired at "
                                       f"{ts}, before its expiry {h['exp']}"))
                if kind != "hold_expire" and ts > h["exp"] + _EXPIRY_SLACK_MS:
                    v.append(Violation("hold_resolved_once", f"hold {e.get('orig')} {kind} at {ts}, after its "
                                       f"expiry {h['exp']}"))
                if kind == "capture" and -amt > h["amt"]:
                    v.append(Violation("hold_resolved_once", f"capture {txn} of {-amt} > hold {h['amt']}"))
                h["state"] = {"capture": "captured", "void": "voided"}.get(kind, "expired")
            if kind == "capture":
                s["charges"][txn] = -amt
        elif kind == "refund":
            orig = e.get("orig", "")
            if orig not in s["charges"]:
                v.append(Violation("refund_within_charge", f"refund {txn} on {acct} of {orig}, not a charge of it"))
            else:
                s["refunded"][orig] += amt
                if s["refunded"][orig] > s["charges"][orig]:
                    v.append(Violation("refund_within_charge", f"refunds of {orig} on {acct} add up to "
                                       f"{s['refunded'][orig]} > {s['charges'][orig]}"))
        elif kind == "compensate":
            compensated[e.get("orig", "")] += 1
        elif kind == "tender_refund":
            orig, method, given = e.get("orig", ""), e.get("m", ""), _int(e, "ta") or 0
            paid = s["tenders"].get(orig, {}).get(method)
            if amt != 0 or paid is None:
                v.append(Violation("refund_within_charge", f"tender refund {txn} on {acct} of {orig} {method}: "
                                   f"amount {amt}, the sale's tender {paid}"))
            else:
                s["tenders_back"][(orig, method)] += given
                if s["tenders_back"][(orig, method)] > paid:
                    v.append(Violation("refund_within_charge", f"{method} refunds of sale {orig} on {acct} add "
                                       f"up to {s['tenders_back'][(orig, method)]} > {paid}"))
        if kind == "sale":
            # no sale half recorded: the card leg and every tender in one entry that adds up
            tenders = decode_tenders(e.get("tn"))
            if not tenders or any(a <= 0 for a in tenders.values()) or \
                    -amt + sum(tenders.values()) != _int(e, "tot"):
                v.append(Violation("sale_whole", f"sale {txn} on {acct}: card {-amt} + tenders {e.get('tn')} "
                                   f"!= total {e.get('tot')}", {"entry": e["id"]}))
            s["tenders"][txn] = tenders
        if kind in ("deduct", "sale"):
            s["charges"].setdefault(txn, -amt)
        s["bal"] = bal

    for txn, n in compensated.items():
        if txn not in expected_duplicates or n != 1:
            v.append(Violation("journal_once", f"{n} compensation(s) of txn {txn}",
                               {"expected_duplicate": txn in expected_duplicates}))

    # -- what Redis holds now is what the journal adds up to
    for acct, s in state.items():
        if acct in tainted:
            continue
        live = redis_accounts.get(acct)
        if live is None:
            v.append(Violation("balance_equals_journal", f"{acct} journaled but not in Redis"))
            continue
        if live[0] != s["bal"]:
            v.append(Violation("balance_equals_journal", f"{acct}: Redis {live[0]} != journal {s['bal']}"))
        if redis_debts is not None and redis_debts.get(acct, 0) != s["debt"]:
            v.append(Violation("debt_equals_journal", f"{acct}: Redis debt {redis_debts.get(acct, 0)} != "
                               f"journal {s['debt']}"))
        if live[1] != ("frozen" if s["frozen"] else "active"):
            v.append(Violation("balance_equals_journal", f"{acct}: Redis status {live[1]}, journal frozen={s['frozen']}"))
        read = (available_reads or {}).get(acct)
        if read:
            balance, available, t0, t1 = read
            holds = [x for x in s["holds"].values() if x["state"] == "active"]
            h0 = sum(x["amt"] for x in holds if x["exp"] > t0 + _EXPIRY_SLACK_MS)
            h1 = sum(x["amt"] for x in holds if x["exp"] > t1 - _EXPIRY_SLACK_MS)
            if h0 == h1 and available != balance - h0:
                v.append(Violation("available_is_balance_minus_holds", f"{acct}: available {available} != "
                                   f"balance {balance} - active holds {h0}"))
    for acct in redis_accounts:
        if acct not in state:
            v.append(Violation("balance_equals_journal", f"{acct} in Redis without an opening entry"))
    return v


def check_database(engine, journal: list[dict], redis_accounts: dict[str, tuple[int, str]], *,
                   expected_duplicates: set[str] = frozenset()) -> list[Violation]:
    """After `reconcile-service run --once` (and verify's drain): the database holds every
    journal entry once, with the same amounts; expected duplicates are recorded and
    compensated; nothing quarantined or open; every account's balance equals Redis."""
    from sqlalchemy import text
    v: list[Violation] = []
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT txn_id, account_id, kind, amount_minor, balance_after_minor, "
                                 "journal_id FROM ledger_entries")).all()
        dups = conn.execute(text("SELECT txn_id, status FROM duplicate_entries")).all()
        quarantined = conn.execute(text("SELECT journal_id, error FROM quarantined_entries")).all()
        open_disc = conn.execute(text("SELECT kind, account_id, txn_id, cause FROM discrepancies "
                                      "WHERE status = 'open'")).all()
        balances = dict(conn.execute(text("SELECT account_id, balance_minor FROM accounts")).all())
    by_jid = {r.journal_id: r for r in rows}
    txns = [r.txn_id for r in rows]
    if len(txns) != len(set(txns)):
        v.append(Violation("db_every_txn_once", "a txn id twice in ledger_entries"))
    for e in journal:
        row = by_jid.get(e["id"])
        if row is None:
            if not any(d.txn_id == e.get("txn") for d in dups):
                v.append(Violation("db_equals_redis", f"journal entry {e['id']} ({e.get('kind')} {e.get('txn')}) "
                                   "is not in the database"))
            continue
        if (row.txn_id, row.account_id, row.kind, str(row.amount_minor), str(row.balance_after_minor)) != \
                (e.get("txn"), e.get("acct"), e.get("kind"), e.get("amt"), e.get("bal")):
            v.append(Violation("db_equals_redis", f"entry {e['id']}: database has {tuple(row)}",
                               {"journal": e}))
    for d in dups:
        if d.txn_id not in expected_duplicates:
            v.append(Violation("db_every_txn_once", f"txn {d.txn_id} recorded as a duplicate ({d.status})"))
        elif d.status != "compensated":
            v.append(Violation("db_every_txn_once", f"expected duplicate {d.txn_id} not compensated ({d.status})"))
    for txn in expected_duplicates:
        if not any(d.txn_id == txn for d in dups):
            v.append(Violation("db_every_txn_once", f"txn {txn} applied twice in Redis, no duplicate recorded"))
    for q in quarantined:
        v.append(Violation("db_equals_redis", f"journal entry {q.journal_id} quarantined: {q.error[:200]}"))
    for d in open_disc:
        v.append(Violation("db_equals_redis", f"open discrepancy {d.kind} {d.account_id} {d.txn_id}: "
                           f"{(d.cause or '')[:200]}"))
    for acct, (bal, _st) in redis_accounts.items():
        if balances.get(acct) != bal:
            v.append(Violation("db_equals_redis", f"{acct}: database {balances.get(acct)} != Redis {bal}"))
    return v
