#!/usr/bin/env bash
# Runs every core unit test binary, plain and under ASan+UBSan, and prints
# the summed "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
pass=0
fail=0
for bin in build/tests/test_* build/asan/tests/test_*; do
	[ -x "$bin" ] || continue
	echo "--- $bin"
	out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$bin" 2>&1)
	status=$?
	echo "$out"
	line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		echo "$bin: no result line (exit status $status)"
		fail=$((fail + 1))
		continue
	fi
	p=${line%% passed*}
	f=${line#* passed, }
	f=${f%% failed}
	# A sanitizer report after the summary (a leak, say) still fails the binary.
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$bin: exit status $status after its summary"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
