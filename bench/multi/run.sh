#!/usr/bin/env bash
# Join prefiltering benchmark (not a test): starts a coordinator and two
# shards (tests/multi/servers.sh) with the extension installed, loads ROWS
# orders (default 10,000,000) over the shards and runs bench/multi/bench.py,
# which prints tables of medians for docs/BENCHMARKS.md. `make bench-multi`
# runs it after `make install`. Takes about 10 minutes on 2 cores.
#
#   bench/multi/run.sh [ROWS] [bench.py options]
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh
. tests/multi/servers.sh
rows=${1:-10000000}
shift || true
AMQ_PG_OPTS="-c shared_buffers=512MB -c jit=off -c max_wal_size=8GB -c checkpoint_timeout=30min"
trap amq_multi_stop EXIT
amq_multi_start || { echo "could not start the coordinator and shards"; exit 1; }
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
lscpu | head -n 15
echo
start=$(date +%s)
amq_multi_orders "$rows" 1000000 || { echo "could not load orders"; exit 1; }
echo "loaded $rows orders in $(($(date +%s) - start)) s"
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 bench/multi/bench.py "$@"
