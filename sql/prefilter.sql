-- Join prefiltering with a stored filter: the scalar-subquery, CTE, join,
-- operator and parameter forms find every member, and the per-call-site
-- filter cache never mistakes one filter for another, whether filters
-- arrive as TOAST pointers (large) or inline (small), and whether they
-- change on every row or not.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE pre_orders AS
SELECT i AS id, (i * 7919) % 20000 AS customer_id FROM generate_series(1, 100000) i;
CREATE TABLE pre_vip AS SELECT c AS customer_id FROM generate_series(0, 19999, 10) c;
CREATE TABLE pre_filters (name text PRIMARY KEY, f bloom);
-- 'vip' is sized for 2M values: about 2.4 MB, stored out of line in TOAST;
-- 'vip_small' holds the same members in about 2.4 kB... also in TOAST;
-- 'odd_tiny' holds few members and stays inline in the row.
INSERT INTO pre_filters
SELECT 'vip', bloom_agg(customer_id, 0.01, 2000000) FROM pre_vip
UNION ALL SELECT 'vip_small', bloom_agg(customer_id) FROM pre_vip
UNION ALL SELECT 'odd_tiny', bloom_agg(c) FROM generate_series(1, 19, 2) c;
SELECT name, octet_length(f::bytea) > 2000000 AS over_2mb, bloom_info(f)->'items' AS items
FROM pre_filters ORDER BY name;
-- Which values live in the TOAST table (uncompressed: STORAGE external).
CREATE FUNCTION pg_temp.toasted() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
		(SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'pre_filters'))
		INTO n;
	RETURN n;
END $$;
SELECT pg_temp.toasted() AS toasted_values,
       bool_and(pg_column_compression(f) IS NULL) AS none_compressed FROM pre_filters;

-- The exact answer, for comparison.
SELECT count(*) AS vip_orders FROM pre_orders o JOIN pre_vip v USING (customer_id);

-- Scalar subquery: every VIP order kept, a few false positives.
SELECT count(*) AS kept,
       count(*) FILTER (WHERE customer_id % 10 = 0) AS members_kept,
       count(*) - count(*) FILTER (WHERE customer_id % 10 = 0) AS false_positives
FROM pre_orders t
WHERE bloom_contains((SELECT f FROM pre_filters WHERE name = 'vip'), t.customer_id);
SELECT count(*) AS kept, count(*) FILTER (WHERE customer_id % 10 = 0) AS members_kept
FROM pre_orders t
WHERE bloom_contains((SELECT f FROM pre_filters WHERE name = 'vip_small'), t.customer_id);
-- CTE, materialized or not.
WITH v AS (SELECT f FROM pre_filters WHERE name = 'vip')
SELECT count(*) AS cte_kept FROM pre_orders t, v WHERE bloom_contains(v.f, t.customer_id);
WITH v AS MATERIALIZED (SELECT f FROM pre_filters WHERE name = 'vip')
SELECT count(*) AS materialized_kept FROM pre_orders t, v WHERE bloom_contains(v.f, t.customer_id);
-- Join, and the operator.
SELECT count(*) AS join_kept FROM pre_orders t JOIN pre_filters p ON p.name = 'vip'
WHERE bloom_contains(p.f, t.customer_id);
SELECT count(*) AS operator_kept FROM pre_orders t JOIN pre_filters p ON p.name = 'vip'
WHERE p.f @> t.customer_id;
SELECT count(*) AS commuted_kept FROM pre_orders t JOIN pre_filters p ON p.name = 'vip'
WHERE t.customer_id <@ p.f;
-- The prefilter in front of the real join keeps the exact answer.
SELECT count(*) AS prefiltered_join FROM pre_orders t JOIN pre_vip v USING (customer_id)
WHERE bloom_contains((SELECT f FROM pre_filters WHERE name = 'vip'), t.customer_id);
-- The filter as a parameter: a prepared statement, and PL/pgSQL's USING.
SELECT f AS tiny FROM pre_filters WHERE name = 'odd_tiny' \gset
PREPARE probe(bloom) AS SELECT count(*) FROM pre_orders WHERE bloom_contains($1, customer_id);
EXECUTE probe(:'tiny');
DEALLOCATE probe;
DO $$
DECLARE
	f bloom := (SELECT f FROM pre_filters WHERE name = 'vip');
	n bigint;
BEGIN
	EXECUTE 'SELECT count(*) FROM pre_orders WHERE bloom_contains($1, customer_id)' INTO n USING f;
	RAISE NOTICE 'parameter kept: %', n;
END $$;

-- One call site, a different filter on every row: each row gets its own
-- filter's answer (the cache key tells them apart).
SELECT p.name, count(*) AS kept FROM pre_filters p CROSS JOIN pre_orders t
WHERE t.id <= 1000 AND bloom_contains(p.f, t.customer_id)
GROUP BY p.name ORDER BY p.name;
SELECT p.name, count(*) AS kept FROM pre_orders t CROSS JOIN LATERAL
	(SELECT name, f FROM pre_filters ORDER BY name) p
WHERE t.id <= 1000 AND bloom_contains(p.f, t.customer_id)
GROUP BY p.name ORDER BY p.name;
-- The same with the filters and values alternating inside one expression.
SELECT count(*) FILTER (WHERE bloom_contains(CASE WHEN t.id % 2 = 0 THEN a.f ELSE b.f END,
                                             t.customer_id)) AS alternating,
       count(*) FILTER (WHERE t.id % 2 = 0 AND bloom_contains(a.f, t.customer_id))
     + count(*) FILTER (WHERE t.id % 2 = 1 AND bloom_contains(b.f, t.customer_id)) AS expected
FROM pre_orders t, pre_filters a, pre_filters b
WHERE a.name = 'vip' AND b.name = 'odd_tiny' AND t.id <= 2000;
-- A changed filter is a different value even at the same size.
SELECT count(*) FILTER (WHERE bloom_contains(CASE WHEN t.id % 2 = 0 THEN f ELSE bloom_add(f, 2) END,
                                             2)) AS with_two,
       bool_or(bloom_contains(f, 2)) AS tiny_has_two
FROM pre_orders t, pre_filters p WHERE p.name = 'odd_tiny' AND t.id <= 10;

-- cuckoo_contains and cuckoo_count use the same cache.
CREATE TABLE pre_cuckoo AS SELECT cuckoo_agg(customer_id, 0.01, 500000) AS f FROM pre_vip;
SELECT count(*) >= 10000 AS cuckoo_kept_all,
       count(*) FILTER (WHERE customer_id % 10 = 0) AS cuckoo_members,
       sum(cuckoo_count((SELECT f FROM pre_cuckoo), customer_id)) >= 10000 AS counted
FROM pre_orders t WHERE cuckoo_contains((SELECT f FROM pre_cuckoo), t.customer_id);

DROP TABLE pre_orders, pre_vip, pre_filters, pre_cuckoo;
