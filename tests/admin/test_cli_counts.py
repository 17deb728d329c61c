"""Counts given to cashierctl are checked like every other input (issue 25 item 14): a
negative, zero or huge `--count` is bad input (exit 2, the message names `count`), never a
silent empty answer with exit 0."""
from __future__ import annotations

import pytest

from admin.cashierctl import MAX_JOURNAL_COUNT, main


@pytest.mark.parametrize("count", ["-1", "0", "abc", "1.5", str(MAX_JOURNAL_COUNT + 1), "99999999999999999999"])
def test_journal_count_out_of_range_is_bad_input(redis_url, capsys, count):
    with pytest.raises(SystemExit) as exited:
        main(["--redis-url", redis_url, "journal", "A-1", "--count", count])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "count" in err and "Traceback" not in err


def test_journal_count_in_range_is_answered(redis_url, capsys):
    assert main(["--redis-url", redis_url, "init"]) == 0
    assert main(["--redis-url", redis_url, "open", "A-1", "--txn-id", "o-1"]) == 0
    capsys.readouterr()
    assert main(["--redis-url", redis_url, "journal", "A-1", "--count", "1"]) == 0
    assert "open" in capsys.readouterr().out
