#!/usr/bin/env bash
# Interop suite: filters built in PostgreSQL are read in SQLite and the other
# way round (tests/interop/interop.py), and every filter kind of the function
# table is built, probed and compared in both engines (tests/interop/kinds.py).
# Installs the PostgreSQL extension, builds build/amq.so, starts a throwaway
# cluster (tests/pg/cluster.sh) and stops it on every exit path. Ends with
# "N passed, N failed", the two scripts' counts added up.
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh

. tests/lib/results.sh

amq_suite_setup install build/amq.so
# interop.py, then kinds.py (every filter kind of core/sql/function_list.h);
# their counts are added up (tests/lib/results.sh).
for script in interop kinds; do
	out=$(AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 "tests/interop/$script.py" build/amq 2>&1)
	status=$?
	printf '%s\n' "$out"
	results_add "$script" "$status" <<<"$out"
done
results_print
