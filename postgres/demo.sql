-- The join prefilter across servers (make demo-pg). The coordinator has
-- vip, 2,000 customers; orders, 2,000,000 rows, lives on two shards. On the
-- coordinator orders is one partitioned table whose partitions are foreign
-- tables (postgres_fdw with extensions 'amq' and async_capable 'true').
SELECT c.relname AS partition, s.srvname AS server, array_to_string(s.srvoptions, ' ') AS options
  FROM pg_foreign_table t JOIN pg_class c ON c.oid = t.ftrelid
  JOIN pg_foreign_server s ON s.oid = t.ftserver ORDER BY 1;

-- The automatic join filter of step 7 runs in sessions that load amq on
-- purpose (LOAD, or a preload setting); calling amq's functions alone does not
-- change how joins are planned.
LOAD 'amq';

-- 1. Build a filter of the local keys once and keep it in a table.
CREATE TABLE filters (name text PRIMARY KEY, f bloom NOT NULL);
INSERT INTO filters SELECT 'vip', bloom_agg(customer_id, 0.01) FROM vip;
SELECT name, length(f::bytea) AS bytes, round(bloom_fpr(f)::numeric, 4) AS expected_fpr FROM filters;

-- Steps 2 to 6 are the hand-written prefilter, without the automatic one
-- of step 7.
SET amq.join_filter_remote = off;

-- 2. The plan: the filter is a parameter of each shard's Remote SQL, so
--    each shard drops the orders of other customers before sending any.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id)
 WHERE bloom_contains((SELECT f FROM filters WHERE name = 'vip'), o.customer_id);

-- 3. Plain join: every order crosses the network ("actual rows" of each
--    Async Foreign Scan is what that shard sent).
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id);

-- 4. Prefiltered: the VIP orders plus about 1% of the others.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id)
 WHERE bloom_contains((SELECT f FROM filters WHERE name = 'vip'), o.customer_id);

-- 5. Same answer, timed from the client.
\timing on
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id);
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id)
 WHERE bloom_contains((SELECT f FROM filters WHERE name = 'vip'), o.customer_id);
\timing off

-- 6. A sharded build: each shard aggregates its own rows (bloom_agg runs
--    there, see Remote SQL) with one capacity; the union is the filter of
--    all rows, byte for byte.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT bloom_union_agg(f) FROM (
  SELECT bloom_agg(customer_id, 0.01, 2000000) AS f FROM orders_s1 UNION ALL
  SELECT bloom_agg(customer_id, 0.01, 2000000) FROM orders_s2) s;
SELECT (SELECT bloom_union_agg(f) FROM (
          SELECT bloom_agg(customer_id, 0.01, 2000000) AS f FROM orders_s1 UNION ALL
          SELECT bloom_agg(customer_id, 0.01, 2000000) FROM orders_s2) s)::bytea
     = (SELECT bloom_agg(customer_id, 0.01, 2000000) FROM orders)::bytea AS byte_identical;

-- 7. Automatic: the plain join ships a filter of vip's keys into each
--    shard's Remote SQL by itself: the hash join builds it from vip while it
--    builds its table, with amq's portable hashing.
RESET amq.join_filter_remote;
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF)
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id);
\timing on
SELECT count(*) AS vip_orders, sum(o.amount) AS revenue FROM orders o JOIN vip USING (customer_id);
\timing off
