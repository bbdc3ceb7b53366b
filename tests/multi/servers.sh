# Sourced after tests/pg/cluster.sh by tests/multi/run.sh, bench/multi/run.sh
# and the demo (postgres/demo.sh): a coordinator and two shards, three
# clusters on TCP 127.0.0.1, and the sharded `orders` table.
#
#   amq_multi_start     start nodes coord, shard1, shard2; CREATE EXTENSION amq
#                       on each; on coord, postgres_fdw servers shard1 and
#                       shard2 with extensions 'amq' and async_capable 'true'
#   amq_multi_orders ROWS CUSTOMERS
#                       orders(id, customer_id, amount) with ids 1..ROWS, the
#                       lower half on shard1, the upper on shard2 (loaded on
#                       the shards themselves, at the same time); on coord a
#                       table partitioned by id with one foreign partition per
#                       shard (orders_s1, orders_s2); customer_id spreads ids
#                       over 0..CUSTOMERS-1
#   amq_multi_stop      stop the three servers (same as amq_nodes_stop)
#
# Stop with a trap: trap amq_multi_stop EXIT.

AMQ_SHARDS="shard1 shard2"

amq_multi_start() {
	local node
	for node in coord $AMQ_SHARDS; do
		amq_node_start "$node" 127.0.0.1 || return 1
	done
	for node in $AMQ_SHARDS; do
		amq_node_psql "$node" -c 'CREATE EXTENSION amq' || return 1
	done
	amq_node_psql coord <<-SQL || return 1
		CREATE EXTENSION amq;
		CREATE EXTENSION postgres_fdw;
		CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1',
		  port '$(amq_node_port shard1)', dbname 'postgres', extensions 'amq', async_capable 'true');
		CREATE SERVER shard2 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1',
		  port '$(amq_node_port shard2)', dbname 'postgres', extensions 'amq', async_capable 'true');
		CREATE USER MAPPING FOR PUBLIC SERVER shard1 OPTIONS (user 'postgres');
		CREATE USER MAPPING FOR PUBLIC SERVER shard2 OPTIONS (user 'postgres');
	SQL
}

amq_multi_orders() {
	local rows=$1 customers=$2 half=$(($1 / 2)) pids=() status=0 pid
	amq_node_psql shard1 -c "$(amq_orders_sql 1 "$half" "$customers")" &
	pids+=($!)
	amq_node_psql shard2 -c "$(amq_orders_sql $((half + 1)) "$rows" "$customers")" &
	pids+=($!)
	for pid in "${pids[@]}"; do
		wait "$pid" || status=1
	done
	[ "$status" = 0 ] || return 1
	amq_node_psql coord <<-SQL
		CREATE TABLE orders (id bigint NOT NULL, customer_id bigint NOT NULL, amount numeric(10, 2))
		  PARTITION BY RANGE (id);
		CREATE FOREIGN TABLE orders_s1 PARTITION OF orders FOR VALUES FROM (1) TO ($((half + 1)))
		  SERVER shard1 OPTIONS (table_name 'orders');
		CREATE FOREIGN TABLE orders_s2 PARTITION OF orders FOR VALUES FROM ($((half + 1))) TO ($((rows + 1)))
		  SERVER shard2 OPTIONS (table_name 'orders');
	SQL
}

# The SQL that creates and fills a shard's orders with ids FIRST..LAST.
amq_orders_sql() {
	echo "CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL, amount numeric(10, 2));
	      INSERT INTO orders SELECT i, (i * 7919) % $3, (i % 10000) / 100.0 FROM generate_series($1::bigint, $2) i;
	      ANALYZE orders;"
}

amq_multi_stop() {
	amq_nodes_stop
}
