#!/usr/bin/env bash
# A bounded libFuzzer run of the reader (FUZZ_SECONDS, default 45, at most
# 60) from a seed corpus of valid filters and states. One test: it passes
# when the fuzzer finds no crash, leak or undefined behaviour in time.
set -u
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-45}
[ "$seconds" -gt 60 ] && seconds=60
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
build/fuzz/seed_corpus "$work/corpus" || { echo "0 passed, 1 failed"; exit 1; }
if build/fuzz/fuzz_reader -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1; then
	grep -E 'stat::number_of_executed_units|Done' "$work/log"
	echo "1 passed, 0 failed"
else
	tail -n 60 "$work/log"
	for crash in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
		[ -f "$crash" ] && echo "reproducer: $(basename "$crash") = $(od -An -tx1 "$crash" | tr -d ' \n' | head -c 400)"
	done
	echo "0 passed, 1 failed"
	exit 1
fi
