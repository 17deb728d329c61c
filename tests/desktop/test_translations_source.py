"""The zh_CN catalogue is what lupdate makes of the sources: run on a copy, lupdate finds
every string the terminal translates, each with its translation, and none of the
catalogue's translations would be dropped. Fails when a string is written where lupdate
cannot see its context (a module-level `tr(text)` helper), or added without Chinese."""
from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import PySide6

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "desktop" / "translations" / "terminal_zh_CN.ts"
LUPDATE = Path(PySide6.__file__).parent / "lupdate"


def live_messages(ts: Path) -> dict[tuple[str, str], str]:
    """(context, source) -> translation of every message not marked vanished/obsolete."""
    out = {}
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            if translation is not None and translation.get("type") in ("vanished", "obsolete"):
                continue
            out[(name, message.findtext("source") or "")] = (
                translation.text or "" if translation is not None and translation.get("type") != "unfinished" else "")
    return out


@pytest.mark.skipif(not LUPDATE.exists(), reason="PySide6's lupdate is not installed")
def test_lupdate_keeps_every_translation_and_finds_no_untranslated_string(tmp_path):
    copy = tmp_path / CATALOGUE.name
    shutil.copy(CATALOGUE, copy)
    sources = sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("desktop/*.py"), *ROOT.glob("desktop/receipts/*.py")])
    done = subprocess.run([str(LUPDATE), *sources, "-ts", str(copy)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    before, after = live_messages(CATALOGUE), live_messages(copy)
    dropped = sorted(set(before) - set(after))
    assert not dropped, f"lupdate would drop these translations (context, text): {dropped[:10]}"
    untranslated = sorted(key for key, text in after.items() if not text)
    assert not untranslated, f"strings without a translation, or in no context (context, text): {untranslated[:10]}"
