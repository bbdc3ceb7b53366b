#!/usr/bin/env bash
# The core unit tests on other CPUs: each binary `make test` cross-compiled
# for s390x (big-endian) and aarch64 (no AVX2: the portable probes) runs under
# qemu-user, the two architectures side by side. Prints each binary's result
# and the summed "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."

# Runs every test binary of one architecture; its output goes to $2.
run_arch() {
	local arch=$1 out=$2 bin line
	: >"$out"
	for bin in build/cross/"$arch"/test_*; do
		[ -x "$bin" ] || continue
		line=$("qemu-$arch" "$bin" 2>&1 | tee -a "$out.log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
		echo "$arch $(basename "$bin"): ${line:-no result line}" >>"$out"
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arches=(s390x aarch64)
for arch in "${arches[@]}"; do
	run_arch "$arch" "$tmp/$arch" &
done
wait

pass=0
fail=0
for arch in "${arches[@]}"; do
	if ! ls build/cross/"$arch"/test_* >/dev/null 2>&1; then
		echo "$arch: no test binaries (run make test)"
		fail=$((fail + 1))
		continue
	fi
	cat "$tmp/$arch"
	grep FAIL "$tmp/$arch.log" 2>/dev/null | head -n 20
	while read -r _ _ p _ f _; do
		if [ -z "${f:-}" ] || ! [[ "$p" =~ ^[0-9]+$ ]]; then
			fail=$((fail + 1))
			continue
		fi
		pass=$((pass + p))
		fail=$((fail + f))
	done <"$tmp/$arch"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
