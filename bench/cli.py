"""Command line of the benchmark: ``python -m bench [--duration-s S] [--parts a,b]
[--smoke] [--out DIR]``. Runs the chosen parts (all by default) in registry order on
private servers, then writes the report and plots. `--smoke` is a seconds-long run
for CI that writes to a temporary directory (or `--out`) and never to docs/.
"""
from __future__ import annotations

import argparse
import datetime as dt
import shlex
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import machine, report
from .context import Context
from .parts.registry import PARTS

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"
SMOKE_DURATION_S = 0.3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("--duration-s", type=float, default=None,
                   help="seconds per measurement (default 5; smoke 0.3)")
    p.add_argument("--parts", default="all",
                   help="comma-separated parts: " + ", ".join(PARTS) + " (default all)")
    p.add_argument("--smoke", action="store_true", help="seconds-long run into a temp dir (CI)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default docs/; smoke: a temp dir)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = list(PARTS) if args.parts == "all" else [n.strip() for n in args.parts.split(",") if n.strip()]
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        print(f"unknown part(s): {', '.join(unknown)}; choose from {', '.join(PARTS)}", file=sys.stderr)
        return 2
    duration_s = args.duration_s or (SMOKE_DURATION_S if args.smoke else 5.0)
    out_dir = args.out or (Path(tempfile.mkdtemp(prefix="cashier-bench-")) if args.smoke else DOCS_DIR)
    ctx = Context(duration_s=duration_s, smoke=args.smoke, out_dir=out_dir)
    started = time.perf_counter()
    load_start = machine.load_average()
    uptime_start = machine.uptime()
    print(f"[bench] before: {uptime_start}", flush=True)
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    failed = []
    try:
        for name in [n for n in PARTS if n in names]:
            fn, description = PARTS[name]
            t0 = time.perf_counter()
            print(f"[bench] {name}: {description} ...", flush=True)
            try:
                fn(ctx)
            except Exception as exc:
                traceback.print_exc()
                failed.append(name)
                ctx.row(name, description, f"FAILED: {type(exc).__name__}: {exc}"[:200])
            print(f"[bench] {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
        meta = {
            "args": " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
            "date": date, "duration_s": f"{duration_s:g}",
            "wall_s": f"{time.perf_counter() - started:.0f} s",
            "load_start": load_start, "load_end": machine.load_average(),
            "uptime_start": uptime_start, "uptime_end": machine.uptime(),
            "machine": machine.describe(ctx.redis.client(), ctx._pg_dsn),
        }
        path = report.write(ctx, meta, out_dir)
    finally:
        ctx.close()
    print(f"[bench] report: {path}")
    return 1 if failed else 0
