-- The cuckoo layouts: buckets of 2, 4 or 8 fingerprints ('b2', 'b4', 'b8')
-- and semi-sorted b4 buckets ('semisorted'); the default layout for an fpr;
-- the fpr a layout cannot reach; adds until full that lose nothing and
-- change no byte when they fail; copies and deletes in every layout.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

CREATE TEMP TABLE layouts (layout text, slots int, load float8);
INSERT INTO layouts VALUES ('b2', 2, 0.84), ('b4', 4, 0.95), ('b8', 8, 0.98),
                           ('semisorted', 4, 0.95);

-- Each layout, as cuckoo_info describes it. A filter for 100,000 values at
-- 0.1%: f = ceil(log2(2b / p)) bits, a bucket of b f bits (semisorted:
-- 4f - 4), room for the capacity at the layout's load, and the format
-- version that first has the layout (b4: 1, as amq 0.1.0 wrote it; the others 3).
SELECT l.layout, i->>'layout' AS info_layout, i->'bucket_size' AS bucket_size,
       i->'semisorted' AS semisorted, i->'fingerprint_bits' AS f,
       (i->>'fingerprint_bits')::int = ceil(log(2, 2.0 * l.slots / 0.001)) AS f_is_log2_2b_over_p,
       i->'bits_per_slot' AS bits_per_slot,
       (i->>'total_slots')::float8 * l.load >= 100000 AS holds_capacity,
       (i->>'total_slots')::float8 * l.load < 100000 * 1.01 AS no_more_than_1pct_spare,
       get_byte(f::bytea, 4) AS format_version, i->'format_version' AS info_version,
       round(octet_length(f::bytea) * 8 / 100000.0, 2) AS bits_per_item
FROM layouts l, LATERAL (SELECT cuckoo_new(100000, 0.001, l.layout) AS f) n,
     LATERAL (SELECT cuckoo_info(n.f) AS i) d
ORDER BY l.layout;

-- Without a layout, the bucket size with the fewest bits per item
-- (fingerprint bits / load) for the fpr: b2 from 1/32 up to 0.5, b4 below
-- 1/32 and from 0.5 (where b2's fingerprint would have 3 bits), b2 again
-- where b4's would need 33. cuckoo_agg picks the same way.
SELECT p, cuckoo_info(cuckoo_new(1000, p))->>'layout' AS cuckoo_new_default,
       (SELECT cuckoo_info(cuckoo_agg(x, p))->>'layout' FROM generate_series(1, 100) x)
           AS cuckoo_agg_default
FROM unnest(ARRAY[0.9, 0.5, 0.49, 0.25, 0.1, 0.05, 0.03125, 0.031, 0.01, 0.001, 1e-6,
                  2e-9, 1e-9]::float8[]) AS p;
SELECT cuckoo_new(1000)::bytea = cuckoo_new(1000, 0.01, 'b4')::bytea AS default_is_b4_at_1pct,
       cuckoo_new(1000, 0.1)::bytea = cuckoo_new(1000, 0.1, 'b2')::bytea AS default_is_b2_at_10pct;

-- Semi-sorted buckets take one bit less per fingerprint than b4 at the
-- same capacity and fpr: over 0.9 bits per item less, at every fpr.
SELECT p, (octet_length(cuckoo_new(100000, p, 'b4')::bytea) -
           octet_length(cuckoo_new(100000, p, 'semisorted')::bytea)) * 8 / 100000.0 > 0.9
           AS saves_09_bits_per_item
FROM unnest(ARRAY[0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6, 2e-9]::float8[]) AS p;

-- Every layout: members present, counts, the aggregate's rate, deletes.
SELECT l.layout, cuckoo_info(f)->>'layout' AS built,
       (SELECT count(*) FROM generate_series(1, 20000) x WHERE NOT cuckoo_contains(f, x))
           AS false_negatives,
       (SELECT count(*) FROM generate_series(1000001, 1100000) x WHERE cuckoo_contains(f, x))
           < 100000 * 0.01 * 1.15 AS fpr_within_15pct_of_p,
       cuckoo_count(f, 7) AS copies_of_7,
       cuckoo_count(cuckoo_add(f, 7), 7) AS after_add,
       cuckoo_contains(cuckoo_delete(f, 7), 7) AS after_delete
FROM layouts l,
     LATERAL (SELECT cuckoo_agg(x, 0.01, NULL, l.layout) AS f FROM generate_series(1, 20000) x) a
ORDER BY l.layout;
-- (An add into a filter at its load may move other fingerprints, so only
-- where the add finds a free slot does deleting it give back the same bytes,
-- as here, in filters with room.)
SELECT l.layout, cuckoo_delete(cuckoo_add(f, 123456789), 123456789)::bytea = f::bytea
           AS add_delete_same
FROM layouts l,
     LATERAL (SELECT cuckoo_agg(x, 0.01, 40000, l.layout) AS f FROM generate_series(1, 100) x) a
ORDER BY l.layout;

-- Adding until full: every layout holds its capacity, the failing add
-- raises 54000, the last good filter is kept byte for byte, nothing is lost.
CREATE FUNCTION pg_temp.fill_until_full(layout text, capacity int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	f cuckoo := cuckoo_new(capacity, 0.01, layout);
	n int := 0;
	before bytea;
	lost int;
	failure text;
BEGIN
	BEGIN
		LOOP
			before := f::bytea;
			f := cuckoo_add(f, n);
			n := n + 1;
		END LOOP;
	EXCEPTION WHEN program_limit_exceeded THEN
		failure := regexp_replace(SQLERRM, '[0-9][0-9.]*', 'N', 'g');
	END;
	SELECT count(*) INTO lost FROM generate_series(0, n - 1) i WHERE NOT cuckoo_contains(f, i);
	RETURN format('%s | holds capacity: %s | kept: %s | lost: %s', failure, n >= capacity,
		      f::bytea = before, lost);
END $$;
SELECT layout, pg_temp.fill_until_full(layout, 2000) FROM layouts ORDER BY layout;

-- Errors: a layout that does not exist, and an fpr a layout cannot reach.
SELECT pg_temp.try($$SELECT cuckoo_new(100, 0.01, 'b16')$$);
SELECT pg_temp.try($$SELECT cuckoo_new(100, 0.01, 'blocked')$$);
SELECT pg_temp.try($$SELECT cuckoo_agg(x, 0.01, NULL, 'Semisorted') FROM generate_series(1, 3) x$$);
SELECT pg_temp.try($$SELECT bloom_new(100, 0.01, 'semisorted')$$);
SELECT pg_temp.try($$SELECT cuckoo_new(100, 1e-12, 'b4')$$);
SELECT pg_temp.try($$SELECT cuckoo_new(100, 1e-9, 'b8')$$);
SELECT pg_temp.try($$SELECT cuckoo_new(100, 0.6, 'b2')$$);
SELECT pg_temp.try($$SELECT cuckoo_new(100, 1e-12)$$);
SELECT pg_temp.try($$SELECT cuckoo_agg(x, 1e-10, NULL, 'semisorted') FROM generate_series(1, 3) x$$);
SELECT cuckoo_new(100, 0.01, NULL) IS NULL AS null_layout_is_null;

-- A value added once more than a filter can hold it, 2b times (b2: 4; b4 and
-- semisorted: 8; b8: 16), is refused in its own words however empty the
-- filter, through cuckoo_add and cuckoo_add_agg, and the failed UPDATE keeps
-- the stored bytes. (Distinct values still fill a filter with "is full":
-- fill_until_full above.)
CREATE TEMP TABLE copies (layout text PRIMARY KEY, f cuckoo);
INSERT INTO copies
SELECT l.layout, (SELECT cuckoo_add_agg(n.c, 'k'::text)
                  FROM (SELECT cuckoo_new(100000, 0.01, l.layout) AS c) n,
                       generate_series(1, 2 * l.slots))
FROM layouts l;
CREATE TEMP TABLE copies_before AS SELECT layout, f::bytea AS b FROM copies;
SELECT layout, cuckoo_count(f, 'k'::text) AS copies,
       pg_temp.try(format($$UPDATE copies SET f = cuckoo_add(f, 'k'::text) WHERE layout = %L$$,
                          layout)) AS one_more
FROM copies ORDER BY layout;
SELECT bool_and(c.f::bytea = b.b) AS bytes_kept FROM copies c JOIN copies_before b USING (layout);
SELECT l.layout,
       pg_temp.try(format($$SELECT cuckoo_add_agg(n.c, 'k'::text)
                           FROM (SELECT cuckoo_new(100000, 0.01, %L) AS c) n,
                                generate_series(1, %s)$$, l.layout, 2 * l.slots + 1))
           AS copies_in_one_statement
FROM layouts l ORDER BY l.layout;

-- The lowest fpr of each layout is 2b/2^32 (32-bit fingerprints): accepted,
-- and the double just below it refused. The hint of a refusal quotes it
-- rounded up to 4 digits: that value is accepted, one less in its last digit
-- refused (the numbers README.md and docs/CUCKOO.md quote).
SELECT l.layout,
       cuckoo_info(cuckoo_new(100, lowest, l.layout))->'fingerprint_bits' AS f_at_lowest,
       pg_temp.try(format('SELECT cuckoo_new(100, %s::float8 * (1 - 2::float8 ^ -53), %L)',
                          lowest, l.layout)) AS just_below,
       substring(pg_temp.try(format('SELECT cuckoo_new(100, 1e-12, %L)', l.layout))
                 FROM 'at least ([0-9.e-]+) with') AS quoted
FROM layouts l, LATERAL (SELECT 2 * l.slots * 2::float8 ^ -32 AS lowest) b
ORDER BY l.layout;
SELECT layout, cuckoo_info(cuckoo_new(100, quoted, layout))->'fingerprint_bits' AS f_at_quoted,
       pg_temp.try(format('SELECT cuckoo_new(100, %s, %L)', below, layout)) AS one_less
FROM (VALUES ('b2', 9.314e-10, '9.313e-10'), ('b4', 1.863e-09, '1.862e-09'),
             ('b8', 3.726e-09, '3.725e-09'), ('semisorted', 1.863e-09, '1.862e-09'))
     AS v(layout, quoted, below)
ORDER BY layout;
