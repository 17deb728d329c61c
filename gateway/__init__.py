"""The ledger gateway (issue 24): the program tills talk to instead of Redis.

It runs `core` unchanged behind a versioned JSON API (/v1, docs/gateway.md), with
terminal credentials, cashier sessions and supervisor approvals checked on the server.
`gateway.client.GatewayLedger` is the till's side and imports no Redis client.
"""
from .wire import API_VERSION

__all__ = ["API_VERSION"]
