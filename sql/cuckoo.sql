-- The cuckoo functions: cuckoo_new, cuckoo_add, cuckoo_delete,
-- cuckoo_contains and the operators, cuckoo_count, cuckoo_info; a full
-- filter; NULL handling and every error.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql
-- Errors below pass mask_numbers: their messages quote the bucket count the
-- core picks for a capacity, which these tests do not depend on.

-- cuckoo_new: fpr 0.01 by default.
SELECT cuckoo_info(f) - 'buckets' - 'total_slots' - 'bytes' AS info,
       (cuckoo_info(f)->>'total_slots')::int = 4 * (cuckoo_info(f)->>'buckets')::int AS four_slots,
       (cuckoo_info(f)->>'total_slots')::int * 0.95 >= 1000 AS holds_capacity,
       (cuckoo_info(f)->>'bytes')::int = octet_length(f::bytea) AS bytes
FROM (SELECT cuckoo_new(1000) AS f) s;
SELECT cuckoo_new(1000)::bytea = cuckoo_new(1000, 0.01)::bytea AS default_fpr;
SELECT cuckoo_info(cuckoo_new(1000, 0.0001))->'fingerprint_bits' AS bits_0001,
       cuckoo_info(cuckoo_new(1000, 0.5))->'fingerprint_bits' AS bits_05;

-- Add, count copies, delete one copy at a time.
CREATE TEMP TABLE c AS
SELECT cuckoo_add(cuckoo_add(cuckoo_add(cuckoo_add(cuckoo_new(100), 7), 7), 7), 99) AS f;
SELECT cuckoo_contains(f, 7) AS has7, cuckoo_contains(f, 7.0) AS has_7_0,
       cuckoo_contains(f, 7::int8) AS has_int8, cuckoo_contains(f, 99) AS has_99,
       cuckoo_contains(f, 8) AS has8, cuckoo_count(f, 7) AS copies7,
       cuckoo_count(f, 99) AS copies_99, cuckoo_count(f, 8) AS copies8,
       cuckoo_info(f)->'items' AS items
FROM c;
SELECT f @> 7 AS contains_op, 7 <@ f AS contained_op, NOT (f @> 8) AS absent_op FROM c;
SELECT cuckoo_count(d1, 7) AS after_one, cuckoo_count(d2, 7) AS after_two,
       cuckoo_count(d3, 7) AS after_three, cuckoo_contains(d3, 7) AS still_there,
       cuckoo_contains(d3, 99) AS kept_99, cuckoo_info(d3)->'items' AS items
FROM (SELECT d1, d2, cuckoo_delete(d2, 7) AS d3
      FROM (SELECT d1, cuckoo_delete(d1, 7) AS d2
            FROM (SELECT cuckoo_delete(f, 7) AS d1 FROM c) s1) s2) s3;
-- Deleting an absent value changes nothing.
SELECT cuckoo_delete(f, 12345)::bytea = f::bytea AS delete_absent_unchanged FROM c;
-- Delete then add gives back the same bytes.
SELECT cuckoo_add(cuckoo_delete(f, 99), 99)::bytea = f::bytea AS round_trip FROM c;

-- NULLs.
SELECT cuckoo_add(NULL::cuckoo, 1) IS NULL AS add_null_filter,
       cuckoo_add(f, NULL::int)::bytea = f::bytea AS add_null_value,
       cuckoo_add(f, NULL)::bytea = f::bytea AS add_untyped_null,
       cuckoo_delete(NULL::cuckoo, 1) IS NULL AS delete_null_filter,
       cuckoo_delete(f, NULL::int)::bytea = f::bytea AS delete_null_value,
       cuckoo_contains(f, NULL::int) IS NULL AS contains_null,
       cuckoo_contains(NULL::cuckoo, 1) IS NULL AS contains_null_filter,
       cuckoo_count(f, NULL::int) IS NULL AS count_null,
       cuckoo_info(NULL) IS NULL AS info_null,
       cuckoo_new(NULL) IS NULL AS new_null
FROM c;

-- A filter sized for n holds n items; adding until full raises 54000 and
-- loses nothing that was added before.
DO $$
DECLARE
	f cuckoo := cuckoo_new(1000);
	n int := 0;
	before bytea;
	lost int;
BEGIN
	BEGIN
		LOOP
			before := f::bytea;
			f := cuckoo_add(f, n);
			n := n + 1;
		END LOOP;
	EXCEPTION WHEN program_limit_exceeded THEN
		RAISE NOTICE 'full: %', regexp_replace(SQLERRM, '[0-9][0-9.]*', 'N', 'g');
	END;
	RAISE NOTICE 'holds its capacity: %', n >= 1000;
	RAISE NOTICE 'last good filter kept: %', f::bytea = before;
	SELECT count(*) INTO lost FROM generate_series(0, n - 1) i WHERE NOT cuckoo_contains(f, i);
	RAISE NOTICE 'items lost: %', lost;
	-- The value that did not fit still does not: the failed add left no trace.
	BEGIN
		f := cuckoo_add(f, n);
		RAISE NOTICE 'adding it again: accepted';
	EXCEPTION WHEN program_limit_exceeded THEN
		RAISE NOTICE 'adding it again: %', regexp_replace(SQLERRM, '[0-9][0-9.]*', 'N', 'g');
	END;
END $$;
SELECT pg_temp.try($$SELECT cuckoo_add(cuckoo_agg(x, 0.01, 4), 4) FROM generate_series(1, 8) x$$, true)
       IN ('ok', '54000: cuckoo filter is full (N items, load N%) | Rebuild with cuckoo_agg or a larger capacity.')
       AS small_filter_ok_or_full;
-- cuckoo_agg with a capacity far below the distinct values fills up too.
SELECT pg_temp.try($$SELECT cuckoo_agg(x, 0.01, 10) FROM generate_series(1, 1000) x$$, true);

-- Errors in arguments.
SELECT cuckoo_new(0);
SELECT cuckoo_new(10, 1.5);
SELECT cuckoo_new(10, 0);
SELECT pg_temp.try($$SELECT cuckoo_new(0)$$, true);
SELECT pg_temp.try($$SELECT cuckoo_new(10000000000000)$$, true);
SELECT cuckoo_add(cuckoo_new(10), now()::time::interval);
SELECT cuckoo_contains(bloom_new(10, 0.01), 1);
