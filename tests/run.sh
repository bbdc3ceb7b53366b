#!/usr/bin/env bash
# Runs every test suite in turn (or only the suites named as arguments) and
# adds up their results. Each suite is a script that ends its output with
# "N passed, N failed" (tests/lib/results.sh reads it: a suite with no such
# line, or that exits non-zero with no failure counted, counts as one
# failure). The last line printed here is the total, "N passed, N failed".
# tests/versions/run.sh runs it again inside each Debian root.
set -u
cd "$(dirname "$0")/.."
. tests/lib/results.sh

suites=(
	"format:tests/format/run.sh"
	"core:tests/core/run.sh"
	"cross:tests/cross/run.sh"
	"fuzz:tests/fuzz/run.sh"
	"sqlite:tests/sqlite/run.sh"
	"exports:tests/exports/run.sh"
	"postgres:tests/pg/run.sh"
	"joinfilter:tests/joinfilter/run.sh"
	"interop:tests/interop/run.sh"
	"multi:tests/multi/run.sh"
	"versions:tests/versions/run.sh"
	"python:tests/python/run.sh"
	"node:tests/node/run.sh"
	"version:tests/version/run.sh"
	"readme:tests/readme/run.sh"
	"bench:tests/bench/run.sh"
)
if [ $# -gt 0 ]; then
	wanted=("$@")
	chosen=()
	for entry in "${suites[@]}"; do
		for name in "${wanted[@]}"; do
			[ "${entry%%:*}" = "$name" ] && chosen+=("$entry")
		done
	done
	suites=("${chosen[@]}")
fi

host_pg=()
versions=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for entry in "${suites[@]}"; do
	name=${entry%%:*}
	script=${entry#*:}
	echo "=== $name ($script)"
	if [ ! -f "$script" ]; then
		echo "$name: suite script $script is missing"
		results_tally 0 1
		continue
	fi
	bash "$script" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	results_add "$name" "$status" <"$log" || continue
	echo "--- $name: $results_pass passed, $results_fail failed"
	case $name in
	postgres | joinfilter | interop | multi) host_pg+=("$name $results_pass/$results_fail") ;;
	# its summary: the last block of lines, less the total
	versions) versions=$(awk '/^$/ { block = ""; next } { block = block $0 "\n" }
		END { printf "%s", block }' "$log" | grep -vE '^[0-9]+ passed, [0-9]+ failed') ;;
	esac
done
echo
# One line per PostgreSQL version: the host's from its suites (passed/failed
# each), the others as tests/versions/run.sh summed them up.
if [ ${#host_pg[@]} -gt 0 ]; then
	host_version=$("${PG_CONFIG:-pg_config}" --version 2>/dev/null | sed 's/^PostgreSQL //')
	echo "PostgreSQL ${host_version:-?} (${AMQ_PG_WHERE:-host}): $(printf '%s, ' "${host_pg[@]}" | sed 's/, $//')"
fi
[ -n "$versions" ] && echo "$versions"
results_print
