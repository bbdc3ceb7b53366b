#!/usr/bin/env bash
# Runs every test suite in turn and adds up their results. Each suite is a
# script that ends its output with "N passed, N failed"; a suite that exits
# non-zero without such a line counts as one failure. The last line printed
# here is the total, "N passed, N failed".
set -u
cd "$(dirname "$0")/.."

suites=(
	"core:tests/core/run.sh"
	"cross:tests/cross/run.sh"
	"fuzz:tests/fuzz/run.sh"
	"sqlite:tests/sqlite/run.sh"
	"exports:tests/exports/run.sh"
	"postgres:tests/pg/run.sh"
	"joinfilter:tests/joinfilter/run.sh"
	"interop:tests/interop/run.sh"
	"multi:tests/multi/run.sh"
	"python:tests/python/run.sh"
)

total_pass=0
total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for entry in "${suites[@]}"; do
	name=${entry%%:*}
	script=${entry#*:}
	echo "=== $name ($script)"
	if [ ! -f "$script" ]; then
		echo "$name: suite script $script is missing"
		total_fail=$((total_fail + 1))
		continue
	fi
	bash "$script" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	line=$(grep -E '^([A-Za-z_-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "$name: no result line (exit status $status)"
		total_fail=$((total_fail + 1))
		continue
	fi
	pass=$(echo "$line" | sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2/')
	fail=$(echo "$line" | sed -E 's/^([A-Za-z_-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\3/')
	if [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then
		echo "$name: exit status $status with no failure counted"
		fail=1
	fi
	echo "--- $name: $pass passed, $fail failed"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done
echo
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
