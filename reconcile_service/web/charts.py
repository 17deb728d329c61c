"""The back-office page's charts as inline SVG made here, on the server: no script, no
library, nothing fetched from elsewhere. `bar_chart` (bars per period, stacked or side
by side, one series per colour), `line_chart` (a line per series) and `hbar_chart`
(one horizontal bar per row: terminals, cashiers, members). Each answers Markup that
the templates put in the page as it is.

Amounts are integer minor units to the end: every bar and point carries its exact value
in `data-minor` (with `data-series` and `data-category`), and a <title> with the amount
formatted (¥1,234.56) for a pointer hovering over it. Only the geometry is float. The
axis labels are compact: ¥12.5K / ¥3.4M in English, ¥1.2万 / ¥3.4亿 in Chinese. Every
text is escaped; labels may be Chinese (the page's font stack has Noto Sans CJK).
"""
from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup, escape

from ..reports.render import money

PALETTE = ("#1f3a5f", "#e07b39", "#3a8f5c", "#b8446b", "#7a5fb5", "#c9a227", "#4a90b8", "#8c8c8c")
NO_DATA = {"en": "no data in this period", "zh_CN": "此期间无数据"}


@dataclass
class Series:
    key: str                 # data-series, e.g. "spent_principal"
    label: str               # shown in the legend (any language)
    values: list[int]        # minor units, one per category
    color: str = ""


def compact(minor: int, lang: str = "en") -> str:
    """A short axis label: ¥0, ¥50, ¥12.5K, ¥3.4M, ¥1.2B (en); ¥50, ¥1.2万, ¥3.4亿 (zh_CN)."""
    sign = "-" if minor < 0 else ""
    yuan = abs(int(minor)) / 100
    steps = ((1e8, "亿"), (1e4, "万")) if lang == "zh_CN" else ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))
    for size, suffix in steps:
        if yuan >= size:
            return f"{sign}¥{_short(yuan / size)}{suffix}"
    return f"{sign}¥{_short(yuan)}"


def _short(x: float) -> str:
    text = f"{x:,.2f}" if x < 10 else f"{x:,.1f}" if x < 100 else f"{x:,.0f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def nice_ticks(low: int, high: int, count: int = 5) -> list[int]:
    """Round tick values (1, 2 or 5 times a power of ten, in minor units) covering
    low..high, 0 included; integers however large."""
    low, high = min(low, 0), max(high, 0)
    if low == high:
        high = low + 100
    raw = max(1, -(-(high - low) // count))
    step = 1
    while True:
        for m in (1, 2, 5):
            if step * m >= raw:
                step *= m
                ticks = [(low // step) * step]
                while ticks[-1] < high:
                    ticks.append(ticks[-1] + step)
                return ticks
        step *= 10


def _attrs(**kw) -> str:
    return " ".join(f'{k.rstrip("_").replace("_", "-")}="{escape(str(v))}"' for k, v in kw.items())


class _Frame:
    """The plot area of a chart with a value axis: y of a value, ticks and grid."""

    def __init__(self, width: int, height: int, low: int, high: int, lang: str, left: int = 74,
                 bottom: int = 46, top: int = 14, right: int = 12):
        self.ticks = nice_ticks(low, high)
        self.low, self.high = self.ticks[0], self.ticks[-1]
        self.x0, self.x1, self.y0, self.y1 = left, width - right, height - bottom, top
        self.lang = lang

    def y(self, value: int) -> float:
        span = (self.high - self.low) or 1
        return self.y0 - (value - self.low) / span * (self.y0 - self.y1)

    def grid(self) -> list[str]:
        out = []
        for t in self.ticks:
            y = self.y(t)
            out.append(f'<line x1="{self.x0}" x2="{self.x1}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'stroke="{"#8894a4" if t == 0 else "#e3e8ee"}" stroke-width="1"/>')
            out.append(f'<text x="{self.x0 - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
                       f'{escape(compact(t, self.lang))}</text>')
        return out


def _svg(chart_id: str, title: str, width: int, height: int, body: list[str], legend: list[Series]) -> Markup:
    """The chart's <svg>: the legend under the plot, in as many rows as it needs (the
    view box grows by a row's height for each row after the first)."""
    items, x, row = [], 74, 0
    for s in legend:
        w = 26 + 7 * _text_width(s.label)
        if x + w > width and x > 74:
            x, row = 74, row + 1
        y = height - 14 + 17 * row
        items.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{s.color}"/>'
                     f'<text x="{x + 14}" y="{y + 9}" class="legend">{escape(s.label)}</text>')
        x += w
    height += 17 * row
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" {_attrs(id=chart_id, class_="chart", role="img")} '
            f'viewBox="0 0 {width} {height}" width="100%" preserveAspectRatio="xMinYMin meet" '
            f'font-family="Noto Sans CJK SC, Noto Sans, sans-serif" font-size="11">'
            f"<title>{escape(title)}</title>")
    return Markup(head + "".join(body) + "".join(items) + "</svg>")


def _text_width(text: str) -> int:
    """Latin-letter widths of `text` (a Chinese character is two)."""
    return sum(2 if ord(c) >= 0x2E80 else 1 for c in text)


def _colour(series: list[Series]) -> list[Series]:
    for i, s in enumerate(series):
        s.color = s.color or PALETTE[i % len(PALETTE)]
    return series


def _empty(chart_id: str, title: str, width: int, height: int, lang: str) -> Markup:
    return _svg(chart_id, title, width, height,
                [f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" class="empty" '
                 f'data-empty="1">{escape(NO_DATA.get(lang, NO_DATA["en"]))}</text>'], [])


def _category_labels(categories: list[str], x_of, y: float) -> list[str]:
    """At most about 12 labels under the axis, the last category's always among them; a
    day's label without its year when every category is a day of one year."""
    every = max(1, -(-len(categories) // 12))
    days = all(len(c) == 10 and c[4] == "-" for c in categories) and len({c[:4] for c in categories}) == 1
    return [f'<text x="{x_of(i):.1f}" y="{y:.1f}" text-anchor="middle" class="cat">{escape(c[5:] if days else c)}</text>'
            for i, c in enumerate(categories) if (len(categories) - 1 - i) % every == 0]


def bar_chart(chart_id: str, title: str, categories: list[str], series: list[Series], *, lang: str = "en",
              stacked: bool = True, width: int = 760, height: int = 280) -> Markup:
    """Bars per category; stacked: positive values pile up from 0, negative ones down."""
    series = _colour([s for s in series if len(s.values) == len(categories)])
    if not categories or not series or not any(v for s in series for v in s.values):
        return _empty(chart_id, title, width, height, lang)
    if stacked:
        highs = [sum(max(0, s.values[i]) for s in series) for i in range(len(categories))]
        lows = [sum(min(0, s.values[i]) for s in series) for i in range(len(categories))]
    else:
        highs = [max(s.values[i] for s in series) for i in range(len(categories))]
        lows = [min(s.values[i] for s in series) for i in range(len(categories))]
    f = _Frame(width, height, min(lows), max(highs), lang)
    slot = (f.x1 - f.x0) / len(categories)
    bar = max(1.0, slot * 0.7 / (1 if stacked else len(series)))
    body = f.grid()
    for i, cat in enumerate(categories):
        up = down = 0
        for j, s in enumerate(series):
            v = s.values[i]
            if stacked:
                base = up if v >= 0 else down
                top = base + v
                up, down = (top, down) if v >= 0 else (up, top)
                x = f.x0 + slot * i + slot * 0.15
            else:
                base, top = 0, v
                x = f.x0 + slot * i + slot * 0.15 + bar * j
            y_a, y_b = f.y(max(base, top)), f.y(min(base, top))
            body.append(f'<rect {_attrs(data_series=s.key, data_category=cat, data_minor=v)} x="{x:.1f}" '
                        f'y="{y_a:.1f}" width="{bar:.1f}" height="{max(0.0, y_b - y_a):.1f}" fill="{s.color}">'
                        f"<title>{escape(f'{cat} · {s.label}: {money(v)}')}</title></rect>")
    body += _category_labels(categories, lambda i: f.x0 + slot * (i + 0.5), f.y0 + 14)
    return _svg(chart_id, title, width, height, body, series)


def line_chart(chart_id: str, title: str, categories: list[str], series: list[Series], *, lang: str = "en",
               width: int = 760, height: int = 280) -> Markup:
    """A line per series through one point per category (a lone point is a dot)."""
    series = _colour([s for s in series if len(s.values) == len(categories)])
    if not categories or not series:
        return _empty(chart_id, title, width, height, lang)
    values = [v for s in series for v in s.values]
    f = _Frame(width, height, min(values), max(values), lang)
    slot = (f.x1 - f.x0) / len(categories)
    x_of = lambda i: f.x0 + slot * (i + 0.5)
    body = f.grid()
    for s in series:
        pts = " ".join(f"{x_of(i):.1f},{f.y(v):.1f}" for i, v in enumerate(s.values))
        body.append(f'<polyline points="{pts}" fill="none" stroke="{s.color}" stroke-width="2"/>')
        for i, v in enumerate(s.values):
            body.append(f'<circle {_attrs(data_series=s.key, data_category=categories[i], data_minor=v)} '
                        f'cx="{x_of(i):.1f}" cy="{f.y(v):.1f}" r="3" fill="{s.color}">'
                        f"<title>{escape(f'{categories[i]} · {s.label}: {money(v)}')}</title></circle>")
    body += _category_labels(categories, x_of, f.y0 + 14)
    return _svg(chart_id, title, width, height, body, series)


def hbar_chart(chart_id: str, title: str, rows: list[tuple[str, int]], *, lang: str = "en", series_key: str = "value",
               width: int = 760, bar_height: int = 22) -> Markup:
    """One horizontal bar per (label, minor) row, in the order given; the label on the
    left, the exact amount at the bar's end."""
    height = 30 + bar_height * max(1, len(rows))
    if not rows or not any(v for _, v in rows):
        return _empty(chart_id, title, width, max(height, 80), lang)
    left = min(260, 16 + 7 * max(_text_width(label) for label, _ in rows))
    top_value = max(1, max(abs(v) for _, v in rows))
    scale = (width - left - 120) / top_value
    body = []
    for i, (label, v) in enumerate(rows):
        y = 10 + i * bar_height
        w = abs(v) * scale
        body.append(f'<text x="{left - 6}" y="{y + bar_height * 0.65:.1f}" text-anchor="end" class="cat">'
                    f"{escape(label)}</text>")
        body.append(f'<rect {_attrs(data_series=series_key, data_category=label, data_minor=v)} x="{left}" '
                    f'y="{y + 3}" width="{w:.1f}" height="{bar_height - 6}" fill="{PALETTE[0] if v >= 0 else PALETTE[3]}">'
                    f"<title>{escape(f'{label}: {money(v)}')}</title></rect>")
        body.append(f'<text x="{left + w + 6:.1f}" y="{y + bar_height * 0.65:.1f}" class="amount">'
                    f"{escape(money(v))}</text>")
    return _svg(chart_id, title, width, height, body, [])
