#!/usr/bin/env bash
# Interop suite: filters built in PostgreSQL are read in SQLite and the other
# way round (tests/interop/interop.py). Installs the PostgreSQL extension,
# builds build/amq.so, starts a throwaway cluster (tests/pg/cluster.sh) and
# stops it on every exit path. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh

amq_suite_setup install build/amq.so
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 tests/interop/interop.py build/amq
