#!/usr/bin/env bash
# The version matrix: amq on every PostgreSQL major version it supports
# beyond the host's own (which the other suites test). Each newer version
# lives in a minimal Debian root (tests/versions/roots.sh), made with
# debootstrap on first use and cached under /var/cache/amq/roots:
#   trixie        Debian 13, PostgreSQL 17, xxHash 0.8.3, gcc 14, clang 19
#   sid           Debian unstable, PostgreSQL 18
#   experimental  Debian unstable plus experimental's PostgreSQL 19
# A copy of this tree is built inside each root (make, with the root's own
# compilers and headers) and the suites named in MATRIX run there through
# tests/run.sh; then tests/versions/major.sh moves stored filters from a
# PostgreSQL 15 server on the host into that version (pg_dump and
# pg_restore, COPY, and logical replication). A root that cannot be
# made prints "NOT TESTED" and why, and counts neither as a pass nor as a
# failure; once made, every failure in it counts. One summary line per
# version; the last line is "N passed, N failed". AMQ_VERSIONS="sid ..."
# runs only the roots it names.
set -u
cd "$(dirname "$0")/../.."
. tests/versions/roots.sh
. tests/lib/results.sh
# A root's tests/run.sh and major.sh end with the total on a line of its own
# (the suites' own lines, "python: N passed, N failed" among them, come
# before it and must not stand in for it).
RESULTS_LINE='^[0-9]+ passed, [0-9]+ failed'

# root:make targets built inside it:the suites of tests/run.sh run there (the
# core and SQLite suites on Debian 13, multi-server on the newest).
MATRIX=(
	"trixie:native-tests pg:core sqlite postgres joinfilter interop"
	"sid:build/amq.so pg:postgres joinfilter interop"
	"experimental:build/amq.so pg:postgres joinfilter interop multi"
)

summaries=()
mounted=()
cleanup() {
	local name
	for name in "${mounted[@]}"; do
		amq_root_kill_servers "$name"
		sleep 1
		amq_root_unmount "$name"
	done
}
trap cleanup EXIT

for entry in "${MATRIX[@]}"; do
	IFS=: read -r name targets suites <<<"$entry"
	[ -n "${AMQ_VERSIONS:-}" ] && [[ " $AMQ_VERSIONS " != *" $name "* ]] && continue
	pg=$(amq_root_pg "$name")
	echo "=== PostgreSQL $pg in the $name root"
	if ! why=$(amq_root_make "$name" 2>&1); then
		echo "$why"
		summaries+=("NOT TESTED: PostgreSQL $pg ($name root): $(tail -n 1 <<<"$why")")
		echo "${summaries[-1]}"
		continue
	fi
	[ -n "$why" ] && echo "$why"
	root=$(amq_root_dir "$name")
	version=$(cat "$root/.amq-ready")
	pg_config=/usr/lib/postgresql/$pg/bin/pg_config
	mounted+=("$name")
	if ! amq_root_mount "$name"; then
		summaries+=("PostgreSQL $version ($name root): cannot mount proc and /dev/shm in $root: 0 passed, 1 failed")
		echo "${summaries[-1]}"
		results_tally 0 1
		continue
	fi
	# A fresh copy of the tree (tracked and untracked files, no build output).
	rm -rf --one-file-system "$root/amq"
	mkdir -p "$root/amq"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$root/amq"
	log=$(mktemp)
	amq_root_run "$name" "cd /amq && export PG_CONFIG=$pg_config &&
		if ! make --no-print-directory -j2 $targets >build.log 2>&1; then
			cat build.log; echo 'make failed in the $name root'; echo '0 passed, 1 failed'; exit 1
		fi && AMQ_PG_WHERE='$name root, inside' bash tests/run.sh $suites" 2>&1 | tee "$log"
	# No total line is one failure.
	read -r pass fail < <(results_line <"$log" || echo "0 1")
	per_suite=$(grep -E '^--- [a-z]+: [0-9]+ passed, [0-9]+ failed' "$log" |
		sed -E 's/^--- ([a-z]+): ([0-9]+) passed, ([0-9]+) failed/\1 \2\/\3/' | paste -sd, - | sed 's/,/, /g')
	# Stored filters from a 15 server on the host into this version.
	bash tests/versions/major.sh "$name" 2>&1 | tee "$log"
	read -r mpass mfail < <(results_line <"$log" || echo "0 1")
	not_tested=$(grep '^NOT TESTED' "$log")
	rm -f "$log"
	pass=$((pass + mpass))
	fail=$((fail + mfail))
	summaries+=("PostgreSQL $version ($name root): ${per_suite:-no suite ran}, major-version moves $mpass/$mfail (passed/failed): $pass passed, $fail failed")
	[ -n "$not_tested" ] && summaries+=("$not_tested")
	results_tally "$pass" "$fail"
	amq_root_kill_servers "$name"
	sleep 1
	amq_root_unmount "$name"
done
echo
printf '%s\n' "${summaries[@]}"
results_print
