"""Properties of the too-old-to-re-send rule and of ABANDONED rows (issue 33 item 4), with
hypothesis, on a real Redis and real SQLite outboxes.

1. For any retention the shop may set and any age: the engine re-sends a pending row on
   its own only while it is younger than the retention minus 1 h, and that limit is
   always at least 23 h (the setting's 1-day floor).
2. Random sequences of outbox rows, answers, supervisor abandons and crashes (the outbox
   closed and opened again, as after a power cut): a row is decided once (the first of
   answer / abandon wins, a later one changes nothing), an abandoned row is never pending
   again, and the shift report counts exactly the abandoned rows with their amounts.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import Ledger
from core.validation import MAX_RETENTION_S, MIN_SHOP_RETENTION_S, RESEND_MARGIN_S
from desktop.outbox import ABANDONED, Op, Outbox, now_ms
from desktop.report import build_report

from .conftest import CASHIER


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(retention_s=st.integers(MIN_SHOP_RETENTION_S, MAX_RETENTION_S), age_s=st.integers(0, MAX_RETENTION_S + 7200))
def test_only_rows_younger_than_the_retention_minus_an_hour_are_re_sent(redis_url, till_ledger, qapp, tmp_path_factory,
                                                                       retention_s, age_s):
    from desktop.engine import Engine
    Ledger.from_url(redis_url).init(retention_s=retention_s)
    engine = Engine(till_ledger(redis_url), "T1", tmp_path_factory.mktemp("till"))
    try:
        engine.ledger.load_retention()                  # what the ping does
        assert engine.retention_s == retention_s
        assert engine.resend_limit_s == retention_s - RESEND_MARGIN_S >= 23 * 3600
        at_ms = now_ms()
        op = Op("T1-d-x", "deduct", "A-1", 1, "T1", CASHIER, None, at_ms - age_s * 1000)
        assert engine.too_old_to_resend(op, at_ms) == (age_s >= retention_s - RESEND_MARGIN_S)
        # a row whose record may be gone (age >= retention) is never re-sent on its own
        assert engine.too_old_to_resend(op, at_ms) or age_s < retention_s
    finally:
        engine.close()


STEPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(1, 10_000)),
    st.tuples(st.just("answer"), st.integers(0, 7), st.sampled_from(["APPLIED", "INSUFFICIENT_FUNDS"])),
    st.tuples(st.just("abandon"), st.integers(0, 7)),
    st.tuples(st.just("crash"),),
), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_abandoned_rows_are_decided_once_and_counted(tmp_path_factory, steps):
    path = tmp_path_factory.mktemp("outbox") / "outbox.sqlite3"
    box = Outbox(path)
    shift = box.open_shift("T1", CASHIER)
    model: dict[str, tuple[int, str | None]] = {}          # txn -> (amount, first decision)
    for step in steps:
        if step[0] == "add":
            txn = f"T1-d-{len(model)}"
            box.add(Op(txn, "deduct", f"A-{len(model)}", step[1], "T1", CASHIER, shift.shift_id, now_ms()))
            model[txn] = (step[1], None)
        elif step[0] == "crash":
            box.close()                                   # a power cut: only what was committed stays
            box = Outbox(path)
        elif model:
            txn = sorted(model)[step[1] % len(model)]
            amount, decided = model[txn]
            if step[0] == "answer":
                box.resolve(txn, step[2], 0)
                model[txn] = (amount, decided or step[2])
            else:
                box.abandon(txn, "sup")
                model[txn] = (amount, decided or ABANDONED)
        # invariants after every step
        for txn, (amount, decided) in model.items():
            row = box.get(txn)
            assert row.pending == (decided is None), txn
            assert row.status == (decided or ""), txn
            if decided == ABANDONED:
                assert "supervisor sup" in row.last_error
        assert {op.txn_id for op in box.pending()} == {t for t, (_, d) in model.items() if d is None}
        report = build_report(shift, box.ops_of_shift(shift.shift_id))
        abandoned = [a for a, d in model.values() if d == ABANDONED]
        assert report.abandoned.count == len(abandoned) and report.abandoned.sum_minor == sum(abandoned)
        assert report.by_kind["deduct"].count == sum(1 for _, d in model.values() if d == "APPLIED")
        assert report.declined_count == sum(1 for _, d in model.values() if d == "INSUFFICIENT_FUNDS")
        assert report.pending_count == sum(1 for _, d in model.values() if d is None)
    box.close()
