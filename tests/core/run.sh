#!/usr/bin/env bash
# Runs every core unit test binary, plain and under ASan+UBSan, and prints
# the summed "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib/results.sh
# tests/core/check.h ends each binary's output with this line, alone.
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed$'
# A sanitizer report after the summary (a leak, say) still fails the binary.
RESULTS_EXIT_NOTE='after its summary'
for bin in build/tests/test_* build/asan/tests/test_*; do
	[ -x "$bin" ] || continue
	echo "--- $bin"
	out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$bin" 2>&1)
	status=$?
	echo "$out"
	results_add "$bin" "$status" <<<"$out"
done
results_print
