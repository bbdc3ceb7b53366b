#!/usr/bin/env bash
# PostgreSQL benchmark (not a test): starts a throwaway cluster
# (tests/pg/cluster.sh) with the extension installed, loads 10M rows and runs
# bench/pg/bench.py, which prints a table of medians. `make bench-pg` runs it
# after `make install`. Takes a few minutes on 2 cores.
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh
AMQ_PG_OPTS="-c shared_buffers=2GB -c work_mem=512MB -c max_parallel_workers_per_gather=2 \
-c jit=off -c max_wal_size=8GB -c checkpoint_timeout=30min"
trap amq_cluster_stop EXIT
amq_cluster_start || { echo "could not start a temporary PostgreSQL cluster"; exit 1; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
lscpu | head -n 15
echo
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 bench/pg/bench.py "$@"
