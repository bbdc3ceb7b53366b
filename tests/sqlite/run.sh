#!/usr/bin/env bash
# SQLite suite: the Python tests of the loadable extension (build/amq.so through
# /usr/bin/python3's sqlite3 and the sqlite3 CLI) and the two ASan+UBSan
# harnesses: damaged filters through every function, and every error and
# out-of-memory path. `make test` builds them. The last line is the sum,
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib/results.sh
# test_sqlite.py ends with "python: N passed, N failed", the harnesses with
# their own line: the counts are taken wherever they stand in a line.
RESULTS_LINE='[0-9]+ passed, [0-9]+ failed'

for file in build/amq.so build/asan/sqlite_fuzz build/asan/sqlite_faults; do
	if [ ! -e "$file" ]; then
		echo "$file is missing: run make test (or make $file)"
		results_tally 0 1
	fi
done

if [ -e build/amq.so ]; then
	out=$(/usr/bin/python3 tests/sqlite/test_sqlite.py 2>&1)
	status=$?
	echo "$out"
	results_add python "$status" <<<"$out"
fi

for harness in sqlite_fuzz sqlite_faults; do
	[ -e "build/asan/$harness" ] || continue
	out=$(ASAN_OPTIONS=detect_leaks=1 "./build/asan/$harness" 2>&1)
	status=$?
	echo "$out" | tail -n 20
	results_add "$harness" "$status" <<<"$out"
done

results_print
