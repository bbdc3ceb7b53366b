#!/usr/bin/env bash
# `make demo-pg`: the join prefilter across servers, end to end. Starts a
# coordinator and two shards on 127.0.0.1 (tests/multi/servers.sh), loads
# 2,000,000 orders over the shards and 2,000 vip customers on the
# coordinator, runs postgres/demo.sql there with its statements echoed (the
# hand-written prefilter, then the automatic one), and
# stops the servers.
set -u
cd "$(dirname "$0")/.."
. tests/pg/cluster.sh
. tests/multi/servers.sh
trap amq_multi_stop EXIT
amq_multi_start || { echo "could not start the coordinator and shards"; exit 1; }
echo "coordinator on 127.0.0.1:$(amq_node_port coord), shards on 127.0.0.1:$(amq_node_port shard1)" \
	"and 127.0.0.1:$(amq_node_port shard2)"
amq_multi_orders 2000000 200000 || { echo "could not load orders"; exit 1; }
amq_node_psql coord -c "CREATE TABLE vip AS SELECT c AS customer_id FROM generate_series(0, 199999, 100) c;
	ANALYZE vip;" || exit 1
echo "loaded 2,000,000 orders on the shards, 2,000 vip customers on the coordinator"
echo
amq_node_psql coord -a -f postgres/demo.sql
status=$?
echo
echo "stopping the servers"
exit $status
