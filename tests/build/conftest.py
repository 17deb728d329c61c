"""The PyInstaller bundle of build.spec, built once per test session and shared by the
bundle tests (test_bundle.py) and the Debian package tests (test_deb.py): a build takes
1-2 minutes, the biggest part of this folder's time."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT_S = 900


@pytest.fixture(scope="session")
def bundle(tmp_path_factory) -> Path:
    # CASHIER_TEST_BUNDLE=dist/cashier reuses a bundle built from this checkout (to iterate
    # on the packaging tests); CI always builds afresh.
    if os.environ.get("CASHIER_TEST_BUNDLE"):
        return Path(os.environ["CASHIER_TEST_BUNDLE"]).resolve()
    out = tmp_path_factory.mktemp("pyinstaller")
    started = time.monotonic()
    build = subprocess.run([sys.executable, "-m", "PyInstaller", "build.spec", "--noconfirm", "--log-level", "WARN",
                            "--distpath", str(out / "dist"), "--workpath", str(out / "work")],
                           cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-6000:]
    folder = out / "dist" / "cashier"
    size_mb = sum(f.lstat().st_size for f in folder.rglob("*") if not f.is_symlink() and f.is_file()) / 1e6
    print(f"\nbundle built in {time.monotonic() - started:.0f} s: {folder} ({size_mb:.1f} MB)")
    return folder
