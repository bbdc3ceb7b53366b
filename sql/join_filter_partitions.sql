-- Partitions a join filter skips: a hash join whose outer key is the
-- partition key of a partitioned table skips, before its scan starts, every
-- partition whose bounds no key of the build side can meet (all keys tested
-- when they are at most 1000, else their range), for range, list and hash
-- partitions, default and sub-partitions. The scans show "never executed",
-- each probe "Partition Skipped by Join Filter", the builder the count; the
-- answers are those with the filter off.
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
SET enable_nestloop = off;

CREATE FUNCTION pg_temp.skips(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
		IF line ~ '(never executed|Skipped by Join Filter)' THEN
			RETURN NEXT regexp_replace(btrim(line), '^-> +', '');
		END IF;
	END LOOP;
END $$;
-- The answer with the filter on equals the answer with it off.
CREATE FUNCTION pg_temp.same(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	off text;
	on_ text;
BEGIN
	SET amq.join_filter = off;
	EXECUTE 'SELECT string_agg(x::text, '','' ORDER BY x::text) FROM (' || query || ') x' INTO off;
	SET amq.join_filter = on;
	EXECUTE 'SELECT string_agg(x::text, '','' ORDER BY x::text) FROM (' || query || ') x' INTO on_;
	RETURN CASE WHEN off IS NOT DISTINCT FROM on_ THEN 'same: ' || coalesce(length(on_), 0) || ' chars'
	       ELSE 'DIFFERENT: ' || coalesce(off, 'NULL') || ' / ' || coalesce(on_, 'NULL') END;
END $$;

-- Range partitions of 25,000 keys each.
CREATE TABLE jp_range (k int8, v int) PARTITION BY RANGE (k);
CREATE TABLE jp_range_1 PARTITION OF jp_range FOR VALUES FROM (1) TO (25001);
CREATE TABLE jp_range_2 PARTITION OF jp_range FOR VALUES FROM (25001) TO (50001);
CREATE TABLE jp_range_3 PARTITION OF jp_range FOR VALUES FROM (50001) TO (75001);
CREATE TABLE jp_range_4 PARTITION OF jp_range FOR VALUES FROM (75001) TO (100001);
INSERT INTO jp_range SELECT g, g % 7 FROM generate_series(1, 100000) g;
-- 100 keys, all in the second partition; 2,000 keys in the third and fourth
-- (their range); no keys.
CREATE TABLE jp_few AS SELECT (25000 + g * 7)::int8 AS k FROM generate_series(1, 100) g;
CREATE TABLE jp_many AS SELECT (60000 + g * 9)::int8 AS k FROM generate_series(1, 2000) g;
CREATE TABLE jp_none (k int8);
ANALYZE jp_range, jp_few, jp_many, jp_none;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_range r JOIN jp_few f ON r.k = f.k');
SELECT pg_temp.same('SELECT r.k, r.v FROM jp_range r JOIN jp_few f ON r.k = f.k');
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_range r JOIN jp_many m ON r.k = m.k');
SELECT pg_temp.same('SELECT r.k, r.v FROM jp_range r JOIN jp_many m ON r.k = m.k');
SET amq.join_filter_max_pass_rate = 1;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_range r JOIN jp_none n ON r.k = n.k');
SELECT pg_temp.same('SELECT r.k FROM jp_range r JOIN jp_none n ON r.k = n.k');
RESET amq.join_filter_max_pass_rate;

-- List partitions of text (a deterministic collation), with a default.
CREATE TABLE jp_list (region text, v int) PARTITION BY LIST (region);
CREATE TABLE jp_list_eu PARTITION OF jp_list FOR VALUES IN ('de', 'fr');
CREATE TABLE jp_list_as PARTITION OF jp_list FOR VALUES IN ('jp', 'cn');
CREATE TABLE jp_list_rest PARTITION OF jp_list DEFAULT;
INSERT INTO jp_list SELECT (ARRAY['de', 'fr', 'jp', 'cn', 'us', 'br'])[1 + g % 6], g
  FROM generate_series(1, 60000) g;
CREATE TABLE jp_regions AS SELECT unnest(ARRAY['fr', 'xx']) AS region;
ANALYZE jp_list, jp_regions;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_list l JOIN jp_regions r ON l.region = r.region');
SELECT pg_temp.same('SELECT l.region, l.v FROM jp_list l JOIN jp_regions r ON l.region = r.region');

-- Hash partitions: a key meets one remainder's constraint.
CREATE TABLE jp_hash (k int8, v int) PARTITION BY HASH (k);
CREATE TABLE jp_hash_0 PARTITION OF jp_hash FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE jp_hash_1 PARTITION OF jp_hash FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE jp_hash_2 PARTITION OF jp_hash FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE jp_hash_3 PARTITION OF jp_hash FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO jp_hash SELECT g, g FROM generate_series(1, 40000) g;
CREATE TABLE jp_one AS SELECT 12345::int8 AS k;
ANALYZE jp_hash, jp_one;
SET amq.join_filter_max_pass_rate = 1;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_hash h JOIN jp_one o ON h.k = o.k');
SELECT pg_temp.same('SELECT h.k, h.v FROM jp_hash h JOIN jp_one o ON h.k = o.k');
RESET amq.join_filter_max_pass_rate;

-- Sub-partitions: the constraint holds the parent's bounds and the child's.
CREATE TABLE jp_sub (k int8, v int) PARTITION BY RANGE (k);
CREATE TABLE jp_sub_lo PARTITION OF jp_sub FOR VALUES FROM (1) TO (50001) PARTITION BY RANGE (k);
CREATE TABLE jp_sub_lo_a PARTITION OF jp_sub_lo FOR VALUES FROM (1) TO (25001);
CREATE TABLE jp_sub_lo_b PARTITION OF jp_sub_lo FOR VALUES FROM (25001) TO (50001);
CREATE TABLE jp_sub_hi PARTITION OF jp_sub FOR VALUES FROM (50001) TO (100001);
INSERT INTO jp_sub SELECT g, g FROM generate_series(1, 100000) g;
ANALYZE jp_sub;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_sub s JOIN jp_few f ON s.k = f.k');
SELECT pg_temp.same('SELECT s.k FROM jp_sub s JOIN jp_few f ON s.k = f.k');

-- A nested loop that rebuilds the filter for each outer row: each rebuild
-- skips the partitions its own keys miss (an old decision would lose rows).
SET enable_nestloop = on;
SELECT m.n, (SELECT count(*) FROM jp_range r JOIN jp_many x ON r.k = x.k AND x.k < m.n * 20000)
FROM unnest(ARRAY[3, 4, 1, 5]) m(n);
SET amq.join_filter = off;
SELECT m.n, (SELECT count(*) FROM jp_range r JOIN jp_many x ON r.k = x.k AND x.k < m.n * 20000)
FROM unnest(ARRAY[3, 4, 1, 5]) m(n);
SET amq.join_filter = on;
SET enable_nestloop = off;

-- No skipping where a key does not stand for the rows it matches: an int4
-- key against the int8 partition key (the answers stay right).
CREATE TABLE jp_int4 AS SELECT (25000 + g * 7)::int4 AS k FROM generate_series(1, 100) g;
ANALYZE jp_int4;
SELECT * FROM pg_temp.skips('SELECT count(*) FROM jp_range r JOIN jp_int4 f ON r.k = f.k');
SELECT pg_temp.same('SELECT r.k FROM jp_range r JOIN jp_int4 f ON r.k = f.k');

DROP TABLE jp_range, jp_few, jp_many, jp_none, jp_list, jp_regions, jp_hash, jp_one, jp_sub,
  jp_int4;
