#!/usr/bin/env bash
# Multi-server suite: installs the extension (make install), starts a
# coordinator and two shards on TCP 127.0.0.1 (tests/multi/servers.sh), loads
# 200,000 orders over the shards and runs tests/multi/multi.py: what ships to
# the shards, the automatic join filter across servers (remote.py), that amq
# opens no connection of its own to a shard (security.py), exact
# answers with fewer rows, a sharded build, a shard that is down or lacks
# amq, and 60 s of pgbench through a SIGKILL of the coordinator. Then
# tests/multi/remote_diff.py compares 400 random join queries over foreign
# partitions with amq.join_filter off and on; its seed is AMQ_REMOTE_SEED
# (default: a fresh one, printed).
#   bash tests/multi/run.sh diff SEED [N]   only the corpus of SEED (only
#                                           its query N): a failure's replay
# Stops the three servers on every exit path. About 4 minutes; ends with
# "N passed, N failed", the counts of both added up.
set -u
cd "$(dirname "$0")/../.."
. tests/pg/cluster.sh
. tests/multi/servers.sh
. tests/lib/results.sh

if [ "${1:-}" = diff ]; then
	seed=${2:?usage: tests/multi/run.sh diff SEED [N]}
	only=("${@:3:1}")
else
	seed=${AMQ_REMOTE_SEED:-$(($(date +%s) % 1000000))}
	only=()
fi
log=$(mktemp)
if ! make --no-print-directory install PG_CONFIG="$PG_CONFIG" >"$log" 2>&1; then
	cat "$log"
	rm -f "$log"
	echo "make install failed"
	echo "0 passed, 1 failed"
	exit 1
fi
trap 'amq_multi_stop; rm -f "$log"' EXIT
if ! amq_multi_start || ! amq_multi_orders 200000 100000 >/dev/null; then
	echo "could not start the coordinator and shards"
	echo "0 passed, 1 failed"
	exit 1
fi
export AMQ_PSQL="$AMQ_PG_BINDIR/psql"
if [ "${1:-}" != diff ]; then
	start=$SECONDS
	/usr/bin/python3 tests/multi/multi.py 2>&1 | tee "$log"
	results_add multi.py "${PIPESTATUS[0]}" <"$log"
	echo "multi.py took $((SECONDS - start)) s"
fi
echo "remote join filter corpus: seed $seed"
start=$SECONDS
/usr/bin/python3 tests/multi/remote_diff.py "$seed" 400 "${only[@]}" 2>&1 | tee "$log"
results_add remote_diff.py "${PIPESTATUS[0]}" <"$log"
echo "remote_diff.py took $((SECONDS - start)) s"
results_print
