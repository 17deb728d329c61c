"""Packing commands for Redis with one C call when every argument is plain.

redis-py turns each argument into bytes with a Python call of its encoder before hiredis
packs the command: 14 calls per item of a `deduct_many` batch, which was half of the
client's CPU per deduction (issue 30: 22 of the 10-23 us measured). The ledger's commands
are all str, bytes and int; hiredis packs those itself, exactly as the encoder would (UTF-8,
strict; an int as its decimal digits), so such a command skips the per-argument Python.
Anything else (a float, bool, None, memoryview, a command name with a space in it) goes
through redis-py's own packer unchanged, so its errors and formats stay redis-py's.

`install(client)` sets the packer on the connections a plain redis.Redis (standalone,
unix socket, Sentinel-managed) opens from then on; a Cluster client keeps redis-py's.
tests/core/test_resp_packing.py holds the two packers to the same bytes.
"""
from __future__ import annotations

import redis
from redis.connection import HiredisRespSerializer, PythonRespSerializer

try:
    import hiredis
except ImportError:         # redis-py then packs in Python; nothing to speed up
    hiredis = None

_PLAIN_TYPES = frozenset((str, bytes, int))       # type(), so bool (an int subclass) is not plain
_BUFFER_CUTOFF = 6000                             # redis-py's own, for its fallback


class PlainArgsPacker:
    """A redis-py command packer: hiredis.pack_command straight on plain arguments,
    redis-py's serializer for the rest."""

    def __init__(self, encode):
        self._redis_py = HiredisRespSerializer(PythonRespSerializer(_BUFFER_CUTOFF, encode).pack, encode)

    def pack(self, *args):
        name = args[0]
        # map(type, ...) and the set test run in C: no Python call per argument
        if _PLAIN_TYPES.issuperset(map(type, args)) and type(name) is str and " " not in name:
            return [hiredis.pack_command(args)]
        return self._redis_py.pack(*args)


def install(client) -> None:
    """Use PlainArgsPacker for the connections `client` opens (none are open yet: clients
    connect on their first command). Only where its encoding is redis-py's default."""
    if hiredis is None or not isinstance(client, redis.Redis):
        return
    kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("encoding", "utf-8") != "utf-8" or kwargs.get("encoding_errors", "strict") != "strict":
        return
    encoder = client.connection_pool.get_encoder()
    kwargs["command_packer"] = PlainArgsPacker(encoder.encode)
