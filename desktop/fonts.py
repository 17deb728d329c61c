"""Can this till draw the terminal's text? Glyph checks on the fonts Qt actually resolves.

A font file on disk proves nothing: without fontconfig's configuration
(/etc/fonts/fonts.conf, Debian's fontconfig-config) Qt finds no font at all, and with
only a Latin font (fonts-dejavu-core) every Chinese character is drawn as an empty box.
So each character is laid out the way a label lays it out (QTextLayout, with Qt's font
fallback) and the glyphs Qt picked are looked at: no glyph run, an invalid raw font, a
font that does not support the character or glyph index 0 (.notdef, the empty box)
means the character cannot be drawn. Used by `cashier-terminal --self-test` (fails
naming the characters) and at start in zh_CN (says so when Chinese cannot be drawn).
Needs a QGuiApplication.
"""
from __future__ import annotations

# What the self-test must be able to draw: Chinese, Latin, the currency sign, digits.
SELF_TEST_TEXT = "收银 Cashier ¥0.01"
# Enough to tell whether Chinese renders (the zh_CN start check).
CHINESE_PROBE = "收银终端会员卡"
FONT_PACKAGES_HINT = ("on Debian: apt install fontconfig-config fonts-dejavu-core "
                      "fonts-wqy-microhei (or fonts-noto-cjk)")


def _drawable(char: str, font) -> tuple[bool, str]:
    """(True, family) when Qt draws `char` in `font` (or a fallback) with a real glyph."""
    from PySide6.QtGui import QTextLayout

    layout = QTextLayout(char, font)
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(10_000)
    layout.endLayout()
    runs = layout.glyphRuns()
    if not runs:
        return False, ""
    for run in runs:
        raw = run.rawFont()
        glyphs = list(run.glyphIndexes())
        # Qt's box engine (no font at all) claims every character but has no size; its
        # familyName() crashes, so it is recognised before anything else is asked.
        if not raw.isValid() or raw.pixelSize() <= 0 or not glyphs or 0 in glyphs \
                or not raw.supportsCharacter(ord(char)):
            return False, ""
    return True, runs[0].rawFont().familyName()


def missing_characters(text: str, font=None) -> list[str]:
    """The characters of `text` (spaces aside) that no font on this machine can draw."""
    from PySide6.QtGui import QFont, QGuiApplication

    font = font or QGuiApplication.font() or QFont()
    missing = []
    for char in dict.fromkeys(text):          # each character once, in order
        if char.isspace():
            continue
        ok, _family = _drawable(char, font)
        if not ok:
            missing.append(char)
    return missing


def families_used(text: str, font=None) -> list[str]:
    """The font families Qt resolves for the characters of `text` (for messages and tests)."""
    from PySide6.QtGui import QFont, QGuiApplication

    font = font or QGuiApplication.font() or QFont()
    found = []
    for char in dict.fromkeys(text):
        if not char.isspace():
            ok, family = _drawable(char, font)
            if ok and family not in found:
                found.append(family)
    return found


def self_test_problem() -> str | None:
    """One sentence when some character of SELF_TEST_TEXT cannot be drawn, else None."""
    missing = missing_characters(SELF_TEST_TEXT)
    if not missing:
        return None
    return (f"no font can draw {''.join(missing)!r} of {SELF_TEST_TEXT!r} (text would show as empty "
            f"boxes; fontconfig configuration or fonts missing: {FONT_PACKAGES_HINT})")


def chinese_problem() -> str | None:
    """One sentence when Chinese cannot be drawn (the zh_CN start check), else None."""
    missing = missing_characters(CHINESE_PROBE)
    if not missing:
        return None
    return (f"the UI language is Chinese (zh_CN) but no font on this till can draw Chinese "
            f"(missing {''.join(missing)}): it would show as empty boxes; install a CJK font, "
            f"{FONT_PACKAGES_HINT}")
