#!/usr/bin/env bash
# The core unit tests on other CPUs: each binary `make test` cross-compiled
# for s390x (big-endian) and aarch64 (no AVX2: the portable probes) runs under
# qemu-user, the two architectures side by side. Prints each binary's result
# and the summed "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/lib/results.sh
# tests/core/check.h ends each binary's output with this line, alone.
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed$'

# Runs every test binary of one architecture: its result lines go to $2, the
# counts to add up to $2.counts ("0 1" for a binary with no result line),
# its whole output to $2.log.
run_arch() {
	local arch=$1 out=$2 bin counts
	: >"$out"
	: >"$out.counts"
	for bin in build/cross/"$arch"/test_*; do
		[ -x "$bin" ] || continue
		if counts=$("qemu-$arch" "$bin" 2>&1 | tee -a "$out.log" | results_line); then
			echo "$arch $(basename "$bin"): ${counts% *} passed, ${counts#* } failed" >>"$out"
			echo "$counts" >>"$out.counts"
		else
			echo "$arch $(basename "$bin"): no result line" >>"$out"
			echo "0 1" >>"$out.counts"
		fi
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arches=(s390x aarch64)
for arch in "${arches[@]}"; do
	run_arch "$arch" "$tmp/$arch" &
done
wait

for arch in "${arches[@]}"; do
	if ! ls build/cross/"$arch"/test_* >/dev/null 2>&1; then
		echo "$arch: no test binaries (run make test)"
		results_tally 0 1
		continue
	fi
	cat "$tmp/$arch"
	grep FAIL "$tmp/$arch.log" 2>/dev/null | head -n 20
	while read -r pass fail; do
		results_tally "$pass" "$fail"
	done <"$tmp/$arch.counts"
done
results_print
