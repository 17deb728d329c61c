"""The `report`, `resolve` and `backoffice-user` subcommands of reconcile-service
(registered by cli.py with `add_parsers` and run by `run_command`). They need only the
database of record, never Redis.

    report liability --date YYYY-MM-DD | --from D --to D
    report statement ACCOUNT [--from D] [--to D]
    report shifts --date D
    report discrepancies [--all]
    report debts                    (the open offline debts: account, till, cashier, time)
    report breakdown --by terminal|cashier|promotion --date D | --from D --to D
    report members --date D | --from D --to D [--top N]
    resolve ID --note TEXT
    backoffice-user NAME [--role owner|manager|clerk]   (password from stdin: a login of the back office)

Every report takes --format text|csv|pdf|json, --lang en|zh_CN, --output FILE (default
stdout; PDF needs a file or a pipe) and --tz ZONE (default the `shop_timezone` setting).
Exit codes as the CLI's: 0 fine (liability: balanced), 1 the liability check line does
not hold, 2 a usage mistake (the field and the reason on stderr), 3 the database is
unreachable, 4 the schema is not migrated.
"""
from __future__ import annotations

import argparse
import json
import sys
from sqlalchemy.exc import OperationalError

from . import book, render

COMMANDS = ("report", "resolve", "backoffice-user")
EXIT_OK, EXIT_UNBALANCED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_REFUSED = 0, 1, 2, 3, 4


def add_parsers(sub, common: argparse.ArgumentParser) -> None:
    out = argparse.ArgumentParser(add_help=False)
    g = out.add_argument_group("output")
    g.add_argument("--format", choices=("text", "csv", "pdf", "json"), default="text",
                   help="text (default), csv, pdf or json")
    g.add_argument("--lang", choices=render.LANGS, default="en", help="language of the report (default en)")
    g.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    g.add_argument("--tz", metavar="ZONE", help="time zone of dates and times (default: shop_timezone)")
    rep = sub.add_parser("report", help="liability, statement, shifts or discrepancies (CSV, PDF, en/zh_CN)")
    kinds = rep.add_subparsers(dest="report", required=True, metavar="REPORT")
    li = kinds.add_parser("liability", parents=[common, out], help="stored value owed: opening, in, out, closing")
    li.add_argument("--date", help="one day (YYYY-MM-DD, shop time)")
    li.add_argument("--from", dest="date_from", help="first day")
    li.add_argument("--to", dest="date_to", help="last day (inclusive)")
    stm = kinds.add_parser("statement", parents=[common, out], help="every entry of one account")
    stm.add_argument("account", help="the account id")
    stm.add_argument("--from", dest="date_from", help="first day (YYYY-MM-DD, shop time)")
    stm.add_argument("--to", dest="date_to", help="last day (inclusive)")
    sh = kinds.add_parser("shifts", parents=[common, out], help="the terminals' shift closes (Z records) of a day")
    sh.add_argument("--date", required=True, help="the day (YYYY-MM-DD, shop time)")
    bd = kinds.add_parser("breakdown", parents=[common, out],
                          help="a period's sales, refunds and top-ups per terminal, cashier or promotion")
    bd.add_argument("--by", choices=book.BREAKDOWNS, required=True,
                    help="terminal, cashier, or promotion (top-ups with a bonus against those without)")
    bd.add_argument("--date", help="one day (YYYY-MM-DD, shop time)")
    bd.add_argument("--from", dest="date_from", help="first day")
    bd.add_argument("--to", dest="date_to", help="last day (inclusive)")
    mb = kinds.add_parser("members", parents=[common, out], help="the members who spent most in a period")
    mb.add_argument("--date", help="one day (YYYY-MM-DD, shop time)")
    mb.add_argument("--from", dest="date_from", help="first day")
    mb.add_argument("--to", dest="date_to", help="last day (inclusive)")
    mb.add_argument("--top", type=int, default=10, help="how many members (default 10)")
    kinds.add_parser("debts", parents=[common, out], help="open offline debts with their till, cashier and time")
    di = kinds.add_parser("discrepancies", parents=[common, out], help="open discrepancies with their evidence")
    di.add_argument("--all", action="store_true", help="resolved ones too")
    res = sub.add_parser("resolve", parents=[common], help="close a discrepancy with a note")
    res.add_argument("id", type=int, help="the discrepancy number (see report discrepancies)")
    res.add_argument("--note", required=True, help="what was found and done")
    res.add_argument("--by", help="who resolved it (default: the OS user)")
    usr = sub.add_parser("backoffice-user", parents=[common],
                         help="create a login of the back-office page or set its password (read from stdin)")
    usr.add_argument("username", help="the login name (the password is read from stdin)")
    usr.add_argument("--role", choices=("owner", "manager", "clerk"),
                     help="owner: everything; manager: members, cards, promotions, cashiers, reports; clerk: "
                          "look-ups and reports (a new login without --role is an owner; an existing one keeps "
                          "its role)")


def run_command(args, settings) -> int:
    from ..db import SchemaNotCurrent, make_engine, require_current_schema
    engine = make_engine(settings.resolved_database_url())    # ConfigError: the CLI maps it
    try:
        require_current_schema(engine)
        if args.command == "resolve":
            out = book.resolve_discrepancy(engine, args.id, args.note, args.by)
            print(f"discrepancy #{out['id']} resolved by {out['resolved_by']}: {out['note']}")
            return EXIT_OK
        if args.command == "backoffice-user":
            from ..web.auth import set_password
            password = sys.stdin.readline().rstrip("\n")
            created = set_password(engine, args.username, password, args.role)
            role = f" ({args.role})" if args.role else ""
            print(f"back-office user {args.username}{role} {'created' if created else 'password changed'}")
            return EXIT_OK
        return _report(args, settings, engine)
    except book.ReportError as exc:
        print(f"reconcile-service: {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SchemaNotCurrent as exc:
        print(f"reconcile-service: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except OperationalError as exc:
        print(f"reconcile-service: the database is unreachable ({str(exc.orig).strip().splitlines()[0]})",
              file=sys.stderr)
        return EXIT_UNAVAILABLE
    except RuntimeError as exc:       # e.g. a Chinese PDF without the CJK font
        print(f"reconcile-service: {args.command}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        engine.dispose()


def _days(date, date_from, date_to):
    if date:
        first = last = book.parse_date(date, "date")
    elif date_from and date_to:
        first, last = book.parse_date(date_from, "from"), book.parse_date(date_to, "to")
    else:
        raise book.ReportError("date", "give --date YYYY-MM-DD or both --from and --to")
    return first, last


def build(kind: str, engine, zone, lang: str, fmt: str, *, date=None, date_from=None, date_to=None,
          account=None, include_resolved=False, by=None, top=10) -> tuple[bytes, object]:
    """One report as bytes in `fmt`, and the report object (shared by the CLI and the page)."""
    L = lambda k: render.label(lang, k)
    if kind in ("breakdown", "members"):
        first, last = _days(date, date_from, date_to)
        start, end = book.day_bounds(first, last, zone)
        span = f"{first}" + (f" .. {last}" if last != first else "")
        if kind == "breakdown":
            rep = book.breakdown(engine, start, end, by or "")
            title = f"{L('by_' + by) if by != 'promotion' else L('chart_promotions')} {span}"
            table = lambda: render.breakdown_table(rep, by, lang)
            data = lambda: {"by": by, "from": first.isoformat(), "to": last.isoformat(), "sums": rep}
        else:
            if not 1 <= top <= 1000:
                raise book.ReportError("top", "1..1000")
            rep = book.top_members(engine, start, end, top)
            title = f"{L('top_members')} {span}"
            table = lambda: render.members_table(rep, lang)
            data = lambda: {"from": first.isoformat(), "to": last.isoformat(), "members": rep}
        if fmt == "json":
            return (json.dumps(data(), indent=2, ensure_ascii=False) + "\n").encode("utf-8"), rep
        return render.render(kind, fmt, title, table()), rep
    if kind == "liability":
        first, last = _days(date, date_from, date_to)
        start, end = book.day_bounds(first, last, zone)
        rep = book.liability(engine, start, end)
        title = f"{L('liability_title')} {first}" + (f" .. {last}" if last != first else "")
        table = lambda: render.liability_table(rep, lang, zone)
        data = rep.as_dict
    elif kind == "statement":
        start = end = None
        if date_from:
            start = book.day_bounds(book.parse_date(date_from, "from"), book.parse_date(date_from, "from"), zone)[0]
        if date_to:
            end = book.day_bounds(book.parse_date(date_to, "to"), book.parse_date(date_to, "to"), zone)[1]
        if start and end and end <= start:
            raise book.ReportError("to", "is before --from")
        rep = book.statement(engine, account, start, end)
        title = f"{L('statement_title')} {account}"
        table = lambda: render.statement_table(rep, lang, zone)
        data = rep.as_dict
    elif kind == "shifts":
        day = book.parse_date(date, "date")
        rep = book.shifts(engine, *book.day_bounds(day, day, zone))
        title = f"{L('shifts_title')} {day}"
        table = lambda: render.shifts_table(rep, lang, zone)
        data = lambda: [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()} for r in rep]
    elif kind == "debts":
        rep = book.open_debts(engine)
        title = L("debts_title")
        table = lambda: render.debts_table(rep, lang, zone)
        data = lambda: [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()} for r in rep]
    elif kind == "discrepancies":
        rep = book.discrepancies(engine, include_resolved=include_resolved)
        title = L("discrepancies_title")
        table = lambda: render.discrepancies_table(rep, lang, zone)
        data = lambda: [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()} for r in rep]
    else:
        raise book.ReportError("report", f"unknown report {kind!r}")
    if fmt == "json":
        return (json.dumps(data(), indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8"), rep
    return render.render(kind, fmt, title, table()), rep


def _report(args, settings, engine) -> int:
    zone = book.shop_zone(args.tz or settings.shop_timezone)
    payload, rep = build(args.report, engine, zone, args.lang, args.format,
                         date=getattr(args, "date", None), date_from=getattr(args, "date_from", None),
                         date_to=getattr(args, "date_to", None), account=getattr(args, "account", None),
                         include_resolved=getattr(args, "all", False), by=getattr(args, "by", None),
                         top=getattr(args, "top", 10))
    if args.output:
        try:
            with open(args.output, "wb") as fh:
                fh.write(payload)
        except OSError as exc:
            raise book.ReportError("output", f"cannot write {args.output} ({exc.strerror or exc})") from None
    elif args.format == "pdf" and sys.stdout.isatty():
        raise book.ReportError("output", "a PDF goes to a file: add --output report.pdf")
    else:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is not None:          # bytes as rendered (a real terminal or pipe)
            sys.stdout.flush()
            buffer.write(payload)
            buffer.flush()
        else:                           # a text stream (pytest's capture)
            sys.stdout.write(payload.decode("utf-8", "replace"))
    if args.report == "liability" and not rep.balanced:
        print("reconcile-service: report liability: the check line does not hold (closing != the sum of "
              "the accounts' balances at period end): run `reconcile-service reconcile` and "
              "`cashierctl verify`", file=sys.stderr)
        return EXIT_UNBALANCED
    return EXIT_OK

