"""Chooses and installs the UI language (English or Simplified Chinese).

The terminal's own strings come from ``desktop/translations/terminal_<lang>.qm``
(found with `core.resources.resource_path`; the .ts sources sit beside them), Qt's
own dialog strings from the qtbase catalogue shipped with PySide6. 'system' picks
zh_CN when the system locale is Chinese. Switching at run time sends every widget a
LanguageChange event; the widgets re-set their texts in `retranslate()`.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator

from core.resources import resource_path

LANGUAGES = ("en", "zh_CN")
SYSTEM = "system"

_installed: list[QTranslator] = []


class Retranslates:
    """Mixin for a widget whose texts follow the language: put it before the Qt base
    (`class SalePage(Retranslates, QWidget)`) and set every text in `retranslate()`,
    which runs again on each LanguageChange event."""

    def retranslate(self) -> None:
        """Subclasses set their texts here (again on every language change)."""

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


def translation_file(lang: str):
    return resource_path("desktop", "translations", f"terminal_{lang}.qm")


def resolve(setting: str | None) -> str:
    """'en' or 'zh_CN' for a setting of 'system', 'en', 'zh_CN' (or None)."""
    if setting in LANGUAGES:
        return setting
    return "zh_CN" if QLocale.system().language() == QLocale.Language.Chinese else "en"


def locale_of(lang: str) -> QLocale:
    return QLocale(QLocale.Language.Chinese, QLocale.Country.China) if lang == "zh_CN" else \
        QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)


def install(lang_setting: str | None) -> str:
    """Install the translators for `lang_setting`; returns the language now in use."""
    lang = resolve(lang_setting)
    app = QCoreApplication.instance()
    for tr in _installed:
        app.removeTranslator(tr)
    _installed.clear()
    QLocale.setDefault(locale_of(lang))
    if lang == "en":
        return lang
    ours = QTranslator()
    if not ours.load(str(translation_file(lang))):
        raise FileNotFoundError(f"translation {translation_file(lang)} missing or unreadable")
    qt = QTranslator()
    if qt.load(f"qtbase_{lang}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
        _installed.append(qt)
    app.installTranslator(ours)
    _installed.append(ours)
    return lang
