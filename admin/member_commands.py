"""`cashierctl` commands of the member layer (issue 14): cards, promotions, closing an
account (退卡), member lookup and the shop settings.

    cashierctl card issue ACCOUNT CARD_NO        cashierctl card block CARD_NO --reason lost
    cashierctl card list [ACCOUNT]               cashierctl card show CARD_NO
    cashierctl promo add --min 100.00 --bonus 20.00 [--id ID]
    cashierctl promo list                        cashierctl promo remove ID
    cashierctl close ACCOUNT                     (pays out the principal, forfeits the bonus)
    cashierctl member find QUERY [--limit N]     (phone, name prefix or pinyin initials)
    cashierctl member pin-reset ACCOUNT          (remove a member's payment PIN and its lock)
    cashierctl member code-enrol ACCOUNT         (a new member code secret: its otpauth URI and QR, once)
    cashierctl member reindex                    (rebuild the member index from the accounts)
    cashierctl member import FILE [--map card=会员卡号,...] [--apply] [--report SHEET.csv]
    cashierctl member import --template OUT.csv|OUT.xlsx
    cashierctl member export OUT.csv|OUT.xlsx [--from-book]   (members, cards, principal, bonus, status)
    cashierctl settings spend-order [principal_first|bonus_first|proportional]
    cashierctl settings balance-cap [AMOUNT|off]
    cashierctl settings member-pin-above [AMOUNT]   (charges above it need the member's PIN; 0: all)

(`cashierctl open ACCOUNT --holder NAME --phone PHONE` opens a member account.) Every
change goes through `core.Ledger`, prints its txn id and can be rerun with ``--txn-id``
when its outcome was unknown. Exit codes follow cashierctl: 0 done, 1 declined (the
reason is printed), 2 bad input, 3 Redis unavailable or unsafe, 4 txn id conflict.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import uuid

from core import Ledger, Result
from core.members import CARD_BLOCK_REASONS, SPEND_ORDERS
from core.money import format_minor, parse_minor

from .exits import EXIT_DECLINED, EXIT_OK, guarded


def _ledger(args) -> Ledger:
    return Ledger.from_url(args.redis_url, auto_init=False)


def _txn(args, verb: str) -> str:
    return args.txn_id or f"ctl-{verb}-{uuid.uuid4().hex[:16]}"


def _print(args, data: object, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, default=str) if args.json else text)


def _report(result: Result, args, what: str, **extra) -> int:
    data = {"status": result.status.value, "replayed": result.replayed, "txn_id": result.txn_id,
            "account_id": result.account_id, "kind": result.kind, **extra}
    again = " (already done earlier: nothing changed now)" if result.replayed else ""
    verdict = "done" if result.applied else f"declined: {result.status.value}"
    _print(args, data, f"{what}: {verdict}{again}; txn {result.txn_id}")
    return EXIT_OK if result.applied else EXIT_DECLINED


def _card_dict(card) -> dict:
    return {"card_no": card.card_no, "status": card.status.value, "account_id": card.account_id,
            "reason": card.reason, "legacy": card.legacy}


@guarded
def cmd_card(args) -> int:
    ledger = _ledger(args)
    if args.action == "issue":
        result = ledger.issue_card(args.account, args.card_no, txn_id=_txn(args, "card-issue"),
                                   cashier_id=args.operator)
        return _report(result, args, f"card {args.card_no} for {args.account}", card_no=args.card_no)
    if args.action == "block":
        result = ledger.block_card(args.card_no, reason=args.reason, txn_id=_txn(args, "card-block"),
                                   cashier_id=args.operator)
        return _report(result, args, f"block card {args.card_no} ({args.reason})", card_no=args.card_no)
    if args.action == "show":
        card = ledger.resolve_card(args.card_no)
        owner = f" -> account {card.account_id}" if card.account_id else ""
        legacy = " (the account's own id)" if card.legacy else ""
        reason = f" ({card.reason})" if card.reason else ""
        _print(args, _card_dict(card), f"card {card.card_no}: {card.status.value}{reason}{owner}{legacy}")
        return EXIT_OK if card.active else EXIT_DECLINED
    cards = ledger.cards(args.account)
    if args.json:
        print(json.dumps([_card_dict(c) for c in cards]))
    elif not cards:
        print("no cards" + (f" of {args.account}" if args.account else ""))
    for c in cards if not args.json else ():
        print(f"{c.card_no:<24} {c.status.value:<14} {c.account_id}" + (f"  ({c.reason})" if c.reason else ""))
    return EXIT_OK


@guarded
def cmd_promo(args) -> int:
    ledger = _ledger(args)
    if args.action == "add":
        if args.min is None or args.bonus is None:
            from core import InvalidRequest
            raise InvalidRequest("--min/--bonus", "promo add needs both, e.g. --min 100.00 --bonus 20.00")
        min_minor, bonus_minor = parse_minor(args.min, "min"), parse_minor(args.bonus, "bonus")
        result = ledger.add_promotion(min_minor, bonus_minor, promo_id=args.id, txn_id=_txn(args, "promo-add"),
                                      cashier_id=args.operator)
        from core.members import promo_id_of
        pid = args.id or promo_id_of(min_minor, bonus_minor)
        return _report(result, args, f"promotion {pid}: top up {format_minor(min_minor)}, get "
                       f"{format_minor(bonus_minor)}", promo_id=pid)
    if args.action == "remove":
        if not args.promo_id:
            from core import InvalidRequest
            raise InvalidRequest("promo_id", "promo remove needs the id (see `cashierctl promo list`)")
        result = ledger.remove_promotion(args.promo_id, txn_id=_txn(args, "promo-remove"), cashier_id=args.operator)
        return _report(result, args, f"remove promotion {args.promo_id}", promo_id=args.promo_id)
    promos = ledger.promotions()
    if args.json:
        print(json.dumps([dataclasses.asdict(p) for p in promos]))
    elif not promos:
        print("no promotions")
    for p in promos if not args.json else ():
        print(f"{p.promo_id:<28} top up >= {format_minor(p.min_minor):>10}  bonus {format_minor(p.bonus_minor):>10}")
    return EXIT_OK


@guarded
def cmd_close(args) -> int:
    result = _ledger(args).close_account(args.account, txn_id=_txn(args, "close"), cashier_id=args.operator)
    what = f"close {args.account}"
    if result.applied:
        what += (f": pay out {format_minor(result.payout_minor)} in cash, bonus forfeited "
                 f"{format_minor(result.bonus_forfeited_minor)}")
    return _report(result, args, what, payout_minor=result.payout_minor,
                   bonus_forfeited_minor=result.bonus_forfeited_minor)


class _Bar:
    """A progress bar on stderr (only when stderr is a terminal): the phase, done/total."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.shown = False

    def __call__(self, done: int, total: int, phase: str) -> None:
        if not self.enabled or not total:
            return
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\r{phase:<6} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()
        self.shown = True
        if done >= total:
            sys.stderr.write("\n")

    def close(self) -> None:
        if self.shown:
            sys.stderr.flush()


def _import(args) -> int:
    from core import InvalidRequest
    from core import member_import as mi
    if args.template:
        path = mi.write_template(args.template)
        _print(args, {"template": path}, f"template written: {path} (columns "
               f"{', '.join(mi.TEMPLATE_HEADERS[f] for f in mi.FIELDS)}; amounts in yuan, e.g. 128.50)")
        return EXIT_OK
    if not args.file:
        raise InvalidRequest("file", "member import needs the file to import (or --template OUT.csv)")
    table = mi.read_table(args.file)
    mapping = mi.load_mapping(args.map)
    bar = _Bar(sys.stderr.isatty() and not args.json)
    ledger = _ledger(args)
    plan = mi.plan_import(table, mapping, ledger, progress=bar)
    outcome = mi.apply_import(plan, ledger, progress=bar, operator=args.operator) if args.apply else None
    bar.close()
    report = mi.write_report(args.report or mi.report_path_for(args.file), plan, outcome)
    count, principal, bonus = plan.totals(outcome.imported if outcome else None)
    data = {"mode": "apply" if outcome else "dry-run", "rows": plan.rows, "mapping": plan.mapping,
            "refused": [dataclasses.asdict(p) for p in plan.problems],
            "to_import": len(plan.members), "already_imported": len(plan.already),
            "principal_minor": principal, "bonus_minor": bonus, "report": report}
    lines = [f"{plan.source}: {plan.rows} rows ({plan.encoding}); columns "
             + ", ".join(f"{k}={h}" for k, h in plan.mapping.items())]
    for p in plan.problems:
        lines.append(f"  line {p.line}: {p.field} {p.value!r}: {p.reason}")
    if outcome is None:
        lines.append(f"dry run: {len(plan.members)} members would be imported ({len(plan.already)} of them "
                     f"already were), principal {format_minor(principal)}, bonus {format_minor(bonus)}; "
                     f"{len(plan.refused_lines)} rows refused. Nothing was written: add --apply to import.")
    else:
        data.update(created=len(outcome.created), replayed=len(outcome.replayed),
                    declined=[{"line": m.line, "account_id": m.account_id, "reason": why}
                              for m, why in outcome.declined],
                    cards_issued=outcome.cards_issued)
        for m, why in outcome.declined:
            lines.append(f"  line {m.line}: declined by the ledger: {m.account_id}: {why}")
        lines.append(f"imported {count} members (opened now {len(outcome.created)}, already imported "
                     f"{len(outcome.replayed)}), principal {format_minor(principal)}, bonus {format_minor(bonus)}; "
                     f"{len(plan.refused_lines)} rows refused, {len(outcome.declined)} declined.")
    lines.append(f"reconciliation sheet: {report}")
    _print(args, data, "\n".join(lines))
    bad = plan.problems or (outcome is not None and outcome.declined)
    return EXIT_DECLINED if bad else EXIT_OK


def _export(args) -> int:
    from core import InvalidRequest
    from core import member_import as mi
    if not args.file or not args.file.lower().endswith((".csv", ".xlsx")):
        raise InvalidRequest("file", "member export needs OUT.csv or OUT.xlsx")
    if args.from_book:
        rows = _book_rows(args)
        if isinstance(rows, int):
            return rows
        where = "the database of record"
    else:
        rows = mi.export_members(_ledger(args), progress=_Bar(sys.stderr.isatty() and not args.json))
        where = "Redis"
    path = mi.write_export(args.file, rows)
    principal = sum(r.principal_minor for r in rows)
    bonus = sum(r.bonus_minor for r in rows)
    _print(args, {"file": path, "members": len(rows), "principal_minor": principal, "bonus_minor": bonus},
           f"exported {len(rows)} members from {where} to {path}: principal {format_minor(principal)}, "
           f"bonus {format_minor(bonus)}")
    return EXIT_OK


def _book_rows(args):
    """The export's rows from the database of record (reconcile_service.reports), or the
    exit code after printing why not (the database failed: 3)."""
    from core import InvalidRequest
    try:
        from sqlalchemy.exc import SQLAlchemyError

        from reconcile_service.config import default_database_url
        from reconcile_service.db import make_engine
        from reconcile_service.reports.members_export import members_from_book
    except ModuleNotFoundError as exc:
        raise InvalidRequest("from_book", f"needs the reconcile service installed ({exc.name} is missing)") from None
    from core.connection import redacted
    from core.exit_codes import EXIT_UNAVAILABLE
    url = args.database_url or default_database_url()
    engine = make_engine(url, create=False)          # ConfigError (bad input, exit 2) names database_url
    try:
        return members_from_book(engine)
    except SQLAlchemyError as exc:
        print(f"cashierctl: database_url: the database at {redacted(url)} failed: "
              f"{str(exc).splitlines()[0][:300]}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    finally:
        engine.dispose()


def _code_enrol(args, ledger) -> int:
    """`member code-enrol ACCOUNT`: a new member code secret, shown this once (the URI and a
    terminal QR); the member scans it into their authenticator app."""
    from core.member_codes import MemberCodes
    ledger.account(args.account_id)               # AccountNotFound for an unknown member
    uri = MemberCodes(ledger.client).enrol(args.account_id)
    if getattr(args, "json", False):
        _print(args, {"account_id": args.account_id, "otpauth_uri": uri}, "")
        return EXIT_OK
    import io

    import qrcode
    qr = qrcode.QRCode(border=1)
    qr.add_data(uri)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    print(out.getvalue(), end="")
    print(uri)
    print(f"member {args.account_id}: member code enrolled; shown this once (enrolling again replaces it)")
    return EXIT_OK


@guarded
def cmd_member(args) -> int:
    if args.action == "import":
        return _import(args)
    if args.action == "export":
        return _export(args)
    ledger = _ledger(args)
    if args.action == "pin-reset":
        from core.member_pins import MemberPins
        had = MemberPins(ledger.client).reset(args.account_id)
        _print(args, {"account_id": args.account_id, "had_pin": had},
               f"member {args.account_id}: payment PIN " + ("removed and unlocked: the member sets a new one"
                                                            if had else "was not set (any lock lifted)"))
        return EXIT_OK
    if args.action == "code-enrol":
        return _code_enrol(args, ledger)
    if args.action == "reindex":
        counts = ledger.rebuild_member_index()
        _print(args, counts, f"member index rebuilt: {counts['accounts']} accounts, {counts['entries']} "
               f"entries, {counts['removed']} stale entries removed; identities: {counts['phones']} phones, "
               f"{counts['cards']} cards, {counts['phones_removed']} stale phones removed, "
               f"{counts['phone_conflicts']} phones another member holds (their look-up is ambiguous)")
        return EXIT_OK
    if not args.query:
        from core import InvalidRequest
        raise InvalidRequest("query", "member find needs a phone, a name or pinyin initials")
    matches = ledger.find_members(args.query, limit=args.limit)
    if args.json:
        print(json.dumps([dataclasses.asdict(m) for m in matches], ensure_ascii=False))
    elif not matches:
        print(f"no member matches {args.query!r}")
    for m in matches if not args.json else ():
        print(f"{m.account_id:<20} {m.holder_name:<12} {m.phone:<16} {format_minor(m.balance_minor):>12}"
              f"  {m.status}  (by {m.matched_by})")
    return EXIT_OK if matches else EXIT_DECLINED


@guarded
def cmd_settings(args) -> int:
    ledger = _ledger(args)
    if args.value is None:
        s = ledger.shop_settings()
        cap = "off" if s.balance_cap_minor is None else format_minor(s.balance_cap_minor)
        _print(args, dataclasses.asdict(s), f"spend order {s.spend_order}; balance cap {cap}; member PIN "
               f"needed above {format_minor(s.member_pin_above_minor)}")
        return EXIT_OK
    if args.name == "member-pin-above":
        above = parse_minor(args.value, "member_pin_above", allow_zero=True)
        result = ledger.set_member_pin_threshold(above, txn_id=_txn(args, "member-pin-above"),
                                                 cashier_id=args.operator)
        return _report(result, args, f"member PIN needed above {format_minor(above)}")
    if args.name == "spend-order":
        result = ledger.set_spend_order(args.value, txn_id=_txn(args, "spend-order"), cashier_id=args.operator)
        return _report(result, args, f"spend order {args.value}")
    cap = None if args.value == "off" else parse_minor(args.value, "balance_cap")
    result = ledger.set_balance_cap(cap, txn_id=_txn(args, "balance-cap"), cashier_id=args.operator)
    return _report(result, args, f"balance cap {args.value if cap is None else format_minor(cap)}")


ACCOUNT_HELP = "account id: 1-64 of A-Z a-z 0-9 . _ : -"
CARD_HELP = "card number: 1-64 of A-Z a-z 0-9 . _ : - (an account id works as a card too)"


def register(subparsers) -> None:
    """Add `card`, `promo`, `close`, `member` and `settings` to cashierctl's sub-commands."""
    def with_txn(p):
        p.add_argument("--txn-id", help="reuse to retry a command whose outcome was unknown")
        p.add_argument("--operator", help="who does this (recorded as cashier id)")
        return p

    card = subparsers.add_parser("card", help="member cards: issue, block (lost), list, show")
    cards = card.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = with_txn(cards.add_parser("issue", help="issue a card to an account (also a replacement)"))
    p.add_argument("account", help=ACCOUNT_HELP)
    p.add_argument("card_no", help=CARD_HELP)
    p.set_defaults(func=cmd_card)
    p = with_txn(cards.add_parser("block", help="block a card (lost, damaged, ...); the money stays"))
    p.add_argument("card_no", help=CARD_HELP)
    p.add_argument("--reason", required=True, choices=CARD_BLOCK_REASONS,
                   help="why: " + ", ".join(CARD_BLOCK_REASONS))
    p.set_defaults(func=cmd_card)
    p = cards.add_parser("list", help="cards of an account (or of every account)")
    p.add_argument("account", nargs="?", help="the account (default: every card of the shop)")
    p.set_defaults(func=cmd_card)
    p = cards.add_parser("show", help="what a card number resolves to")
    p.add_argument("card_no", help=CARD_HELP)
    p.set_defaults(func=cmd_card)

    promo = subparsers.add_parser("promo", help="top-up promotions (充100送20)")
    promos = promo.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = with_txn(promos.add_parser("add", help="top up at least --min, get --bonus"))
    p.add_argument("--min", help="smallest top-up in yuan, e.g. 100.00")
    p.add_argument("--bonus", help="bonus in yuan, e.g. 20.00")
    p.add_argument("--id", help="promotion id (default min<fen>-bonus<fen>)")
    p.set_defaults(func=cmd_promo)
    p = promos.add_parser("list", help="the promotions")
    p.set_defaults(func=cmd_promo)
    p = with_txn(promos.add_parser("remove", help="remove a promotion"))
    p.add_argument("promo_id", nargs="?", help="the promotion's id (see promo list)")
    p.set_defaults(func=cmd_promo)

    p = with_txn(subparsers.add_parser("close", help="close an account (退卡): pays out the principal"))
    p.add_argument("account", help=ACCOUNT_HELP)
    p.set_defaults(func=cmd_close)

    member = subparsers.add_parser("member", help="find members; rebuild the member index; import, export")
    members = member.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = members.add_parser("find", help="by phone (exact), name prefix or pinyin initials")
    p.add_argument("query", nargs="?", help="a phone number, the start of a name, or pinyin initials (zs)")
    p.add_argument("--limit", type=int, default=10, help="at most this many (1..50)")
    p.set_defaults(func=cmd_member)
    p = members.add_parser("pin-reset", help="remove a member's payment PIN and lift its lock (the member "
                           "sets a new one at a till)")
    p.add_argument("account_id", help=ACCOUNT_HELP)
    p.set_defaults(func=cmd_member)
    p = members.add_parser("code-enrol", help="enrol the member's dynamic member code (会员码): prints the "
                           "secret's otpauth URI and a QR for the member's authenticator app, this once; "
                           "enrolling again replaces it")
    p.add_argument("account_id", help=ACCOUNT_HELP)
    p.set_defaults(func=cmd_member)
    p = members.add_parser("reindex", help="rebuild the member index and the identity index (phones, each account's cards) from the accounts and cards")
    p.set_defaults(func=cmd_member)
    p = members.add_parser("import", help="move members in from another system (CSV or .xlsx): a dry run "
                                          "unless --apply")
    p.add_argument("file", nargs="?", help="the old system's export: .csv (UTF-8, UTF-8 with BOM or GBK) or .xlsx")
    p.add_argument("--map", help="columns, e.g. card=会员卡号,phone=手机号,name=姓名,principal=余额,bonus=赠送余额,"
                                 "ref=会员编号 (or a file of field=header lines); common headers are found "
                                 "without it")
    p.add_argument("--apply", action="store_true", help="import (default: a dry run that writes nothing)")
    p.add_argument("--report", help="where to write the reconciliation sheet (default: next to the file, "
                                    "<name>.import-report.csv)")
    p.add_argument("--template", metavar="OUT", help="write an empty template (.csv or .xlsx) and exit")
    p.add_argument("--operator", help="who does this (recorded as cashier id; slower: one member at a time)")
    p.set_defaults(func=cmd_member)
    p = members.add_parser("export", help="every member with cards, name, phone, principal, bonus, status "
                                          "(.csv or .xlsx, for the accountant)")
    p.add_argument("file", nargs="?", help="OUT.csv or OUT.xlsx")
    p.add_argument("--from-book", action="store_true",
                   help="read the database of record (what the reconcile service booked) instead of Redis")
    p.add_argument("--database-url", default=os.environ.get("CASHIER_DATABASE_URL"),
                   help="with --from-book: the database (env CASHIER_DATABASE_URL; default: the reconcile "
                        "service's SQLite file)")
    p.set_defaults(func=cmd_member)

    settings = subparsers.add_parser("settings", help="shop settings: spending order, balance cap")
    names = settings.add_subparsers(dest="name", required=True, metavar="SETTING")
    p = with_txn(names.add_parser("spend-order", help="show or set which bucket a payment takes first"))
    p.add_argument("value", nargs="?", choices=SPEND_ORDERS,
                   help="one of " + ", ".join(SPEND_ORDERS) + " (none: show the current one)")
    p.set_defaults(func=cmd_settings)
    p = with_txn(names.add_parser("balance-cap", help="show or set the most one account may hold ('off')"))
    p.add_argument("value", nargs="?", help="yuan, e.g. 5000.00, or 'off' (none: show the current one)")
    p.set_defaults(func=cmd_settings)
    p = with_txn(names.add_parser("member-pin-above", help="show or set the amount above which a member "
                                  "with a payment PIN must enter it (0: every charge)"))
    p.add_argument("value", nargs="?", help="yuan, e.g. 200.00, or 0 (none: show the current one)")
    p.set_defaults(func=cmd_settings)
