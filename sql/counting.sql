-- The counting Bloom filter (layout 'counting'): bloom_new and bloom_agg,
-- bloom_delete and bloom_frequency, the functions that read any Bloom
-- filter, 1M values (fpr and a random half deleted), sticky saturation,
-- parallel aggregates, and the errors on the other layouts.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- The classic m and k, a 4-bit counter each, written as format version 2.
SELECT bloom_info(c)->'counters' = bloom_info(k)->'bits' AS same_m,
       bloom_info(c)->'hashes' = bloom_info(k)->'hashes' AS same_k,
       bloom_info(c)->'counter_bits' AS counter_bits,
       bloom_info(c)->'format_version' AS version,
       bloom_info(k)->'format_version' AS classic_version,
       get_byte(c::bytea, 4) AS header_version, get_byte(c::bytea, 6) AS header_layout
FROM (SELECT bloom_new(1000, 0.01, 'counting') AS c, bloom_new(1000, 0.01, 'classic') AS k) s;

-- Add, count, delete.
CREATE TEMP TABLE cf AS
SELECT bloom_union(bloom_add(bloom_add(bloom_add(bloom_new(100, 0.01, 'counting'), 7), 7), 7),
                   bloom_add(bloom_new(100, 0.01, 'counting'), 'x'::text)) AS f;
SELECT bloom_contains(f, 7) AS has7, f @> 7.0 AS has_7_0, bloom_contains(f, 'x') AS has_x,
       bloom_contains(f, 8) AS has8, bloom_frequency(f, 7) AS freq7,
       bloom_frequency(f, 'x') AS freq_x, bloom_frequency(f, 8) AS freq8,
       bloom_frequency(f, NULL::int) IS NULL AS null_freq, bloom_info(f)->'items' AS items
FROM cf;
SELECT bloom_frequency(d1, 7) AS after_one, bloom_frequency(d3, 7) AS after_three,
       bloom_contains(d3, 7) AS still_there, bloom_contains(d3, 'x') AS x_kept,
       bloom_info(d3)->'items' AS items
FROM (SELECT d1, bloom_delete(bloom_delete(d1, 7), 7) AS d3
      FROM (SELECT bloom_delete(f, 7) AS d1 FROM cf) s1) s2;
SELECT bloom_delete(f, 'never')::bytea = f::bytea AS absent_unchanged,
       bloom_delete(f, NULL::int)::bytea = f::bytea AS null_unchanged,
       bloom_delete(NULL::bloom, 1) IS NULL AS null_filter
FROM cf;

-- One value added 20 times then deleted 20 times: its counters saturate and
-- stay set, and no other value is lost.
CREATE TEMP TABLE hot AS
WITH RECURSIVE adds(i, f) AS (
	SELECT 0, (SELECT bloom_agg(v, 0.01, 1000, 'counting') FROM generate_series(1, 500) v)
	UNION ALL SELECT i + 1, bloom_add(f, -1) FROM adds WHERE i < 20
), dels(i, f) AS (
	SELECT 0, (SELECT f FROM adds WHERE i = 20)
	UNION ALL SELECT i + 1, bloom_delete(f, -1) FROM dels WHERE i < 20
)
SELECT (SELECT f FROM adds WHERE i = 20) AS added, (SELECT f FROM dels WHERE i = 20) AS deleted;
SELECT bloom_frequency(added, -1) >= 20 AS never_below_20,
       (bloom_info(deleted)->>'counters_saturated')::int >= (bloom_info(deleted)->>'hashes')::int
           AS saturated_stay,
       bloom_contains(deleted, -1) AS hot_stays,
       (SELECT count(*) FROM generate_series(1, 500) v WHERE NOT bloom_contains(deleted, v))
           AS lost
FROM hot;

-- 1M values: measured fpr within 1.15p.
CREATE TEMP TABLE million AS
SELECT bloom_agg(v, 0.01, 1000000, 'counting') AS f FROM generate_series(1, 1000000) v;
SELECT count(*) FILTER (WHERE bloom_contains(f, v)) / 1000000.0 <= 0.0115 AS fpr_within_1_15p
FROM million, generate_series(1000001, 2000000) v;

-- A random half of 20,000 values deleted in random order: every value still
-- added is present. (test_counting does this with 1M values in the core.)
CREATE FUNCTION pg_temp.delete_step(s bloom, f bloom, v int) RETURNS bloom
	LANGUAGE sql IMMUTABLE AS 'SELECT bloom_delete(coalesce(s, f), v)';
CREATE AGGREGATE pg_temp.delete_all(bloom, int) (SFUNC = pg_temp.delete_step, STYPE = bloom);
SELECT setseed(0.25);
CREATE TEMP TABLE shuffled AS
SELECT v, random() < 0.5 AS doomed, random() AS ord FROM generate_series(1, 20000) v;
CREATE TEMP TABLE halved AS
SELECT pg_temp.delete_all(f, v ORDER BY ord) AS f
FROM shuffled, (SELECT bloom_agg(v, 0.01, 20000, 'counting') AS f FROM shuffled) s
WHERE doomed;
SELECT count(*) FILTER (WHERE NOT doomed AND NOT bloom_contains(f, v)) AS remaining_lost,
       count(*) FILTER (WHERE doomed AND bloom_contains(f, v)) < 0.0115 * count(*) FILTER (WHERE doomed)
           AS deleted_mostly_gone,
       (SELECT bloom_info(f)->'items' FROM halved) = to_jsonb(count(*) FILTER (WHERE NOT doomed))
           AS items
FROM halved, shuffled;

-- Aggregates count every row (frequency never below the rows of a value),
-- in any row order, sized for the distinct values or streaming.
CREATE TEMP TABLE rows AS SELECT v % 500 AS x FROM generate_series(1, 20000) v;
SELECT (SELECT count(*) FROM generate_series(0, 499) x WHERE bloom_frequency(f, x) < 40) AS below,
       bloom_info(f)->'items' AS items
FROM (SELECT bloom_agg(x, 0.01, NULL, 'counting') AS f FROM rows) s;
SELECT (SELECT count(*) FROM generate_series(0, 499) x WHERE bloom_frequency(f, x) < 40) AS below,
       bloom_info(f)->'items' AS items
FROM (SELECT bloom_agg(x, 0.01, 2000, 'counting') AS f FROM rows) s;
SELECT a::bytea = b::bytea AS order_free
FROM (SELECT bloom_agg(x, 0.01, NULL, 'counting') AS a FROM rows) s1,
     (SELECT bloom_agg(x, 0.01, NULL, 'counting' ORDER BY x DESC) AS b FROM rows) s2;

-- Union adds counters: the union of two halves is the filter of the whole;
-- union_agg too; intersection of a part with the whole is the part.
CREATE TEMP TABLE halves AS
SELECT bloom_agg(x, 0.01, 2000, 'counting') FILTER (WHERE ctid < '(45,0)') AS a,
       bloom_agg(x, 0.01, 2000, 'counting') FILTER (WHERE ctid >= '(45,0)') AS b,
       bloom_agg(x, 0.01, 2000, 'counting') AS whole
FROM rows;
SELECT bloom_union(a, b)::bytea = whole::bytea AS union_is_whole,
       (SELECT bloom_union_agg(f) FROM (VALUES (a), (b)) t(f))::bytea = whole::bytea AS union_agg,
       bloom_intersect(a, whole)::bytea = a::bytea AS intersect_min,
       abs(bloom_count(whole) - 500) < 25 AS count_500,
       bloom_fpr(whole) BETWEEN 0 AND 0.01 AS fpr
FROM halves;

-- Errors: the other layouts cannot delete or count; layouts do not mix.
SELECT pg_temp.try($$SELECT bloom_delete(bloom_new(10, 0.01, 'classic'), 1)$$);
SELECT pg_temp.try($$SELECT bloom_delete(bloom_new(10, 0.01), 1)$$);
SELECT pg_temp.try($$SELECT bloom_frequency(bloom_new(10, 0.01, 'blocked'), 1)$$);
SELECT pg_temp.try($$SELECT bloom_union(bloom_new(10, 0.01, 'counting'), bloom_new(10, 0.01, 'classic'))$$);
SELECT pg_temp.try($$SELECT bloom_delete(cuckoo_new(10)::bytea::bloom, 1)$$);
-- A version-1 header naming the counting layout is refused.
SELECT pg_temp.try(format('SELECT %L::bloom',
       '\x414d514601' || substr(bloom_new(10, 0.01, 'counting')::text, 13)));
