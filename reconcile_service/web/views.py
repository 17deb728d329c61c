"""What the dashboard and the chart pages show, assembled from the report functions of
reconcile_service.reports.book (the same computations as `reconcile-service report`):
`dashboard(...)` for today, `chart_page(name, ...)` for one chart over the last 30 days,
12 weeks or 12 months. Each chart comes with the table of its values: rows of
(category, [(series key, minor)]) that the template prints under the SVG with the exact
amounts (and `data-minor`), so the chart's every number can be read and checked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from ..reports import book, render
from .charts import Series, bar_chart, hbar_chart, line_chart

CHARTS = ("sales", "topups", "liability", "tills", "members", "promotions")
GRANULARITIES = ("day", "week", "month")
TOP_MEMBERS = 10


@dataclass
class Chart:
    chart_id: str
    svg: object
    columns: list[tuple[str, str]]                      # (series key, label)
    rows: list[tuple[str, list[int]]]                   # (category, values in column order)
    title: str = ""
    note: str = ""


@dataclass
class Page:
    name: str
    title: str
    granularity: str
    periods: list[tuple[date, date]]
    charts: list[Chart] = field(default_factory=list)


def category(first: date, last: date, granularity: str) -> str:
    if granularity == "day":
        return first.isoformat()
    if granularity == "month":
        return f"{first.year:04d}-{first.month:02d}"
    return f"{first.isoformat()}..{last.isoformat()}"


def _series_chart(chart_id, title, cats, series, lang, kind="bar", **kw) -> Chart:
    draw = {"bar": bar_chart, "line": line_chart}[kind]
    svg = draw(chart_id, title, cats, series, lang=lang, **kw)
    return Chart(chart_id, svg, [(s.key, s.label) for s in series],
                 [(c, [s.values[i] for s in series]) for i, c in enumerate(cats)], title)


def chart_page(name: str, engine, zone, lang: str, granularity: str, last: date, memo: dict | None) -> Page:
    L = lambda k: render.label(lang, k)
    periods = book.period_days(granularity, last)
    bounds = book.period_bounds(periods, zone)
    cats = [category(f, l, granularity) for f, l in periods]
    page = Page(name, L(f"chart_{name}"), granularity, periods)
    if name in ("sales", "topups", "liability"):
        reps = book.liability_series(engine, bounds, memo)
        line = lambda rep, key, detail="": next((x for x in rep.lines if x.key == key and x.detail == detail), None)
        if name == "sales":
            series = [Series("spent_principal", L("spent_principal"), [line(r, "spent").principal_minor for r in reps]),
                      Series("spent_bonus", L("spent_bonus"), [line(r, "spent").bonus_minor for r in reps])]
            page.charts.append(_series_chart("chart-sales", page.title, cats, series, lang))
            refunds = [Series("refunds", L("refunds"), [line(r, "refunds").total_minor for r in reps])]
            page.charts.append(_series_chart("chart-refunds", L("refunds"), cats, refunds, lang, height=200))
        elif name == "topups":
            # the report's top-up lines, a method in the order the report prints them; a
            # method without a top-up in any period is left out
            topup = lambda r, m: sum(x.principal_minor for x in r.lines if x.key == "topup" and x.detail == m)
            methods = dict.fromkeys(x.detail for r in reps for x in r.lines if x.key == "topup")
            series = [Series(f"topup_{m}", f"{L('topup')} · {render.method_label(lang, m)}",
                             [topup(r, m) for r in reps]) for m in methods if any(topup(r, m) for r in reps)]
            series.append(Series("bonus_granted", L("bonus_granted"),
                                 [line(r, "bonus_granted").bonus_minor for r in reps], color="#c9a227"))
            page.charts.append(_series_chart("chart-topups", page.title, cats, series, lang))
        else:
            series = [Series("closing_principal", L("closing_principal"), [r.closing[0] for r in reps]),
                      Series("closing_bonus", L("closing_bonus"), [r.closing[1] for r in reps])]
            chart = _series_chart("chart-liability", page.title, cats, series, lang, kind="line")
            unbalanced = [c for c, r in zip(cats, reps) if not r.balanced]
            chart.note = (f"{L('check')}: {L('ok')}" if not unbalanced
                          else f"{L('check')}: {L('mismatch')} ({', '.join(unbalanced)})")
            page.charts.append(chart)
    elif name == "tills":
        start, end = bounds[0], bounds[-1]
        for by, chart_id, none_key in (("terminal", "chart-terminals", "no_terminal"),
                                       ("cashier", "chart-cashiers", "no_cashier")):
            sums = book.breakdown(engine, start, end, by, memo)
            rows = sorted(((k or L(none_key), -sum(v.get("spent", [0, 0])[:2])) for k, v in sums.items()
                           if "spent" in v), key=lambda kv: (-kv[1], kv[0]))
            title = L(f"by_{by}")
            page.charts.append(Chart(chart_id, hbar_chart(chart_id, title, rows, lang=lang, series_key="spent"),
                                     [("spent", L("spent"))], [(k, [v]) for k, v in rows], title))
    elif name == "members":
        top = book.top_members(engine, bounds[0], bounds[-1], TOP_MEMBERS, memo)
        label = lambda r: r["account_id"] + (f" {r['holder_name']}" if r["holder_name"] else "")
        rows = [(label(r), r["spent_minor"]) for r in top]
        page.charts.append(Chart("chart-members", hbar_chart("chart-members", L("top_members"), rows, lang=lang,
                                                             series_key="spent"),
                                 [("spent", L("spent")), ("spent_principal", L("principal")),
                                  ("spent_bonus", L("bonus"))],
                                 [(label(r), [r["spent_minor"], r["principal_minor"], r["bonus_minor"]]) for r in top],
                                 L("top_members")))
    elif name == "promotions":
        per = book.breakdown_series(engine, bounds, "promotion", memo)
        topup = lambda d, k, i: d.get(k, {}).get("topup", [0, 0, 0])[i]
        series = [Series("topups_with_bonus", L("topups_with_bonus"), [topup(d, "with_bonus", 0) for d in per]),
                  Series("bonus_granted", L("bonus_granted"), [topup(d, "with_bonus", 1) for d in per],
                         color="#c9a227"),
                  Series("topups_without_bonus", L("topups_without_bonus"),
                         [topup(d, "without_bonus", 0) for d in per], color="#8c8c8c")]
        chart = _series_chart("chart-promotions", page.title, cats, series, lang, stacked=False)
        brought, bonus = sum(series[0].values), sum(series[1].values)
        if brought:
            chart.note = f"{L('bonus_per_100')}: {render.money(bonus * 10_000 // brought)}"
        page.charts.append(chart)
    else:
        raise book.ReportError("chart", f"one of {', '.join(CHARTS)}")
    return page


def dashboard(engine, zone, today: date, memo: dict | None) -> dict:
    """Today's numbers: the liability report of today, the sales per terminal, the tills
    that journaled today, the open discrepancies and the open offline debts (issue 27)."""
    start, end = book.day_bounds(today, today, zone)
    rep = book.liability_series(engine, [start, end], memo)[0]
    terminals = book.breakdown(engine, start, end, "terminal", memo)
    seen = book.tills_seen(engine, start, end)
    for till in seen:
        till["spent_minor"] = -sum(terminals.get(till["terminal_id"], {}).get("spent", [0, 0])[:2])
    spent = next(x for x in rep.lines if x.key == "spent")
    refunds = next(x for x in rep.lines if x.key == "refunds")
    topups = [x for x in rep.lines if x.key == "topup" and x.principal_minor]
    bonus = next(x for x in rep.lines if x.key == "bonus_granted")
    return dict(rep=rep, spent=spent, refunds=refunds, topups=topups, bonus=bonus,
                topups_total=sum(x.principal_minor for x in topups), tills=seen,
                discrepancies=book.discrepancies(engine, limit=10), open_count=book.open_discrepancy_count(engine),
                debts=book.open_debts(engine))
