"""Money parsing and formatting: strict, integer-only, locale-aware."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QLocale

from core import MAX_AMOUNT_MINOR
from desktop import money
from desktop.money import AmountError, format_minor, format_plain, parse_amount_minor


@pytest.mark.parametrize("text, minor", [
    ("12.50", 1250), ("12.5", 1250), ("12", 1200), ("0.01", 1), (".5", 50), ("12.", 1200),
    (" ¥12.50 ", 1250), ("￥3", 300), ("１２．５０", 1250), ("1000000000", MAX_AMOUNT_MINOR),
    ("0000012.30", 1230),
])
def test_parses_exactly(text, minor):
    assert parse_amount_minor(text) == minor


@pytest.mark.parametrize("text, reason", [
    ("", money.EMPTY), ("   ", money.EMPTY), (None, money.EMPTY),
    ("-1", money.NEGATIVE), ("¥-1", money.NEGATIVE), ("-0.5", money.NEGATIVE),
    ("1.234", money.TOO_MANY_DECIMALS), ("0.001", money.TOO_MANY_DECIMALS),
    ("0", money.ZERO), ("0.00", money.ZERO),
    ("1000000000.01", money.TOO_LARGE), ("99999999999999999999", money.TOO_LARGE),
    ("abc", money.NOT_A_NUMBER), ("1e3", money.NOT_A_NUMBER), ("1,000", money.NOT_A_NUMBER),
    ("1.2.3", money.NOT_A_NUMBER), (".", money.NOT_A_NUMBER), ("nan", money.NOT_A_NUMBER),
    ("inf", money.NOT_A_NUMBER), ("+5", money.NOT_A_NUMBER), ("5 5", money.NOT_A_NUMBER),
])
def test_refuses_with_a_reason(text, reason):
    with pytest.raises(AmountError) as info:
        parse_amount_minor(text)
    assert info.value.reason == reason


def test_locale_decimal_comma():
    assert parse_amount_minor("12,50", decimal_point=",") == 1250
    with pytest.raises(AmountError):
        parse_amount_minor("1.000,50", decimal_point=",")


@given(st.integers(min_value=1, max_value=MAX_AMOUNT_MINOR))
def test_round_trip_of_every_amount(minor):
    assert parse_amount_minor(format_plain(minor)) == minor
    if minor < 100_000:                     # below ¥1,000 the display has no group separator
        assert parse_amount_minor(format_minor(minor)) == minor


@given(st.text(max_size=25))
def test_any_text_parses_or_gives_a_reason(text):
    try:
        minor = parse_amount_minor(text)
    except AmountError as exc:
        assert exc.reason in (money.EMPTY, money.NOT_A_NUMBER, money.NEGATIVE, money.TOO_MANY_DECIMALS,
                              money.ZERO, money.TOO_LARGE)
    else:
        assert isinstance(minor, int) and 1 <= minor <= MAX_AMOUNT_MINOR


def test_format_with_locale(qapp):
    assert format_minor(1250) == "¥12.50"
    assert format_minor(-1250) == "-¥12.50"
    assert format_minor(5, QLocale(QLocale.Language.Chinese, QLocale.Country.China)) == "¥0.05"
    assert format_minor(123456789, QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)) == "¥1,234,567.89"
    with pytest.raises(TypeError):
        format_minor(12.5)
