-- The bloom functions: bloom_new, bloom_add, bloom_contains and the @> / <@
-- operators, bloom_union, bloom_intersect, bloom_count, bloom_fpr,
-- bloom_info; NULL handling and every error.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- bloom_new: blocked by default, classic on request; empty, seed 0.
SELECT bloom_info(bloom_new(1000, 0.01, 'classic'));
SELECT bloom_info(bloom_new(1000, 0.01, 'blocked'))
     = bloom_info(bloom_new(1000, 0.01)) AS blocked_is_default;
-- (A blocked filter's size comes from the core's blocked sizing table, so
-- only its shape is shown: whole 512-bit blocks.)
SELECT bloom_info(b) - 'bits' - 'bytes' - 'hashes' AS info,
       (bloom_info(b)->>'bits')::int % 512 = 0 AS whole_blocks,
       (bloom_info(b)->>'bits')::int
         >= (bloom_info(bloom_new(1000, 0.01, 'classic'))->>'bits')::int
         AS not_smaller_than_classic
FROM (SELECT bloom_new(1000, 0.01, 'blocked') AS b) s;
SELECT bloom_new(1000, 0.01)::bytea = bloom_new(1000, 0.01)::bytea AS deterministic;

-- bloom_add returns a new filter; contains answers for every numeric type
-- whose value is the same (3 = 3.0). A filter of numbers and text (the union
-- of one of each: an add of another family than a filter holds is an error,
-- sql/families.sql) answers both.
CREATE TEMP TABLE f AS
SELECT bloom_union(bloom_add(bloom_add(bloom_new(100, 0.01), 42), 2.5::float8),
                   bloom_add(bloom_new(100, 0.01), 'abc'::text)) AS f;
SELECT bloom_contains(f, 42) AS int4, bloom_contains(f, 42::int2) AS int2,
       bloom_contains(f, 42::int8) AS int8, bloom_contains(f, 42.0) AS numeric,
       bloom_contains(f, 42::float8) AS float8, bloom_contains(f, 42::float4) AS float4
FROM f;
SELECT bloom_contains(f, 'abc') AS literal, bloom_contains(f, 'abc'::text) AS text,
       bloom_contains(f, 'abc'::varchar) AS varchar,
       bloom_contains(f, 'abd') AS other_text, bloom_contains(f, 2.5) AS numeric_2_5,
       bloom_contains(f, 2.5::float4) AS float4_2_5, bloom_contains(f, 43) AS absent
FROM f;
SELECT bloom_count(f) AS count, round(bloom_fpr(f)::numeric, 8) AS fpr,
       bloom_info(f)->'items' AS items FROM f;
-- The operators: filter @> value and value <@ filter.
SELECT f @> 42 AS contains_op, 42 <@ f AS contained_op, f @> 'abc' AS text_op,
       NOT (f @> 7) AS absent_op, NOT (7 <@ f) AS absent_op2 FROM f;
SELECT oprname, oprleft::regtype, oprright::regtype, oprcode, oprcom::regoperator
FROM pg_operator WHERE oprcode::text LIKE 'bloom_%' ORDER BY oprname;
-- Adding is idempotent for the bits; items counts adds.
SELECT bloom_add(f, 42)::bytea = f::bytea AS same_bytes,
       bloom_info(bloom_add(f, 42))->'items' AS items_after_readd FROM f;

-- A classic filter works the same way.
SELECT bloom_contains(b, 7) AS present, bloom_contains(b, 8) AS absent,
       bloom_info(b)->>'layout' AS layout
FROM (SELECT bloom_add(bloom_new(1000, 0.01, 'classic'), 7) AS b) s;

-- NULLs: a NULL filter gives NULL; a NULL value leaves the filter unchanged
-- in bloom_add and gives NULL in bloom_contains.
SELECT bloom_add(NULL::bloom, 1) IS NULL AS add_null_filter,
       bloom_add(f, NULL::int)::bytea = f::bytea AS add_null_value,
       bloom_add(f, NULL)::bytea = f::bytea AS add_untyped_null,
       bloom_contains(NULL::bloom, 1) IS NULL AS contains_null_filter,
       bloom_contains(f, NULL::int) IS NULL AS contains_null_value,
       (f @> NULL::int) IS NULL AS op_null,
       bloom_union(f, NULL) IS NULL AS union_null,
       bloom_intersect(NULL, f) IS NULL AS intersect_null,
       bloom_count(NULL) IS NULL AS count_null,
       bloom_fpr(NULL) IS NULL AS fpr_null,
       bloom_info(NULL) IS NULL AS info_null,
       bloom_new(NULL, 0.01) IS NULL AS new_null
FROM f;

-- Union and intersection of filters with the same parameters.
CREATE TEMP TABLE ab AS
SELECT (SELECT bloom_agg(x, 0.01, 1000) FROM generate_series(1, 300) x) AS a,
       (SELECT bloom_agg(x, 0.01, 1000) FROM generate_series(201, 500) x) AS b;
SELECT bloom_contains(bloom_union(a, b), 1) AS u1, bloom_contains(bloom_union(a, b), 500) AS u500,
       bloom_info(bloom_union(a, b))->'items' AS union_items,
       bloom_count(bloom_union(a, b)) AS union_count,
       bloom_union(a, b)::bytea = bloom_union(b, a)::bytea AS commutative,
       bloom_union(a, b)::bytea
         = (SELECT bloom_agg(x, 0.01, 1000)::bytea
            FROM (SELECT generate_series(1, 300) UNION ALL SELECT generate_series(201, 500)) s(x))
         AS union_is_agg_of_both
FROM ab;
SELECT bloom_contains(bloom_intersect(a, b), 250) AS i250,
       (SELECT count(*) FROM generate_series(1, 500) x
        WHERE bloom_contains(bloom_intersect(a, b), x)) >= 100 AS keeps_common,
       bloom_info(bloom_intersect(a, b))->'items' AS intersect_items,
       bloom_count(bloom_intersect(a, b)) AS intersect_count
FROM ab;
-- Different parameters cannot be combined.
SELECT bloom_union(bloom_new(100, 0.01), bloom_new(200, 0.01));
SELECT regexp_replace(pg_temp.try($$SELECT bloom_intersect(bloom_new(100, 0.01, 'classic'),
                                                          bloom_new(100, 0.01, 'blocked'))$$),
                      'blocked [0-9]+ bits, [0-9]+ hashes', 'blocked N bits, K hashes') AS classic_vs_blocked;
SELECT pg_temp.try($$SELECT bloom_union(bloom_new(100, 0.01), bloom_new(100, 0.1))$$);

-- bloom_count and bloom_fpr follow the set bits.
SELECT bloom_count(f) AS count, round(bloom_fpr(f)::numeric, 4) AS fpr,
       bloom_count(f) BETWEEN 9500 AND 10500 AS count_close
FROM (SELECT bloom_agg(x) AS f FROM generate_series(1, 10000) x) s;
SELECT bloom_count(bloom_new(100, 0.01)) AS empty_count, bloom_fpr(bloom_new(100, 0.01)) AS empty_fpr;

-- Errors in arguments.
SELECT bloom_new(0, 0.01);
SELECT bloom_new(-5, 0.01);
SELECT bloom_new(10, 0);
SELECT bloom_new(10, 1);
SELECT bloom_new(10, -0.5);
SELECT bloom_new(10, 'NaN');
SELECT bloom_new(10, 0.01, 'Blocked');
SELECT bloom_new(10, 0.01, '');
SELECT bloom_new(9000000000000, 0.01);
SELECT pg_temp.try($$SELECT bloom_new(0, 0.01)$$);
SELECT pg_temp.try($$SELECT bloom_new(10, 2)$$);
SELECT pg_temp.try($$SELECT bloom_new(10, 0.01, 'other')$$);
SELECT pg_temp.try($$SELECT bloom_new(9000000000000, 0.01)$$);
-- Values of a type that cannot be hashed faithfully.
SELECT bloom_add(bloom_new(10, 0.01), '1 day'::interval);
SELECT bloom_contains(bloom_new(10, 0.01), ARRAY[1, 2]);
SELECT bloom_new(10, 0.01) @> point(1, 2);
SELECT pg_temp.try($$SELECT bloom_contains(bloom_new(10, 0.01), '{}'::jsonb)$$);
