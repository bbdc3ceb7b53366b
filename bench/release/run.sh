#!/usr/bin/env bash
# make bench-release: the per-probe cost of this build against the previous
# release, side by side in one run (bench/release/bench.py), for what a
# release must not slow down: since 0.4.0 every probe checks the value's
# family against the filter's (one byte compare). Builds the release named in
# bench/release/previous (a commit) from `git archive` under
# build/bench/release-<commit>: its SQLite extension, and its PostgreSQL
# module, which is loaded by path into a throwaway cluster (tests/pg/cluster.sh)
# beside this build's installed one, never into the same session. Not a test.
# Usage: bench/release/run.sh [--rows N] [--runs N]; AMQ_BENCH_SMOKE=1 for tiny sizes.
set -eu
cd "$(dirname "$0")/../.."
ref=$(cat bench/release/previous)
old="build/bench/release-$ref"
if [ ! -f "$old/.built" ]; then
	rm -rf "$old" && mkdir -p "$old"
	git archive "$ref" | tar -x -C "$old"
	make -s -C "$old" build/amq.so >/dev/null
	make -s -C "$old/postgres" PG_CONFIG="${PG_CONFIG:-pg_config}" >/dev/null
	touch "$old/.built"
fi
. tests/pg/cluster.sh
AMQ_PG_OPTS="-c shared_buffers=1GB -c work_mem=256MB -c max_parallel_workers_per_gather=0 -c jit=off"
trap amq_cluster_stop EXIT
amq_cluster_start || { echo "could not start a temporary PostgreSQL cluster"; exit 1; }
# The server reads the release's module from a folder it owns.
cp "$old/postgres/amq.so" "$AMQ_PG_DIR/amq-release.so"
[ -n "$AMQ_AS" ] && chown postgres: "$AMQ_PG_DIR/amq-release.so"
echo "## This build ($(git describe --always --dirty)) against the release at ${ref:0:7}"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs."
echo
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 bench/release/bench.py "$old/build/amq" build/amq \
	"$AMQ_PG_DIR/amq-release.so" "$@"
