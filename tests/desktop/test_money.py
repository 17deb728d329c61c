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


# ---------------------------------------------------------------- issue 13 item 14: 。, item 8: words

@pytest.mark.parametrize("text, minor", [("12。50", 1250), ("12｡5", 1250), ("。5", 50), ("１２。０５", 1205)])
def test_the_ime_full_stop_is_a_decimal_mark(text, minor):
    assert parse_amount_minor(text) == minor


def test_two_decimal_marks_are_refused():
    with pytest.raises(AmountError) as info:
        parse_amount_minor("1.2。3")
    assert info.value.reason == money.NOT_A_NUMBER


_EN = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                  "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_EN.update({w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1})
_EN_SCALE = {"thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9, "trillion": 10 ** 12}


def _read_english(words: str) -> int:
    """An independent reader of English number words (the oracle)."""
    total, group = 0, 0
    for word in words.replace("-", " ").split():
        if word in _EN:
            group += _EN[word]
        elif word == "hundred":
            group *= 100
        else:
            total += group * _EN_SCALE[word]
            group = 0
    return total + group


_ZH = dict(zip("零壹贰叁肆伍陆柒捌玖", range(10)))
_ZH_UNIT = {"拾": 10, "佰": 100, "仟": 1000}


def _read_chinese(words: str) -> int:
    """An independent reader of financial numerals (万 and 亿 sections)."""
    def section(text: str) -> int:
        value, digit = 0, 0
        for ch in text:
            if ch in _ZH:
                digit = _ZH[ch]
            else:
                value += digit * _ZH_UNIT[ch]
                digit = 0
        return value + digit
    total = 0
    yi, _, rest = words.rpartition("亿")
    if yi:
        total += _read_chinese(yi) * 10 ** 8
    wan, _, rest = rest.rpartition("万")
    if wan:
        total += section(wan) * 10 ** 4
    return total + section(rest)


@given(st.integers(min_value=0, max_value=MAX_AMOUNT_MINOR))
def test_amount_in_words_reads_back_to_the_same_amount(amount_minor):
    yuan, fen = divmod(amount_minor, 100)
    english = money.amount_in_words(amount_minor)
    head, _, tail = english.partition(" yuan")
    assert _read_english(head) == yuan
    assert _read_english(tail.removeprefix(" and ").removesuffix(" fen") or "zero") == fen
    chinese = money.amount_in_words(amount_minor, QLocale(QLocale.Language.Chinese, QLocale.Country.China))
    assert chinese.startswith("人民币")
    body = chinese.removeprefix("人民币")
    yuan_words, _, fen_words = body.rpartition("元")
    assert (_read_chinese(yuan_words) if yuan_words else 0) == yuan
    jiao = _ZH[fen_words[fen_words.index("角") - 1]] if "角" in fen_words else 0
    fen_only = _ZH[fen_words[fen_words.index("分") - 1]] if "分" in fen_words else 0
    assert jiao * 10 + fen_only == fen
    assert fen_words.endswith("整") == (fen_only == 0)


@pytest.mark.parametrize("minor, zh", [(100000, "人民币壹仟元整"), (150050, "人民币壹仟伍佰元伍角整"),
                                       (100005, "人民币壹仟元零伍分"), (1000100, "人民币壹万零壹元整")])
def test_chinese_amounts_in_words(minor, zh):
    assert money.amount_in_words(minor, QLocale(QLocale.Language.Chinese, QLocale.Country.China)) == zh
