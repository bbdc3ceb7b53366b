-- bloom_agg, cuckoo_agg and bloom_union_agg: sizing, NULLs, no rows, groups,
-- order independence, and their errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- Without a capacity the filter is sized for the distinct values seen:
-- duplicates do not inflate it, and the bytes do not depend on row order.
SELECT bloom_info(bloom_agg(x)) FROM generate_series(1, 1000) x;
SELECT bloom_agg(x % 1000)::bytea = (SELECT bloom_agg(x)::bytea FROM generate_series(0, 999) x)
       AS duplicates_ignored
FROM generate_series(1, 100000) x;
SELECT (SELECT bloom_agg(x ORDER BY x DESC)::bytea FROM generate_series(1, 5000) x)
     = (SELECT bloom_agg(x ORDER BY md5(x::text))::bytea FROM generate_series(1, 5000) x)
       AS order_independent;
SELECT bloom_info(bloom_agg(x, 0.001))->'hashes' AS hashes_at_0001,
       bloom_info(bloom_agg(x, 0.001))->'bits' AS bits_at_0001
FROM generate_series(1, 1000) x;
-- With a capacity the filter has that capacity's size, whatever arrives,
-- and equals bloom_new plus one bloom_add per row.
SELECT bloom_info(bloom_agg(x, 0.01, 1000))->'bits' AS bits,
       bloom_info(bloom_agg(x, 0.01, 1000))->'items' AS items
FROM generate_series(1, 10) x;
DO $$
DECLARE
	f bloom := bloom_new(100, 0.05);
BEGIN
	FOR i IN 1..60 LOOP
		f := bloom_add(f, i * 7);
	END LOOP;
	RAISE NOTICE 'agg with capacity = bloom_new + bloom_add: %',
		f::bytea = (SELECT bloom_agg(i * 7, 0.05, 100)::bytea FROM generate_series(1, 60) i);
END $$;
-- Every value added is found (no false negatives), of any type.
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, x)) AS false_negatives
FROM (SELECT bloom_agg(x) AS f FROM generate_series(1, 20000) x) s, generate_series(1, 20000) x;
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, md5(x::text))) AS false_negatives
FROM (SELECT bloom_agg(md5(x::text)) AS f FROM generate_series(1, 20000) x) s,
     generate_series(1, 20000) x;

-- No rows, or only NULLs: a valid empty filter (fpr 0.01), never NULL.
SELECT bloom_agg(x) IS NOT NULL AS not_null, bloom_info(bloom_agg(x))->'items' AS items,
       bloom_agg(x)::bytea = bloom_new(1, 0.01)::bytea AS empty_default
FROM generate_series(1, 0) x;
SELECT bloom_agg(NULL::int)::bytea = bloom_agg(x)::bytea AS only_nulls_is_empty
FROM generate_series(1, 0) x;
SELECT bloom_agg(CASE WHEN x > 3 THEN x END)::bytea
     = (SELECT bloom_agg(x)::bytea FROM generate_series(4, 10) x) AS nulls_skipped
FROM generate_series(1, 10) x;
-- A NULL value on the first row still fixes fpr and capacity.
SELECT bloom_info(bloom_agg(NULL::int, 0.2, 50))->'bits' AS bits_from_null_row,
       bloom_info(bloom_new(50, 0.2))->'bits' AS bits_expected;
SELECT cuckoo_agg(x) IS NOT NULL AS not_null, cuckoo_info(cuckoo_agg(x))->'items' AS items,
       cuckoo_agg(x)::bytea = cuckoo_new(1)::bytea AS empty_default
FROM generate_series(1, 0) x;

-- cuckoo_agg: one slot per distinct value, membership exact for members.
SELECT cuckoo_info(f)->'items' AS items, cuckoo_info(f)->'fingerprint_bits' AS bits,
       cuckoo_count(f, 10) AS copies,
       (SELECT count(*) FROM generate_series(1, 5000) x WHERE NOT cuckoo_contains(f, x))
         AS false_negatives
FROM (SELECT cuckoo_agg(x % 5000 + 1) AS f FROM generate_series(1, 50000) x) s;
SELECT (SELECT cuckoo_agg(x ORDER BY x)::bytea FROM generate_series(1, 3000) x)
     = (SELECT cuckoo_agg(x ORDER BY -x)::bytea FROM generate_series(1, 3000) x)
       AS cuckoo_order_independent;
SELECT (cuckoo_info(cuckoo_agg(x, 0.001, 10000))->>'total_slots')::int * 0.95 >= 10000
         AS holds_capacity,
       cuckoo_info(cuckoo_agg(x, 0.001, 10000))->'fingerprint_bits' AS bits
FROM generate_series(1, 100) x;
SELECT octet_length(cuckoo_agg(x, 0.001, 10000)::bytea)
     = octet_length(cuckoo_new(10000, 0.001)::bytea) AS sized_by_capacity
FROM generate_series(1, 100) x;

-- GROUP BY: one filter per group. has_next asks for a value of another group:
-- a Bloom filter may say yes (a false positive; none of these does).
SELECT g, count(*) AS rows, bloom_contains(bloom_agg(x), g) AS has_own,
       bloom_contains(bloom_agg(x), g + 1) AS has_next,
       cuckoo_contains(cuckoo_agg(x), g) AS cuckoo_has_own,
       cuckoo_contains(cuckoo_agg(x), g + 1) AS cuckoo_has_next
FROM (SELECT x % 4 AS g, x FROM generate_series(0, 399) x) s
GROUP BY g ORDER BY g;

-- As a window aggregate (the final function may run many times on one state)
-- and with FILTER.
SELECT x, bloom_info(bloom_agg(x) OVER (ORDER BY x))->'items' AS running_items,
       bloom_contains(bloom_agg(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
                      x - 1) AS has_previous
FROM generate_series(1, 4) x;
SELECT bloom_agg(x) FILTER (WHERE x % 2 = 0)::bytea
     = (SELECT bloom_agg(x)::bytea FROM generate_series(2, 100, 2) x) AS with_filter_clause
FROM generate_series(1, 100) x;

-- bloom_union_agg: the union of compatible filters; NULLs skipped.
CREATE TEMP TABLE parts AS
SELECT x % 8 AS p, bloom_agg(x, 0.01, 10000) AS f FROM generate_series(1, 8000) x GROUP BY 1;
SELECT bloom_union_agg(f)::bytea = (SELECT bloom_agg(x, 0.01, 10000)::bytea
                                    FROM generate_series(1, 8000) x) AS union_of_parts
FROM parts;
SELECT bloom_union_agg(f)::bytea = (SELECT bloom_union_agg(f)::bytea FROM parts) AS with_nulls
FROM (SELECT f FROM parts UNION ALL SELECT NULL) s;
SELECT bloom_union_agg(f) IS NULL AS no_rows FROM parts WHERE false;
SELECT bloom_union_agg(NULL::bloom) IS NULL AS only_nulls;
SELECT bloom_union_agg(f)
FROM (SELECT bloom_new(10, 0.01, 'classic') UNION ALL SELECT bloom_new(20, 0.01, 'classic')) s(f);

-- Errors: bad fpr or capacity (from the first row), a NULL fpr, a value of a
-- type that cannot be hashed.
SELECT bloom_agg(x, 0) FROM generate_series(1, 3) x;
SELECT bloom_agg(x, 1.5) FROM generate_series(1, 3) x;
SELECT bloom_agg(x, 0.01, 0) FROM generate_series(1, 3) x;
SELECT cuckoo_agg(x, 'NaN') FROM generate_series(1, 3) x;
SELECT cuckoo_agg(x, 0.01, -1) FROM generate_series(1, 3) x;
SELECT bloom_agg(x, NULL) FROM generate_series(1, 3) x;
SELECT bloom_agg(x, 0.01, 100000000000000) FROM generate_series(1, 3) x;
SELECT bloom_agg(ARRAY[x]) FROM generate_series(1, 3) x;
SELECT pg_temp.try($$SELECT bloom_agg(x, 2) FROM generate_series(1, 3) x$$);
SELECT pg_temp.try($$SELECT bloom_agg(x, NULL::float8) FROM generate_series(1, 3) x$$);
-- A bad fpr on a later row is not read: the first row decides.
SELECT bloom_info(bloom_agg(x, CASE WHEN x = 1 THEN 0.1 ELSE 7 END, NULL, 'classic'))->'hashes'
         AS hashes
FROM generate_series(1, 3) x;
-- No rows: arguments are never read.
SELECT bloom_agg(x, 7) IS NOT NULL AS no_rows_no_error FROM generate_series(1, 0) x;

-- The layout: bloom_agg(value, fpr, capacity, layout) and the same slot in
-- cuckoo_agg. Aggregates take no named arguments, so the form is positional;
-- a NULL capacity sizes the filter for the distinct values seen and a NULL
-- layout is the default: 'blocked' for bloom_agg, 'b4' for cuckoo_agg.
SELECT bloom_info(bloom_agg(x))->>'layout' AS default_layout,
       bloom_agg(x)::bytea = bloom_agg(x, 0.01, NULL, 'blocked')::bytea AS blocked_is_default,
       bloom_agg(x)::bytea = bloom_agg(x, 0.01, NULL)::bytea AS null_capacity,
       bloom_agg(x)::bytea = bloom_agg(x, 0.01, NULL, NULL)::bytea AS null_layout,
       bloom_info(bloom_agg(x, 0.01, NULL, 'classic')) AS classic_sized_for_distinct
FROM generate_series(1, 3000) x;
SELECT octet_length(bloom_agg(x)::bytea) AS blocked_bytes,
       octet_length(bloom_agg(x, 0.01, NULL, 'classic')::bytea) AS classic_bytes
FROM generate_series(1, 100000) x;
-- With a capacity: bloom_new plus one bloom_add per row, in either layout.
DO $$
DECLARE
	layout text;
	f bloom;
BEGIN
	FOREACH layout IN ARRAY ARRAY['classic', 'blocked'] LOOP
		f := bloom_new(500, 0.02, layout);
		FOR i IN 1..300 LOOP
			f := bloom_add(f, i * 7);
		END LOOP;
		RAISE NOTICE '% agg with capacity = bloom_new + bloom_add: %', layout,
			f::bytea = (SELECT bloom_agg(i * 7, 0.02, 500, layout)::bytea
				    FROM generate_series(1, 300) i);
	END LOOP;
END $$;
-- The first row fixes the layout too, even with a NULL value.
SELECT bloom_agg(NULL::int, 0.05, 100, 'classic')::bytea
     = bloom_new(100, 0.05, 'classic')::bytea AS layout_from_null_row;
SELECT cuckoo_agg(x)::bytea = cuckoo_agg(x, 0.01, NULL, 'b4')::bytea AS b4_is_default,
       cuckoo_agg(x)::bytea = cuckoo_agg(x, 0.01, NULL, NULL)::bytea AS cuckoo_null_layout,
       cuckoo_agg(x, 0.01, 4000)::bytea = cuckoo_agg(x, 0.01, 4000, 'b4')::bytea AS b4_capacity
FROM generate_series(1, 3000) x;
-- Every layout that is not one of the kind's is refused by name.
SELECT name, pg_temp.try(format($$SELECT bloom_agg(x, 0.01, NULL, %L) FROM generate_series(1, 3) x$$,
                                name)) AS bloom_agg,
       pg_temp.try(format($$SELECT cuckoo_agg(x, 0.01, 100, %L) FROM generate_series(1, 3) x$$,
                          name)) AS cuckoo_agg
FROM unnest(ARRAY['fancy', 'Blocked', 'CLASSIC', '', 'blocked ', 'b4', 'classic', 'counting'])
     AS name;
SELECT bloom_agg(x, 0.01, 10, 'fancy') FROM generate_series(1, 3) x;
SELECT cuckoo_agg(x, 0.01, NULL, 'blocked') FROM generate_series(1, 3) x;
SELECT pg_temp.try($$SELECT bloom_agg(x, NULL, NULL, 'classic') FROM generate_series(1, 3) x$$);
SELECT pg_temp.try($$SELECT bloom_agg(x, 0.01, 0, 'classic') FROM generate_series(1, 3) x$$);
-- A layout is text: anything else does not match any bloom_agg.
SELECT bloom_agg(x, 0.01, 10, 4) FROM generate_series(1, 3) x;
