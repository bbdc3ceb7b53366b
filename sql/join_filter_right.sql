-- Hash joins that return inner rows by whether an outer row matched them
-- get filters too: right anti joins (PostgreSQL 16 and later) and right semi
-- joins (18 and later), where an outer row without a match marks nothing.
-- 15 plans these queries as other joins (join_filter_right.out);
-- join_filter_right_1.out is 16 and 17's, join_filter_right_2.out 18's and
-- later.
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TABLE jr_small (k int);
INSERT INTO jr_small SELECT g * 10 FROM generate_series(1, 100) g;
INSERT INTO jr_small VALUES (-1), (-2);
CREATE TABLE jr_big (k int, v int);
INSERT INTO jr_big SELECT g % 5000, g FROM generate_series(1, 50000) g;
ANALYZE jr_small, jr_big;

-- The hash join's type and the rows the filter's probes removed.
CREATE FUNCTION pg_temp.jr_plan(query text) RETURNS TABLE (join_type text, rows_removed numeric)
LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query INTO plan;
	RETURN QUERY SELECT jsonb_path_query_first(plan, 'strict $.**."Join Type"') #>> '{}',
		(SELECT coalesce(sum(r::text::numeric), 0)
		 FROM jsonb_path_query(plan, 'strict $.**."Rows Removed by Bloom Filter"') r);
END $$;

-- NOT EXISTS over the big table: with the small side hashed (right anti),
-- the big table's rows whose key is not in the small one are dropped.
SET amq.join_filter = off;
SELECT count(*) FROM jr_small s WHERE NOT EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k);
SET amq.join_filter = on;
SELECT count(*) FROM jr_small s WHERE NOT EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k);
SELECT * FROM pg_temp.jr_plan(
	'SELECT count(*) FROM jr_small s WHERE NOT EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k)');

-- EXISTS over the big table: with the small side hashed (right semi), the
-- same.
SET amq.join_filter = off;
SELECT count(*), sum(k) FROM jr_small s WHERE EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k);
SET amq.join_filter = on;
SELECT count(*), sum(k) FROM jr_small s WHERE EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k);
SELECT * FROM pg_temp.jr_plan(
	'SELECT count(*), sum(k) FROM jr_small s WHERE EXISTS (SELECT 1 FROM jr_big b WHERE b.k = s.k)');

DROP TABLE jr_small, jr_big;
