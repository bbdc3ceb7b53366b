#!/usr/bin/env bash
# Interop suite: filters built in PostgreSQL are read in SQLite and the other
# way round (tests/interop/interop.py). Installs the PostgreSQL extension,
# builds build/amq.so, starts a throwaway cluster (tests/pg/cluster.sh) and
# stops it on every exit path. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh

log=$(mktemp)
if ! make --no-print-directory install build/amq.so PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
	cat "$log"
	rm -f "$log"
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -f "$log"

trap amq_cluster_stop EXIT
if ! amq_cluster_start; then
	echo "could not start a temporary PostgreSQL cluster"
	echo "0 passed, 1 failed"
	exit 1
fi
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 tests/interop/interop.py build/amq
