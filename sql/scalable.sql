-- The scalable Bloom filter (layout 'scalable'): bloom_new with an
-- expansion, a chain grown by bloom_add at 1x, 10x and 100x its first
-- capacity with the rate kept, bloom_agg, bloom_info's chain, unions and
-- errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- A new chain: one blocked link for the capacity at p/2, format version 2.
SELECT bloom_info(f) - 'links' - 'bytes' AS chain,
       jsonb_array_length(bloom_info(f)->'links') AS links,
       bloom_info(f)->'links'->0->'capacity' AS capacity,
       bloom_info(f)->'links'->0->'error' AS error,
       (bloom_info(f)->'links'->0->>'hashes')::int <= 8 AS blocked_hashes,
       (bloom_info(f)->'links'->0->>'bits')::bigint % 512 = 0 AS blocked_bits
FROM (SELECT bloom_new(200, 0.01, 'scalable') AS f) s;

-- Grown by bloom_add, one value at a time, to 1x, 10x and 100x.
CREATE FUNCTION pg_temp.add_step(s bloom, f bloom, v int) RETURNS bloom
	LANGUAGE sql IMMUTABLE AS 'SELECT bloom_add(coalesce(s, f), v)';
CREATE AGGREGATE pg_temp.add_all(bloom, int) (SFUNC = pg_temp.add_step, STYPE = bloom);
CREATE TEMP TABLE grown AS
SELECT times, pg_temp.add_all(f, v ORDER BY v) AS f
FROM (VALUES (1), (10), (100)) t(times), generate_series(1, 20000) v,
     (SELECT bloom_new(200, 0.01, 'scalable') AS f) s
WHERE v <= 200 * times
GROUP BY times;
SELECT times,
       jsonb_array_length(bloom_info(f)->'links') AS links,
       (SELECT count(*) FROM generate_series(1, 200 * times) v WHERE NOT bloom_contains(f, v))
           AS false_negatives,
       (SELECT count(*) FROM generate_series(1000001, 1100000) v WHERE bloom_contains(f, v))
           <= 0.0115 * 100000 AS fpr_within_1_15p,
       bloom_fpr(f) < 0.01 AS compound_below_p,
       abs(bloom_count(f) - 200 * times) < 0.03 * 200 * times AS count_sums_links
FROM grown ORDER BY times;
-- Link i: capacity 200 * 2^i, error p / 2^(i+1).
SELECT l->'capacity' AS capacity, l->'error' AS error, (l->>'items')::int <= (l->>'capacity')::int AS within
FROM grown, jsonb_array_elements(bloom_info(f)->'links') l WHERE times = 100;

-- bloom_agg: the same chain whatever the row order, grown from the capacity.
SELECT a::bytea = b::bytea AS order_free,
       jsonb_array_length(bloom_info(a)->'links') AS links
FROM (SELECT bloom_agg(v, 0.01, 200, 'scalable') AS a FROM generate_series(1, 20000) v) s1,
     (SELECT bloom_agg(v, 0.01, 200, 'scalable' ORDER BY v DESC) AS b
      FROM generate_series(1, 20000) v) s2;
SELECT jsonb_array_length(bloom_info(bloom_agg(v, 0.01, NULL, 'scalable'))->'links') AS links
FROM generate_series(1, 20000) v;
-- An expansion of 4.
SELECT jsonb_path_query_array(bloom_info(pg_temp.add_all(f, v ORDER BY v)), '$.links[*].capacity')
           AS capacities
FROM generate_series(1, 1000) v, (SELECT bloom_new(100, 0.01, 'scalable', 4) AS f) s;

-- Union of chains of the same shape; any other is an error that says why.
CREATE TEMP TABLE parts AS
SELECT bloom_agg(v, 0.01, 200, 'scalable') FILTER (WHERE v <= 500) AS a,
       bloom_agg(v, 0.01, 200, 'scalable') FILTER (WHERE v > 100000) AS b
FROM generate_series(1, 100500) v WHERE v <= 500 OR v > 100000;
SELECT bloom_contains(bloom_union(a, b), 7) AND bloom_contains(bloom_union(a, b), 100007) AS both,
       (SELECT bloom_union_agg(f) FROM (VALUES (a), (b)) t(f))::bytea = bloom_union(a, b)::bytea
           AS union_agg
FROM parts;
SELECT pg_temp.try(format('SELECT bloom_union(%L::bloom, bloom_new(200, 0.01, ''scalable''))', a))
FROM parts;
SELECT pg_temp.try($$SELECT bloom_new(10, 0.01, 'blocked', 2)$$);
SELECT pg_temp.try($$SELECT bloom_new(10, 0.01, 'scalable', 0)$$);
SELECT pg_temp.try($$SELECT bloom_delete(bloom_new(10, 0.01, 'scalable'), 1)$$);
