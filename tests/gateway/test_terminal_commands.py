"""`cashierctl terminal enroll/list/revoke`: the token is printed once and only its hash is kept."""
from __future__ import annotations

import json

from admin.cashierctl import main
from core.terminals import TerminalRegistry, terminal_key


def test_enroll_list_revoke(redis_url, capsys):
    from core import Ledger
    ledger = Ledger.from_url(redis_url)
    assert main(["--redis-url", redis_url, "--json", "terminal", "enroll", "T7"]) == 0
    token = json.loads(capsys.readouterr().out)["token"]
    assert token.startswith("T7.") and len(token) > 40
    assert token not in str(ledger.client.hgetall(terminal_key("T7")))
    assert TerminalRegistry(ledger.client).authenticate(token) == "T7"
    assert main(["--redis-url", redis_url, "terminal", "list"]) == 0
    assert "T7\tenrolled" in capsys.readouterr().out
    assert main(["--redis-url", redis_url, "terminal", "revoke", "T7"]) == 0
    assert TerminalRegistry(ledger.client, cache_s=0).authenticate(token) is None
    assert main(["--redis-url", redis_url, "terminal", "list"]) == 0
    assert "T7\trevoked" in capsys.readouterr().out
    assert main(["--redis-url", redis_url, "terminal", "revoke", "NOPE"]) == 2
    assert main(["--redis-url", redis_url, "terminal", "enroll", "bad id"]) == 2
    ledger.close()
