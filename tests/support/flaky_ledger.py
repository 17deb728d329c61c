"""A Ledger whose replies a FaultyProxy drops at random, and the terminal's way of
living with it (the same request, same txn id, until Redis answers): shared by the
property tests that check an operation's model under lost replies."""
from __future__ import annotations

from contextlib import contextmanager

import pytest

from core import Ledger, LedgerUnavailable, RetryPolicy

from .proxy import FaultyProxy


@contextmanager
def flaky_ledger(redis_url: str, *, drop_reply_probability: float, seed: int):
    """Yields (ledger through the proxy, proxy); on exit asserts the fault really
    happened (more than 10 replies dropped over all examples)."""
    port, db = redis_url.rsplit(":", 1)[1].split("/")
    proxy = FaultyProxy(int(port), drop_reply_probability=drop_reply_probability, seed=seed).start()
    flaky = Ledger.from_url(f"redis://127.0.0.1:{proxy.port}/{db}", socket_timeout_s=0.5,
                            retry=RetryPolicy(deadline_s=0.3, first_delay_s=0.01, max_delay_s=0.05))
    try:
        yield flaky, proxy
    finally:
        flaky.close()
        proxy.close()
    assert proxy.dropped_replies > 10


def faulty_fixture(*, drop_reply_probability: float, seed: int):
    """A `faulty` fixture for a test module: the flaky ledger and its proxy over the
    test's own (initialised) database, e.g. ``faulty = faulty_fixture(drop_reply_probability=0.3, seed=7)``."""
    @pytest.fixture
    def faulty(redis_url, ledger):
        ledger.init()
        with flaky_ledger(redis_url, drop_reply_probability=drop_reply_probability, seed=seed) as pair:
            yield pair
    return faulty


def until_answered(call):
    """The terminal's outbox: the same request (same txn id) until Redis answers."""
    for _ in range(200):
        try:
            return call()
        except LedgerUnavailable:
            continue
    raise AssertionError("never answered")
