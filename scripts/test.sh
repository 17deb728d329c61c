#!/usr/bin/env bash
# Installs the project into .venv and runs the whole test suite against the real
# Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432). Extra arguments go to pytest.
#
#   bash scripts/test.sh           the full suite, serially: what CI runs
#   bash scripts/test.sh --fast    the fast lane, after each change: everything but the build,
#                                  slow (fault, multi-process) and browser tests, on 2 xdist
#                                  workers, each with a private redis-server (tests/conftest.py)
set -uo pipefail
FAST=()
if [ "${1:-}" = "--fast" ]; then
  shift
  FAST=(-m "not slow and not build and not browser" -n 2)
fi
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv || exit 1
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1
.venv/bin/python -m pip install -q -e ".[test,build,bench]" || { echo "install failed"; exit 1; }
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
.venv/bin/python -m pytest ${FAST[@]+"${FAST[@]}"} "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "test.sh: pytest collected no tests: that is neither a pass nor a failure of the code; check the test paths." >&2
fi
exit $rc
