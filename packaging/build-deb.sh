#!/usr/bin/env bash
# One command for the Debian package: builds the PyInstaller bundle (build.spec) and
# packs it with dpkg-deb into dist/cashier_<version>_<arch>.deb (packaging/build_deb.py).
#   bash packaging/build-deb.sh            # needs .venv with ".[build]" (made if missing), dpkg-dev
#   bash packaging/build-deb.sh --compression gzip   # options go to build_deb.py (gzip: fast, bigger)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -c "import PyInstaller" 2>/dev/null || .venv/bin/python -m pip install -q -e ".[build]"
command -v dpkg-deb >/dev/null && command -v readelf >/dev/null || {
  echo "build-deb: needs dpkg-deb and readelf: apt install dpkg-dev binutils" >&2; exit 2; }
.venv/bin/python -m PyInstaller build.spec --noconfirm --log-level WARN --distpath dist --workpath build
.venv/bin/python packaging/build_deb.py --bundle dist/cashier --out dist "$@"
