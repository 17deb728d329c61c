"""The back-office page's SVG builder (reconcile_service.web.charts): every chart is
well-formed XML whatever the data (none, one point, amounts of 10^17 minor units,
negative values, Chinese and markup-like labels), every bar and point carries its exact
amount in data-minor, shapes stay inside the view box, and the axis ticks cover the
data with round steps."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings, strategies as st

from reconcile_service.reports.render import money
from reconcile_service.web.charts import Series, bar_chart, compact, hbar_chart, line_chart, nice_ticks

NS = "{http://www.w3.org/2000/svg}"


def parse(svg) -> ET.Element:
    root = ET.fromstring(str(svg))
    assert root.tag == NS + "svg" and root.get("class") == "chart" and root.get("id")
    return root


def marks(root) -> list[ET.Element]:
    return [e for e in root.iter() if e.get("data-minor") is not None]


def inside(root, el) -> None:
    _, _, w, h = (float(x) for x in root.get("viewBox").split())
    if el.tag == NS + "rect":
        x, y, ew, eh = (float(el.get(k)) for k in ("x", "y", "width", "height"))
        assert all(math.isfinite(v) for v in (x, y, ew, eh))
        assert 0 <= x and x + ew <= w + 0.5 and 0 <= y and y + eh <= h + 0.5 and eh >= 0
    else:
        cx, cy = float(el.get("cx")), float(el.get("cy"))
        assert 0 <= cx <= w and 0 <= cy <= h


@pytest.mark.parametrize("draw", [bar_chart, line_chart])
def test_no_data_is_a_message_not_an_error(draw):
    for cats, series in (([], []), (["2026-12-01"], []), ([], [Series("a", "A", [])])):
        root = parse(draw("c1", "Sales", cats, series, lang="zh_CN"))
        assert not marks(root)
        assert [e.text for e in root.iter(NS + "text") if e.get("data-empty")] == ["此期间无数据"]
    assert not marks(parse(bar_chart("c", "t", ["d1", "d2"], [Series("a", "A", [0, 0])])))
    root = parse(hbar_chart("h", "Terminals", [], lang="en"))
    assert [e.text for e in root.iter(NS + "text") if e.get("data-empty")] == ["no data in this period"]


def test_one_point():
    root = parse(line_chart("l", "Liability", ["2026-12-01"], [Series("p", "Principal", [12_345])]))
    (dot,) = marks(root)
    assert dot.tag == NS + "circle" and dot.get("data-minor") == "12345" and dot.get("data-category") == "2026-12-01"
    inside(root, dot)
    assert dot.find(NS + "title").text.endswith("¥123.45")
    root = parse(bar_chart("b", "Sales", ["2026-12-01"], [Series("s", "Spent", [5])]))
    (bar,) = marks(root)
    assert bar.get("data-minor") == "5" and float(bar.get("height")) > 0
    inside(root, bar)


def test_huge_amounts_stay_exact_and_inside():
    huge = 10 ** 17 + 7                  # a thousand trillion yuan and 7 fen
    cats = ["2026-11", "2026-12"]
    root = parse(bar_chart("b", "Top-ups", cats, [Series("a", "A", [huge, 1]), Series("b", "B", [huge, 0])],
                           lang="zh_CN"))
    values = sorted(int(e.get("data-minor")) for e in marks(root))
    assert values == [0, 1, huge, huge]
    for e in marks(root):
        inside(root, e)
    ticks = [e.text for e in root.iter(NS + "text") if e.get("class") == "tick"]
    assert ticks[0] == "¥0" and all("亿" in t for t in ticks[1:]) and all(len(t) < 16 for t in ticks)
    assert money(huge) == "¥1,000,000,000,000,000.07"
    root = parse(hbar_chart("h", "Members", [("VIP", huge), ("B", 1)]))
    assert [int(e.get("data-minor")) for e in marks(root)] == [huge, 1]
    assert "¥1,000,000,000,000,000.07" in [e.text for e in root.iter(NS + "text")]


def test_chinese_and_markup_labels_are_text():
    series = [Series("topup_cash", "充值 · 现金", [100, 200]), Series("x", "<b>&\"'", [1, 2])]
    root = parse(bar_chart("c", "充值（按支付方式）与赠送金", ["2026-12-01", "2026-12-02"], series, lang="zh_CN"))
    legend = [e.text for e in root.iter(NS + "text") if e.get("class") == "legend"]
    assert legend == ["充值 · 现金", "<b>&\"'"]
    assert root.find(NS + "title").text == "充值（按支付方式）与赠送金"
    assert not list(root.iter("b")) and not list(root.iter(NS + "b"))
    root = parse(hbar_chart("h", "会员", [("VIP-8 王小明", 50_000)], lang="zh_CN"))
    assert "VIP-8 王小明" in [e.text for e in root.iter(NS + "text")]


def test_a_long_legend_wraps_inside_the_chart():
    series = [Series(f"s{i}", f"充值 · 未记录支付方式 {i}", [i + 1]) for i in range(9)]
    root = parse(bar_chart("c", "t", ["d"], series, lang="zh_CN", width=500))
    _, _, w, h = (float(x) for x in root.get("viewBox").split())
    legend = [e for e in root.iter(NS + "text") if e.get("class") == "legend"]
    assert len(legend) == 9 and h > 280
    for e in legend:
        x = float(e.get("x"))
        assert x + 7 * 2 * 9 <= w + 30 and float(e.get("y")) < h
    assert len({e.get("y") for e in legend}) >= 3


def test_stacked_negative_values_go_below_zero():
    root = parse(bar_chart("c", "Net", ["a"], [Series("up", "Up", [300]), Series("down", "Down", [-100])]))
    up, down = marks(root)
    zero = next(float(e.get("y1")) for e in root.iter(NS + "line") if e.get("stroke") == "#8894a4")
    assert float(up.get("y")) + float(up.get("height")) == pytest.approx(zero, abs=0.2)
    assert float(down.get("y")) == pytest.approx(zero, abs=0.2) and float(down.get("height")) > 0
    assert float(up.get("height")) == pytest.approx(3 * float(down.get("height")), rel=0.02)


def test_bars_are_as_tall_as_their_amounts():
    root = parse(bar_chart("c", "Sales", ["a", "b", "c"], [Series("s", "S", [100, 200, 400])]))
    heights = [float(e.get("height")) for e in marks(root)]
    assert heights[1] == pytest.approx(2 * heights[0], rel=0.02) and heights[2] == pytest.approx(4 * heights[0],
                                                                                                  rel=0.02)


def test_axis_labels():
    assert [compact(v) for v in (0, 5_000, 1_250_000, 340_000_000, 10 ** 14)] == \
        ["¥0", "¥50", "¥12.5K", "¥3.4M", "¥1T"]
    assert [compact(v, "zh_CN") for v in (5_000, 1_250_000, 340_000_000_00)] == ["¥50", "¥1.25万", "¥3.4亿"]
    assert compact(-150_000, "en") == "-¥1.5K"
    cats = [f"2026-11-{d:02d}" for d in range(1, 31)]
    root = parse(bar_chart("c", "t", cats, [Series("s", "S", list(range(1, 31)))]))
    shown = [e.text for e in root.iter(NS + "text") if e.get("class") == "cat"]
    assert shown[-1] == "11-30" and 8 <= len(shown) <= 13          # the year left out, the last day shown


@settings(max_examples=300, deadline=None)
@given(st.integers(-10 ** 18, 10 ** 18), st.integers(-10 ** 18, 10 ** 18))
def test_ticks_cover_the_data_with_round_steps(a, b):
    low, high = min(a, b), max(a, b)
    ticks = nice_ticks(low, high)
    assert ticks[0] <= min(low, 0) and ticks[-1] >= max(high, 0) and 0 in ticks
    steps = {y - x for x, y in zip(ticks, ticks[1:])}
    assert len(steps) == 1 and 2 <= len(ticks) <= 12
    step = steps.pop()
    assert str(step).rstrip("0") in ("1", "2", "5")
