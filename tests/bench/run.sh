#!/usr/bin/env bash
# Smoke run of every benchmark of `make bench`, so that none stops building or
# running unnoticed: each is built (its make targets), run once at tiny sizes
# (AMQ_BENCH_SMOKE=1, the C benches' --smoke and small n, one round), and
# passes when it exits 0 having printed its table (a line matching its
# pattern). The figures mean nothing and are not shown; a failing bench's
# output is. A bench whose tools are not installed (cuckoo-go without Go or
# seiflotfy/cuckoofilter: make deps) prints NOT TESTED and why, and counts
# neither as a pass nor as a failure. The PostgreSQL benches start their own throwaway clusters, as
# under make bench. About 30 s on 2 cores. Ends with "N passed, N failed",
# one per benchmark.
set -u
cd "$(dirname "$0")/../.."
export AMQ_BENCH_SMOKE=1
# The server the Makefile builds for (it exports PG_CONFIG).
PG_CONFIG=${PG_CONFIG:-$(command -v pg_config || ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1)}
export PG_CONFIG

# name | make targets | command | extended regular expression for a row of its table
BENCHES=(
	"core|build/bench/core_bench|build/bench/core_bench --smoke 1e5|^\| 1e\+05 \| amq blocked \|"
	"cuckoo|build/bench/cuckoo_bench|build/bench/cuckoo_bench --runs 1 1e4|^\| 1e\+04 \| 0\.01 \| "
	"delete|build/bench/delete_bench|build/bench/delete_bench --runs 1 1e4|^\| 1e\+04 \| 0\.01 \| bloom dleft \|"
	"cuckoo-go|build/bench/cuckoo_bench build/bench/cuckoo_go|bash bench/go/run.sh build/bench/cuckoo_bench build/bench/cuckoo_go --runs 1 1e4|^\| 1e\+04 \| amq b4: Go's load, huge pages \|"
	"exact|build/bench/exact_bench|build/bench/exact_bench --runs 1 --probes 1e5|^\| 1000 \| Bloom filter "
	"fuse|build/bench/fuse_bench|build/bench/fuse_bench --smoke 1e4|^\| 1e\+04 \| fuse 8-bit \| "
	"sqlite|build/amq.so|bash bench/sqlite/run.sh build/amq|^\| bound \`:f\` \| cuckoo 1 MiB \|"
	"python|python build/amq.so|bash bench/python/run.sh build/python/venv/bin/python build/amq.so|^\| \`f\.contains\(i\)\` \|"
	"pg|install|bash bench/pg/run.sh --rows 10000 --runs 1|^ +bloom_agg\(customer_id\) +[0-9.]+ "
	"bulk|build/amq.so install|bash bench/bulk/run.sh build/amq --values 20 --runs 1|^\| PostgreSQL \| cuckoo "
	"multi|install|bash bench/multi/run.sh 20000 --runs 1 --customers 10000 --fact 20000|^\| 1GB \| plain \|"
	"join|install|bash bench/join/run.sh 1|^\| SSB Q2\.1 .*\| 256MB \|"
	"release|build/amq.so install|bash bench/release/run.sh|^\| text \| [0-9]+ \| "
	"scale|build/amq.so python install|bash bench/scale/run.sh build/amq.so build/python/venv/bin/python|^\| 0\.1M \| 1 \| "
)

# Why a bench cannot run here, or nothing.
not_runnable() {
	case $1 in
	cuckoo-go)
		command -v go >/dev/null || { echo "no go command (Debian's golang-go; make deps)"; return; }
		[ -d /usr/share/gocode/src/github.com/seiflotfy/cuckoofilter ] ||
			echo "no seiflotfy/cuckoofilter (golang-github-seiflotfy-cuckoofilter-dev; make deps)"
		;;
	esac
}

pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for entry in "${BENCHES[@]}"; do
	IFS='|' read -r name targets command pattern <<<"$entry"
	# The pattern may hold "|": everything after the third field.
	pattern=${entry#*|*|*|}
	why=$(not_runnable "$name")
	if [ -n "$why" ]; then
		echo "NOT TESTED - $name: $why"
		continue
	fi
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	if ! make --no-print-directory $targets PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
		fail=$((fail + 1))
		tail -n 30 "$log"
		echo "FAIL - $name: make $targets failed"
		continue
	fi
	timeout 300 bash -c "$command" >"$log" 2>&1
	status=$?
	tenths=$((($(date +%s%N) - start) / 100000000))
	if [ "$status" -ne 0 ]; then
		fail=$((fail + 1))
		tail -n 30 "$log"
		echo "FAIL - $name: $command exited with status $status"
	elif grep -qE 'RESULTS DIFFER|Traceback' "$log"; then
		fail=$((fail + 1))
		grep -E -A 5 'RESULTS DIFFER|Traceback' "$log" | head -n 30
		echo "FAIL - $name: $command reported an error"
	elif ! grep -qE "$pattern" "$log"; then
		fail=$((fail + 1))
		tail -n 30 "$log"
		echo "FAIL - $name: $command printed no table row matching: $pattern"
	else
		pass=$((pass + 1))
		echo "ok - $name ($((tenths / 10)).$((tenths % 10)) s): $command"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
