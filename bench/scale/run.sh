#!/usr/bin/env bash
# make bench-scale: bloom_agg without a capacity at 10M to 1B distinct values,
# spilling sorted runs of hashes past its working memory, beside the build
# with a capacity, in PostgreSQL, SQLite and Python (bench/scale/bench.py):
# time, peak private memory per process and bytes spilled (issue #32).
# Starts a throwaway cluster (tests/pg/cluster.sh) with the installed
# extension; its temporary files, SQLite's and Python's go to /tmp. Not a
# test; long (about an hour at the default sizes on 2 cores).
# Usage: bench/scale/run.sh SQLITE_EXT PYTHON [bench.py options: --sizes
# 1e7,1e8,3e8 --runs 3 --parallel 1e8 --work-mem 4,64 --engines pg,sqlite,python]
# (build/amq.so and the venv's python with the amq package);
# AMQ_BENCH_SMOKE=1 for tiny sizes.
set -eu
cd "$(dirname "$0")/../.."
ext=$(realpath "$1")
python=$(realpath -s "$2")
shift 2
. tests/pg/cluster.sh
AMQ_PG_OPTS="-c shared_buffers=128MB -c max_parallel_workers_per_gather=0 -c jit=off"
trap amq_cluster_stop EXIT
amq_cluster_start || { echo "could not start a temporary PostgreSQL cluster"; exit 1; }
echo "## Building at scale ($(git describe --always --dirty))"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
	"$(free -g | awk '/^Mem:/ {print $2}') GiB RAM, $(df -h /tmp | awk 'NR == 2 {print $4}') free in /tmp;" \
	"$("$AMQ_PG_BINDIR/postgres" --version), SQLite $(sqlite3 -version | cut -d' ' -f1)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)."
module="$("$PG_CONFIG" --pkglibdir)/amq.so"
echo "The installed module: $(md5sum <"$module" | cut -c1-12) ($(stat -c %y "$module" | cut -c1-19))."
echo
AMQ_PSQL="$AMQ_PG_BINDIR/psql" AMQ_PG_POSTMASTER=$(amq_node_pid main) \
	/usr/bin/python3 bench/scale/bench.py "${ext%.so}" "$python" "$@"
echo "The installed module at the end: $(md5sum <"$module" | cut -c1-12)."
echo "Ended $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)."
