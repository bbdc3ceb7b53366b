-- The d-left counting Bloom filter (layout 'dleft'): bloom_new and bloom_agg,
-- bloom_add, bloom_delete and bloom_frequency, bloom_count and bloom_fpr, a
-- random half of 20,000 values deleted, sticky saturation, the aggregates in
-- any order and in a parallel plan, a full filter, and the refused merges.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- About 0.56x the counting layout's bytes at 1% and 0.44x at 0.1%, written as
-- format version 5, layout 7.
SELECT p, round(octet_length(d::bytea)::numeric / octet_length(c::bytea), 2) AS of_counting,
       get_byte(d::bytea, 4) AS header_version, get_byte(d::bytea, 6) AS header_layout,
       bloom_info(d)->'format_version' AS version, bloom_info(d)->>'layout' AS layout
FROM unnest(ARRAY[0.01, 0.001]::float8[]) AS p,
     LATERAL (SELECT bloom_new(100000, p, 'dleft') AS d, bloom_new(100000, p, 'counting') AS c) s;

-- Add, count, delete.
CREATE TEMP TABLE df AS
SELECT bloom_add(bloom_add(bloom_add(bloom_add(bloom_new(100, 0.01, 'dleft'), 7), 7), 7),
                 42) AS f;
SELECT bloom_contains(f, 7) AS has7, f @> 7.0 AS has_7_0, bloom_contains(f, 42) AS has_42,
       bloom_contains(f, 8) AS has8, bloom_frequency(f, 7) AS freq7,
       bloom_frequency(f, 42) AS freq_42, bloom_frequency(f, 8) AS freq8,
       bloom_count(f) AS distinct_cells, bloom_info(f)->'items' AS items
FROM df;
SELECT bloom_frequency(d1, 7) AS after_one, bloom_frequency(d3, 7) AS after_three,
       bloom_contains(d3, 7) AS gone, bloom_contains(d3, 42) AS kept_42,
       bloom_info(d3)->'items' AS items
FROM (SELECT d1, bloom_delete(bloom_delete(d1, 7), 7) AS d3
      FROM (SELECT bloom_delete(f, 7) AS d1 FROM df) s1) s2;
SELECT bloom_delete(f, 1000000)::bytea = f::bytea AS absent_unchanged,
       bloom_delete(f, NULL::int)::bytea = f::bytea AS null_unchanged
FROM df;

-- One value added 20 times then deleted 20 times: its counter saturates and
-- stays, and no other value is lost.
CREATE TEMP TABLE hot AS
WITH RECURSIVE adds(i, f) AS (
	SELECT 0, (SELECT bloom_agg(v, 0.01, 1000, 'dleft') FROM generate_series(1, 500) v)
	UNION ALL SELECT i + 1, bloom_add(f, -1) FROM adds WHERE i < 20
), dels(i, f) AS (
	SELECT 0, (SELECT f FROM adds WHERE i = 20)
	UNION ALL SELECT i + 1, bloom_delete(f, -1) FROM dels WHERE i < 20
)
SELECT (SELECT f FROM adds WHERE i = 20) AS added, (SELECT f FROM dels WHERE i = 20) AS deleted;
SELECT bloom_frequency(added, -1) >= 20 AS never_below_20, bloom_contains(deleted, -1) AS hot_stays,
       (SELECT count(*) FROM generate_series(1, 500) v WHERE NOT bloom_contains(deleted, v))
           AS lost
FROM hot;

-- A random half of 20,000 values deleted in random order: every value still
-- added is present; the rate at capacity is within p.
CREATE FUNCTION pg_temp.delete_step(s bloom, f bloom, v int) RETURNS bloom
	LANGUAGE sql IMMUTABLE AS 'SELECT bloom_delete(coalesce(s, f), v)';
CREATE AGGREGATE pg_temp.delete_all(bloom, int) (SFUNC = pg_temp.delete_step, STYPE = bloom);
SELECT setseed(0.25);
CREATE TEMP TABLE shuffled AS
SELECT v, random() < 0.5 AS doomed, random() AS ord FROM generate_series(1, 20000) v;
CREATE TEMP TABLE whole AS SELECT bloom_agg(v, 0.01, 20000, 'dleft') AS f FROM shuffled;
CREATE TEMP TABLE halved AS
SELECT pg_temp.delete_all(f, v ORDER BY ord) AS f FROM shuffled, whole WHERE doomed;
SELECT count(*) FILTER (WHERE NOT doomed AND NOT bloom_contains(f, v)) AS remaining_lost,
       count(*) FILTER (WHERE doomed AND bloom_contains(f, v)) < 0.01 * count(*) FILTER (WHERE doomed)
           AS deleted_mostly_gone,
       (SELECT bloom_info(f)->'items' FROM halved) = to_jsonb(count(*) FILTER (WHERE NOT doomed))
           AS items
FROM halved, shuffled;
SELECT (SELECT count(*) FROM generate_series(1000001, 1200000) v WHERE bloom_contains(f, v))
           < 200000 * 0.01 AS fpr_within_p,
       bloom_fpr(f) BETWEEN 0 AND 0.01 AS bloom_fpr, abs(bloom_count(f) - 20000) < 100 AS count
FROM whole;

-- Aggregates count every row, in any row order and in a parallel plan.
CREATE TEMP TABLE rows AS SELECT v % 500 AS x FROM generate_series(1, 20000) v;
SELECT (SELECT count(*) FROM generate_series(0, 499) x WHERE bloom_frequency(f, x) < 40) AS below,
       bloom_info(f)->'items' AS items
FROM (SELECT bloom_agg(x, 0.01, NULL, 'dleft') AS f FROM rows) s;
SELECT a::bytea = b::bytea AS order_free
FROM (SELECT bloom_agg(x, 0.01, 2000, 'dleft') AS a FROM rows) s1,
     (SELECT bloom_agg(x, 0.01, 2000, 'dleft' ORDER BY x DESC) AS b FROM rows) s2;
CREATE TABLE dleft_rows AS SELECT v % 5000 AS x FROM generate_series(1, 200000) v;
ALTER TABLE dleft_rows SET (parallel_workers = 2);
ANALYZE dleft_rows;
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE serial AS SELECT bloom_agg(x, 0.01, NULL, 'dleft')::bytea AS f FROM dleft_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(x, 0.01, NULL, 'dleft') FROM dleft_rows;
SELECT bloom_agg(x, 0.01, NULL, 'dleft')::bytea = (SELECT f FROM serial) AS parallel_same
FROM dleft_rows;
RESET max_parallel_workers_per_gather;
DROP TABLE dleft_rows;

-- A full filter is an error and changes nothing; merges are refused.
SELECT pg_temp.try($$SELECT bloom_agg(v, 0.01, 10, 'dleft') FROM generate_series(1, 1000) v$$, true);
SELECT pg_temp.try($$SELECT bloom_union(bloom_new(10, 0.01, 'dleft'), bloom_new(10, 0.01, 'dleft'))$$);
SELECT pg_temp.try($$SELECT bloom_intersect(bloom_new(10, 0.01, 'dleft'), bloom_new(10, 0.01, 'dleft'))$$);
SELECT pg_temp.try($$SELECT bloom_union_agg(f) FROM (VALUES (bloom_new(10, 0.01, 'dleft')),
                                                          (bloom_new(10, 0.01, 'dleft'))) t(f)$$);
-- A version-4 header naming the dleft layout is refused.
SELECT pg_temp.try(format('SELECT %L::bloom',
       '\x414d514604' || substr(bloom_new(10, 0.01, 'dleft')::text, 13)));
