-- Bulk maintenance of stored filters and add-if-absent: bloom_add_agg,
-- bloom_delete_agg, cuckoo_add_agg and cuckoo_delete_agg give the bytes of a
-- fold of the scalar function in row order; the same-filter rule, NULLs, no
-- rows; a cuckoo filter that fills up fails the statement and the stored
-- filter keeps its bytes; a 1 MiB stored (TOASTed) filter read once per
-- statement; cuckoo_add_unique; the README's trigger recipes checked
-- against filters rebuilt from scratch.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- 3,000 distinct values and a NULL, in a fixed order.
CREATE TEMP TABLE bulk_vals (id int PRIMARY KEY, x int, t text);
INSERT INTO bulk_vals
SELECT g AS id, CASE WHEN g = 1500 THEN NULL ELSE (g * 7919) % 1000003 END AS x,
       'v' || g AS t
FROM generate_series(1, 3001) g;

-- fn(filter, value) folded over bulk_vals in id order, one call per row.
CREATE FUNCTION pg_temp.fold(fn text, kind text, f bytea, col text, last int) RETURNS bytea
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..last LOOP
		EXECUTE format('SELECT %I($1::%s, %I)::bytea FROM bulk_vals WHERE id = $2', fn, kind, col)
			INTO f USING f, i;
	END LOOP;
	RETURN f;
END $$;

-- agg(filter, col ORDER BY id) over the same rows, in one statement.
CREATE FUNCTION pg_temp.bulk(agg text, kind text, f bytea, col text, last int) RETURNS bytea
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SELECT %I($1::%s, %I ORDER BY id)::bytea FROM bulk_vals WHERE id <= %s',
		       agg, kind, col, last) INTO f USING f;
	RETURN f;
END $$;

-- Adds: every layout, integers and text, the same bytes as the fold.
SELECT start, col,
       pg_temp.bulk(kind || '_add_agg', kind, f, col, 3001)
       = pg_temp.fold(kind || '_add', kind, f, col, 3001) AS same_as_fold
FROM (VALUES ('bloom_new(5000, 0.01)', bloom_new(5000, 0.01)::bytea),
             ('bloom_new(5000, 0.01, classic)', bloom_new(5000, 0.01, 'classic')::bytea),
             ('bloom_new(5000, 0.01, counting)', bloom_new(5000, 0.01, 'counting')::bytea),
             ('bloom_new(300, 0.01, scalable)', bloom_new(300, 0.01, 'scalable')::bytea),
             ('cuckoo_new(5000)', cuckoo_new(5000)::bytea),
             ('cuckoo_new(5000, 0.01, b2)', cuckoo_new(5000, 0.01, 'b2')::bytea),
             ('cuckoo_new(5000, 0.01, b8)', cuckoo_new(5000, 0.01, 'b8')::bytea),
             ('cuckoo_new(5000, 0.01, semisorted)', cuckoo_new(5000, 0.01, 'semisorted')::bytea)) s(start, f),
     LATERAL (SELECT split_part(start, '_', 1) AS kind) k,
     (VALUES ('x'), ('t')) c(col)
ORDER BY 1, 2;
-- Every value is found, and a scalable chain grew.
SELECT (SELECT count(*) FROM bulk_vals WHERE NOT bloom_contains(b, x)) AS bloom_lost,
       (SELECT count(*) FROM bulk_vals WHERE NOT cuckoo_contains(c, x)) AS cuckoo_lost,
       (SELECT count(*) FROM bulk_vals WHERE NOT bloom_contains(s, x)) AS scalable_lost,
       jsonb_array_length(bloom_info(s)->'links') > 1 AS chain_grew,
       bloom_info(b)->'items' AS bloom_items, cuckoo_info(c)->'items' AS cuckoo_items
FROM (SELECT bloom_add_agg(bloom_new(5000, 0.01), x) AS b, cuckoo_add_agg(cuckoo_new(5000), x) AS c,
             bloom_add_agg(bloom_new(300, 0.01, 'scalable'), x) AS s FROM bulk_vals) f;

-- Deletes: counting and cuckoo filters, with values never added; the fold's bytes.
CREATE TEMP TABLE bulk_full AS
SELECT bloom_add_agg(bloom_new(5000, 0.01, 'counting'), x ORDER BY id) AS counting,
       cuckoo_add_agg(cuckoo_new(5000), x ORDER BY id) AS cuckoo
FROM bulk_vals;
SELECT pg_temp.bulk('bloom_delete_agg', 'bloom', counting::bytea, 'x', 1000)
       = pg_temp.fold('bloom_delete', 'bloom', counting::bytea, 'x', 1000) AS counting_same,
       pg_temp.bulk('cuckoo_delete_agg', 'cuckoo', cuckoo::bytea, 'x', 1000)
       = pg_temp.fold('cuckoo_delete', 'cuckoo', cuckoo::bytea, 'x', 1000) AS cuckoo_same
FROM bulk_full;
SELECT bloom_info(bloom_delete_agg((SELECT counting FROM bulk_full), x))->'items'
         AS counting_items,
       cuckoo_info(cuckoo_delete_agg((SELECT cuckoo FROM bulk_full), x))->'items' AS cuckoo_items
FROM (SELECT x FROM bulk_vals WHERE id <= 1000 UNION ALL SELECT -1 UNION ALL
      SELECT 123456789) v;
SELECT count(*) FILTER (WHERE NOT bloom_contains(d.counting, x)) AS counting_lost,
       count(*) FILTER (WHERE NOT cuckoo_contains(d.cuckoo, x)) AS cuckoo_lost
FROM bulk_vals,
     (SELECT bloom_delete_agg((SELECT counting FROM bulk_full), x) AS counting,
             cuckoo_delete_agg((SELECT cuckoo FROM bulk_full), x) AS cuckoo
      FROM bulk_vals WHERE id <= 1000) d
WHERE id > 1000 AND x IS NOT NULL;

-- No combine function: a parallel plan runs the aggregate above the Gather,
-- on every row; a blocked filter then equals bloom_agg with that capacity.
CREATE TABLE bulk_many AS SELECT g AS x FROM generate_series(1, 50000) g;
ANALYZE bulk_many;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_add_agg(bloom_new(60000, 0.01), x) FROM bulk_many;
SELECT bloom_add_agg(bloom_new(60000, 0.01), x)::bytea
       = (SELECT bloom_agg(x, 0.01, 60000)::bytea FROM bulk_many) AS same_as_bloom_agg
FROM bulk_many;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- As a window function: the final function may run after every row.
SELECT x, bloom_count(bloom_add_agg(bloom_new(100, 0.01), x) OVER (ORDER BY x)) AS so_far
FROM bulk_many WHERE x <= 3;
DROP TABLE bulk_many;

-- NULLs and no rows.
SELECT bloom_add_agg(bloom_new(100, 0.01), NULL::int)::bytea = bloom_new(100, 0.01)::bytea
         AS null_value_skipped,
       (SELECT bloom_add_agg(bloom_new(100, 0.01), x) FROM bulk_vals WHERE false) IS NULL
         AS no_rows_null,
       (SELECT cuckoo_delete_agg(cuckoo_new(100), x) FROM bulk_vals WHERE false) IS NULL
         AS cuckoo_no_rows_null;
SELECT pg_temp.try($$SELECT bloom_add_agg(NULL::bloom, 1)$$);
SELECT pg_temp.try($$SELECT cuckoo_delete_agg(f, x) FROM (VALUES (cuckoo_new(10), NULL::int),
                   (NULL, 1)) v(f, x)$$);

-- Every row must pass the same filter; GROUP BY keeps one per filter.
CREATE TEMP TABLE bulk_filters AS
SELECT n AS name, bloom_new(5000, fpr) AS f
FROM unnest(ARRAY['even', 'odd'], ARRAY[0.01, 0.02]) u(n, fpr);
SELECT pg_temp.try($$SELECT bloom_add_agg(f, id) FROM bulk_filters, bulk_vals
                   WHERE name = CASE id % 2 WHEN 0 THEN 'even' ELSE 'odd' END$$, true);
SELECT name, bloom_count(bloom_add_agg(f, id)) BETWEEN 1400 AND 1600 AS about_1500
FROM bulk_filters JOIN bulk_vals ON name = CASE id % 2 WHEN 0 THEN 'even' ELSE 'odd' END
GROUP BY name ORDER BY name;
-- Other errors: the layout cannot delete, a type that does not hash.
-- (Damaged filters: sql/corrupt.sql.)
SELECT pg_temp.try($$SELECT bloom_delete_agg(bloom_new(100, 0.01), x) FROM bulk_vals$$);
SELECT pg_temp.try($$SELECT bloom_delete_agg(bloom_new(100, 0.01, 'scalable'), 1)$$);
SELECT pg_temp.try($$SELECT bloom_add_agg(bloom_new(100, 0.01), x) FROM (VALUES (point(1, 2))) v(x)$$);

-- A cuckoo filter too small for the rows: the UPDATE fails and the stored
-- filter keeps its bytes.
CREATE TEMP TABLE bulk_small AS SELECT 'c' AS name, cuckoo_new(500) AS f;
CREATE TEMP TABLE bulk_small_before AS SELECT f::bytea AS f FROM bulk_small;
SELECT pg_temp.try($$UPDATE bulk_small SET f = (SELECT cuckoo_add_agg(bulk_small.f, x ORDER BY id)
                   FROM bulk_vals)$$, true);
SELECT s.f::bytea = b.f AS unchanged FROM bulk_small s, bulk_small_before b;
-- The same inside a transaction that goes on after a savepoint.
BEGIN;
SAVEPOINT s;
UPDATE bulk_small SET f = (SELECT cuckoo_add_agg(bulk_small.f, x) FROM bulk_vals);
ROLLBACK TO s;
UPDATE bulk_small SET f = (SELECT cuckoo_add_agg(bulk_small.f, x) FROM bulk_vals WHERE id <= 100);
COMMIT;
SELECT cuckoo_info(f)->'items' AS items_after_100 FROM bulk_small;

-- A 1 MiB stored filter, TOASTed: one statement adds 3,000 rows; the
-- filter is read in full once, every other row compares its TOAST pointer.
CREATE TABLE bulk_big (id int PRIMARY KEY, f bloom);
INSERT INTO bulk_big VALUES (1, bloom_new(875000, 0.01, 'blocked'));
SELECT octet_length(f::bytea) AS bytes, pg_column_size(f) AS stored FROM bulk_big;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE bulk_toast_before AS
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) AS blocks
FROM pg_statio_user_tables WHERE relname = 'bulk_big';
UPDATE bulk_big SET f = (SELECT bloom_add_agg(bulk_big.f, x) FROM bulk_vals) WHERE id = 1;
SELECT pg_stat_force_next_flush();
-- A 1 MiB value is about 520 TOAST chunks in about 130 blocks: read once
-- (and written once), not once per row.
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) - b.blocks < 3000
         AS read_once_not_per_row
FROM pg_statio_user_tables, bulk_toast_before b WHERE relname = 'bulk_big';
SELECT (SELECT count(*) FROM bulk_vals WHERE x IS NOT NULL AND NOT bloom_contains(f, x)) AS lost,
       bloom_info(f)->'items' AS items
FROM bulk_big;
-- A second row with an equal copy (another TOAST value): compared by a
-- slice of its header, it counts as the same filter; a different one not.
INSERT INTO bulk_big SELECT 2, f FROM bulk_big WHERE id = 1;
SELECT bloom_add_agg(f, -id ORDER BY id)::bytea
       = (SELECT bloom_add(bloom_add(f, -1), -2)::bytea FROM bulk_big WHERE id = 1) AS equal_copies
FROM bulk_big;
UPDATE bulk_big SET f = bloom_add(f, -999999) WHERE id = 2;
SELECT pg_temp.try($$SELECT bloom_add_agg(f, id ORDER BY id) FROM bulk_big$$);
DROP TABLE bulk_big;

-- cuckoo_add_unique: the same bytes for a value held already.
SELECT cuckoo_add_unique(cuckoo_new(1000), 'a')::bytea = cuckoo_add(cuckoo_new(1000), 'a')::bytea
         AS new_value_added,
       cuckoo_add_unique(c, 'a')::bytea = c::bytea AS held_value_unchanged,
       cuckoo_add_unique(c, NULL::text)::bytea = c::bytea AS null_value_unchanged,
       cuckoo_add_unique(NULL::cuckoo, 1) IS NULL AS null_filter_null,
       cuckoo_count(cuckoo_add_unique(c, 'a'), 'a') AS copies,
       cuckoo_count(cuckoo_add(c, 'a'), 'a') AS copies_with_cuckoo_add
FROM (SELECT cuckoo_add(cuckoo_new(1000), 'a') AS c) s;
-- Twice over 1,000 values, one row at a time: each stored once.
CREATE FUNCTION pg_temp.add_unique_twice() RETURNS cuckoo LANGUAGE plpgsql AS $$
DECLARE
	f cuckoo = cuckoo_new(3000, 0.001);
	r record;
BEGIN
	FOR r IN SELECT x FROM bulk_vals WHERE id <= 1000 UNION ALL
		 SELECT x FROM bulk_vals WHERE id <= 1000 LOOP
		f = cuckoo_add_unique(f, r.x);
	END LOOP;
	RETURN f;
END $$;
SELECT cuckoo_info(f)->'items' AS items,
       (SELECT max(cuckoo_count(f, x)) FROM bulk_vals WHERE id <= 1000) AS max_copies
FROM (SELECT pg_temp.add_unique_twice() AS f) s;
SELECT pg_temp.try($$SELECT cuckoo_add_unique(cuckoo_new(4), x) FROM bulk_vals$$);

-- The README recipe: a statement-level trigger keeps a stored Bloom filter
-- current with one bulk update per statement.
CREATE TABLE events (user_id bigint NOT NULL);
CREATE TABLE event_filters (name text PRIMARY KEY, f bloom NOT NULL);
INSERT INTO event_filters VALUES ('users', bloom_new(100000, 0.01));

CREATE FUNCTION events_filter_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_filters
     SET f = COALESCE((SELECT bloom_add_agg(f, user_id) FROM new_rows), f)
   WHERE name = 'users';
  RETURN NULL;
END $$;

CREATE TRIGGER events_filter_add AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION events_filter_add();

INSERT INTO events SELECT g * 31 FROM generate_series(1, 5000) g;
INSERT INTO events VALUES (7), (8), (9);
INSERT INTO events SELECT 1 WHERE false;
SELECT f::bytea = (SELECT bloom_add_agg(bloom_new(100000, 0.01), user_id)::bytea FROM events)
         AS same_as_rebuilt,
       bloom_info(f)->'items' AS items
FROM event_filters WHERE name = 'users';

-- And a cuckoo filter that follows inserts and deletes.
CREATE TABLE sessions (id text NOT NULL);
CREATE TABLE session_filters (name text PRIMARY KEY, f cuckoo NOT NULL);
INSERT INTO session_filters VALUES ('live', cuckoo_new(100000));

CREATE FUNCTION sessions_filter_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_filters
     SET f = COALESCE((SELECT cuckoo_add_agg(f, id) FROM new_rows), f)
   WHERE name = 'live';
  RETURN NULL;
END $$;
CREATE FUNCTION sessions_filter_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_filters
     SET f = COALESCE((SELECT cuckoo_delete_agg(f, id) FROM old_rows), f)
   WHERE name = 'live';
  RETURN NULL;
END $$;

CREATE TRIGGER sessions_filter_add AFTER INSERT ON sessions
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION sessions_filter_add();
CREATE TRIGGER sessions_filter_delete AFTER DELETE ON sessions
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION sessions_filter_delete();

INSERT INTO sessions SELECT 's' || g FROM generate_series(1, 6000) g;
DELETE FROM sessions WHERE right(id, 1) IN ('1', '2', '3');
INSERT INTO sessions VALUES ('s1'), ('late');
-- Rebuilt from scratch: the same items, every live session found, the
-- deleted ones gone (up to false positives).
SELECT cuckoo_info(s.f)->'items' = to_jsonb((SELECT count(*) FROM sessions)) AS same_items,
       cuckoo_info(s.f)->'items' = cuckoo_info(r.f)->'items' AS items_as_rebuilt,
       (SELECT count(*) FROM sessions WHERE NOT cuckoo_contains(s.f, id)) AS live_lost,
       (SELECT count(*) FROM generate_series(1, 6000) g
        WHERE right(g::text, 1) IN ('1', '2', '3') AND g <> 1
          AND cuckoo_contains(s.f, 's' || g)) < 20 AS deleted_gone
FROM session_filters s,
     (SELECT cuckoo_add_agg(cuckoo_new(100000), id) AS f FROM sessions) r;
-- A statement that would overfill it fails whole: rows and filter as they were.
UPDATE session_filters SET f = cuckoo_new(10) WHERE name = 'live';
SELECT pg_temp.try($$INSERT INTO sessions SELECT 'x' || g FROM generate_series(1, 100) g$$, true);
SELECT (SELECT count(*) FROM sessions WHERE id LIKE 'x%') AS inserted,
       cuckoo_info(f)->'items' AS items FROM session_filters;

DROP TABLE events, event_filters, sessions, session_filters;
DROP FUNCTION events_filter_add(), sessions_filter_add(), sessions_filter_delete();
