#!/usr/bin/env bash
# make bench-bulk: bulk maintenance of a stored 1 MiB filter against one
# UPDATE per value (bench/bulk/bench.py), in SQLite and in PostgreSQL on a
# throwaway cluster (tests/pg/cluster.sh), with the date and the machine, as
# Markdown for docs/BENCHMARKS.md. Not a test. Takes about ten minutes: the
# one-by-one form writes the 1 MiB filter 10,000 times per run.
# Usage: bench/bulk/run.sh [extension, default ./build/amq] [bench.py options]
set -u
cd "$(dirname "$0")/../.."
extension=${1:-./build/amq}
shift || true
case $extension in /* | ./*) ;; *) extension=./$extension ;; esac
. tests/pg/cluster.sh
AMQ_PG_OPTS="-c shared_buffers=1GB -c max_wal_size=16GB -c checkpoint_timeout=30min -c jit=off"
trap amq_cluster_stop EXIT
amq_cluster_start || { echo "could not start a temporary PostgreSQL cluster"; exit 1; }
echo "## Bulk maintenance (SQLite $(sqlite3 --version | cut -d' ' -f1), PostgreSQL $("$AMQ_PG_BINDIR/postgres" --version | awk '{print $3}'))"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM."
echo
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 bench/bulk/bench.py "$extension" "$@"
