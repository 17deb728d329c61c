"""CPython instructions per journal entry of the reconcile drain's own Python (parse, row
values, hash chain, totals) for one batch, without the database: `python -m
bench.drain_instructions [--entries N]`. Fills a private redis-server's journal the way
part 6 does (or reads a batch saved by an earlier run, `--raw`), then runs the batch under callgrind once and three
times; (three - one) / 2 / entries is the cost of one entry, without start-up and imports.
Wall time on this shared machine moves by ±25% between runs; these counts stay within
~1%, so an A/B of a drain change is decided here (bench/findings.py, reconcile_30k).
"""
from __future__ import annotations

import argparse
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .servers import PrivateRedis

ACCOUNTS = tuple(f"R{i:04d}" for i in range(1000))


def _batch(raw_path: str, repeats: int) -> None:
    """The drain's Python for one batch, `repeats` times (what runs under callgrind)."""
    from datetime import datetime, timezone

    from reconcile_service import chain, entries as book_entries
    from reconcile_service.totals import BatchTotals
    raw = pickle.loads(Path(raw_path).read_bytes())
    now = datetime.now(timezone.utc)
    for _ in range(repeats):
        entries, _ = book_entries.parse_entries(0, raw)
        totals = BatchTotals(0, now)
        linker = chain.Linker(book_entries.LEDGER_COLUMNS, 0, chain.GENESIS_HASH)
        for _row in book_entries.ledger_rows(entries, now, linker, totals):
            pass
        totals.account_rows()


def _instructions(raw_path: str, repeats: int, out_dir: Path) -> int:
    out = out_dir / f"cg.{repeats}"
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m",
                    "bench.drain_instructions", "--run-batch", raw_path, str(repeats)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {out}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.drain_instructions", description=__doc__)
    p.add_argument("--entries", type=int, default=20_000, help="deductions in the journal (plus 1,000 openings)")
    p.add_argument("--raw", type=Path, default=None,
                   help="the batch's stream entries: read from this file if it exists, else filled and saved "
                        "there (an A/B of two versions of the code must use the same batch)")
    p.add_argument("--run-batch", nargs=2, metavar=("RAW", "REPEATS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.run_batch:
        _batch(args.run_batch[0], int(args.run_batch[1]))
        return 0
    if not shutil.which("valgrind"):
        print("valgrind is not installed", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="cashier-drain-cg-"))
    raw_path = args.raw or work / "raw.pkl"
    if raw_path.exists():
        raw = pickle.loads(raw_path.read_bytes())
    else:
        from .parts.reconcile import fill_journal
        server = PrivateRedis().start()
        try:
            fill_journal(server.url, ACCOUNTS, args.entries)
            client = server.client()
            [journal] = [k for k in client.scan_iter("*:j")]
            raw = client.xrange(journal)
        finally:
            server.stop()
        raw_path.write_bytes(pickle.dumps(raw))
    print(f"[drain_instructions] {len(raw):,} entries; callgrind x1 and x3 (about a minute each) ...", flush=True)
    once, thrice = (_instructions(str(raw_path), n, work) for n in (1, 3))
    print(f"{(thrice - once) / 2 / len(raw):,.0f} CPython instructions per entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
