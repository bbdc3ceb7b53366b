#!/usr/bin/env bash
# SQLite suite: the Python tests of the loadable extension (build/amq.so through
# /usr/bin/python3's sqlite3 and the sqlite3 CLI) and the two ASan+UBSan
# harnesses: damaged filters through every function, and every error and
# out-of-memory path. `make test` builds them. The last line is the sum,
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."

total_pass=0
total_fail=0

# Adds the counts of the last "N passed, N failed" in output $1 of suite $2,
# which exited with status $3; no such line, or a failing exit status with no
# failure counted, is one failure.
add_result() {
	local counts pass fail
	counts=$(grep -oE '[0-9]+ passed, [0-9]+ failed' <<<"$1" | tail -n 1)
	if [ -z "$counts" ]; then
		echo "$2: no result line (exit status $3)"
		total_fail=$((total_fail + 1))
		return
	fi
	read -r pass _ fail _ <<<"${counts//,/}"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	if [ "$3" -ne 0 ] && [ "$fail" -eq 0 ]; then
		echo "$2: exit status $3 with no failure counted"
		total_fail=$((total_fail + 1))
	fi
}

for file in build/amq.so build/asan/sqlite_fuzz build/asan/sqlite_faults; do
	if [ ! -e "$file" ]; then
		echo "$file is missing: run make test (or make $file)"
		total_fail=$((total_fail + 1))
	fi
done

if [ -e build/amq.so ]; then
	out=$(/usr/bin/python3 tests/sqlite/test_sqlite.py 2>&1)
	status=$?
	echo "$out"
	add_result "$out" python "$status"
fi

for harness in sqlite_fuzz sqlite_faults; do
	[ -e "build/asan/$harness" ] || continue
	out=$(ASAN_OPTIONS=detect_leaks=1 "./build/asan/$harness" 2>&1)
	status=$?
	echo "$out" | tail -n 20
	add_result "$out" "$harness" "$status"
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
