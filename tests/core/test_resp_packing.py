"""core.resp_packing: the one-C-call packer sends exactly the bytes redis-py's own packer
sends for every command of plain arguments (str, bytes, int), hands everything else to
redis-py unchanged (same bytes, same errors), and is what `connect` gives a standalone
client, which then works against the real Redis."""
from __future__ import annotations

import pytest
import redis
from hypothesis import given, settings, strategies as st
from redis.connection import Connection
from redis.exceptions import DataError

from core.connection import connect
from core.resp_packing import PlainArgsPacker


def _redis_py_bytes(args) -> bytes:
    """What redis-py's default packer (hiredis with its Python encoder) sends."""
    return b"".join(Connection(encoding="utf-8")._command_packer.pack(*args))


def _ours(args) -> bytes:
    encoder = redis.Redis(encoding="utf-8").connection_pool.get_encoder()
    return b"".join(PlainArgsPacker(encoder.encode).pack(*args))


plain = st.one_of(st.text(), st.binary(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70))
other = st.one_of(st.floats(allow_nan=False), st.booleans(), st.none())


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(["FCALL", "HSET", "XADD", "PING"]), st.lists(plain, max_size=30))
def test_plain_arguments_are_packed_to_the_same_bytes(name, args):
    assert _ours([name, *args]) == _redis_py_bytes([name, *args])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(plain, other), min_size=1, max_size=8), st.sampled_from(["SET", "CLIENT SETNAME"]))
def test_any_other_argument_goes_through_redis_py_unchanged(args, name):
    def answer(fn):
        try:
            return fn([name, *args])
        except DataError as exc:
            return f"DataError: {exc}"
    assert answer(_ours) == answer(_redis_py_bytes)


def test_a_lone_surrogate_is_refused_as_redis_py_refuses_it():
    with pytest.raises(UnicodeEncodeError):
        _redis_py_bytes(["SET", "k", "\ud800"])
    with pytest.raises(UnicodeEncodeError):
        _ours(["SET", "k", "\ud800"])


def test_connect_gives_a_standalone_client_the_packer_and_it_round_trips(redis_url):
    client = connect(redis_url)
    assert isinstance(client.connection_pool.connection_kwargs["command_packer"], PlainArgsPacker)
    values = ["漢字 and |%", "", "x" * 10_000, "-12", "007"]
    client.delete("pack:h")
    client.hset("pack:h", mapping={str(i): v for i, v in enumerate(values)})
    client.hset("pack:h", "n", 2 ** 62)
    assert client.hgetall("pack:h") == {**{str(i): v for i, v in enumerate(values)}, "n": str(2 ** 62)}
    assert client.zadd("pack:z", {"m": 1.5}) == 1 and client.zscore("pack:z", "m") == 1.5   # a float: redis-py's path
    client.delete("pack:h", "pack:z")
    client.close()
