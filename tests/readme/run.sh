#!/usr/bin/env bash
# README suite: every fenced sql, python and sh block of README.md runs as
# shown, in README order (tests/readme/readme.py says how each kind runs and
# what the marks before a fence mean): PostgreSQL blocks on a throwaway
# cluster (tests/pg/cluster.sh; the extension installed with make install),
# SQLite blocks in the sqlite3 CLI with build/amq.so loaded, Python blocks
# under /usr/bin/python3 through the venv `make python` builds
# (build/python/venv, --system-site-packages, --no-build-isolation). One line
# per block (ok, FAIL or skip), then "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
. tests/pg/cluster.sh

amq_suite_setup install build/amq.so python

/usr/bin/python3 tests/readme/readme.py --bindir "$AMQ_PG_BINDIR" \
	--python "$root/build/python/venv/bin/python" --sqlite-extension ./build/amq README.md
