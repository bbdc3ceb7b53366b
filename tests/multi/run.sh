#!/usr/bin/env bash
# Multi-server suite: installs the extension (make install), starts a
# coordinator and two shards on TCP 127.0.0.1 (tests/multi/servers.sh), loads
# 200,000 orders over the shards and runs tests/multi/multi.py: what ships to
# the shards, exact answers with fewer rows, a sharded build, a shard that is
# down or lacks amq, and 60 s of pgbench through a SIGKILL of the
# coordinator. Stops the three servers on every exit path. About 2 minutes;
# ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh
. tests/multi/servers.sh

log=$(mktemp)
if ! make --no-print-directory install PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
	cat "$log"
	rm -f "$log"
	echo "make install failed"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -f "$log"
trap amq_multi_stop EXIT
if ! amq_multi_start || ! amq_multi_orders 200000 100000 >/dev/null; then
	echo "could not start the coordinator and shards"
	echo "0 passed, 1 failed"
	exit 1
fi
AMQ_PSQL="$AMQ_PG_BINDIR/psql" /usr/bin/python3 tests/multi/multi.py
