-- Parallel aggregation: bloom_agg, cuckoo_agg and bloom_union_agg give the
-- same bytes from a parallel plan (partial aggregates in 2 workers, states
-- serialised, combined in the leader) as from a serial one.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE par_rows AS
SELECT i, i % 1000 AS g, md5(i::text) AS s, i * 0.5 AS r
FROM generate_series(1, 200000) i;
ANALYZE par_rows;
CREATE TABLE par_filters AS
SELECT i % 64 AS p, bloom_agg(i, 0.01, 100000) AS f FROM par_rows WHERE i <= 50000 GROUP BY 1;
ALTER TABLE par_filters SET (parallel_workers = 2);
ANALYZE par_filters;

-- The serial results.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE par_serial AS
SELECT bloom_agg(i)::bytea AS b_int, bloom_agg(s, 0.001)::bytea AS b_text,
       bloom_agg(r)::bytea AS b_real, bloom_agg(i, 0.01, 300000)::bytea AS b_capacity,
       cuckoo_agg(i)::bytea AS c_int, cuckoo_agg(s, 0.001, 250000)::bytea AS c_text,
       bloom_agg(i, 0.01, NULL, 'classic')::bytea AS b_classic,
       bloom_agg(s, 0.02, 300000, 'classic')::bytea AS b_classic_capacity,
       cuckoo_agg(i, 0.01, NULL, 'b4')::bytea AS c_b4,
       cuckoo_agg(i, 0.1)::bytea AS c_b2_default,
       cuckoo_agg(s, 0.001, NULL, 'b8')::bytea AS c_b8,
       cuckoo_agg(i, 0.001, 250000, 'semisorted')::bytea AS c_semisorted,
       bloom_agg(g, 0.01, NULL, 'counting')::bytea AS b_counting,
       bloom_agg(g, 0.01, 2000, 'counting')::bytea AS b_counting_capacity,
       bloom_agg(i, 0.01, 10000, 'scalable')::bytea AS b_scalable,
       (SELECT bloom_union_agg(f)::bytea FROM par_filters) AS b_union,
       (SELECT bloom_agg(i)::bytea FROM par_rows WHERE i = 77) AS b_one_row,
       (SELECT md5(string_agg(f::text, ',' ORDER BY g))
        FROM (SELECT g, bloom_agg(i) AS f FROM par_rows GROUP BY g) s) AS b_groups
FROM par_rows;

-- Force parallel plans.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bloom_agg(i), cuckoo_agg(i) FROM par_rows;
EXPLAIN (COSTS OFF) SELECT bloom_union_agg(f) FROM par_filters;
EXPLAIN (COSTS OFF) SELECT g, bloom_agg(i) FROM par_rows GROUP BY g;

-- The plans really ran in 2 workers.
CREATE FUNCTION pg_temp.workers(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
		IF line ~ 'Workers Launched' THEN
			RETURN NEXT btrim(line);
		END IF;
	END LOOP;
END $$;
SELECT pg_temp.workers('SELECT bloom_agg(i), cuckoo_agg(s) FROM par_rows');
SELECT pg_temp.workers('SELECT bloom_union_agg(f) FROM par_filters');
SELECT pg_temp.workers($$SELECT bloom_agg(i, 0.01, NULL, 'classic') FROM par_rows$$);
SELECT pg_temp.workers($$SELECT bloom_agg(g, 0.01, NULL, 'counting'),
                                bloom_agg(i, 0.01, 10000, 'scalable') FROM par_rows$$);

-- Same bytes as serial.
SELECT bloom_agg(i)::bytea = (SELECT b_int FROM par_serial) AS b_int,
       bloom_agg(s, 0.001)::bytea = (SELECT b_text FROM par_serial) AS b_text,
       bloom_agg(r)::bytea = (SELECT b_real FROM par_serial) AS b_real,
       bloom_agg(i, 0.01, 300000)::bytea = (SELECT b_capacity FROM par_serial) AS b_capacity,
       cuckoo_agg(i)::bytea = (SELECT c_int FROM par_serial) AS c_int,
       cuckoo_agg(s, 0.001, 250000)::bytea = (SELECT c_text FROM par_serial) AS c_text
FROM par_rows;
SELECT bloom_agg(i, 0.01, NULL, 'classic')::bytea = (SELECT b_classic FROM par_serial) AS b_classic,
       bloom_agg(s, 0.02, 300000, 'classic')::bytea
         = (SELECT b_classic_capacity FROM par_serial) AS b_classic_capacity,
       cuckoo_agg(i, 0.01, NULL, 'b4')::bytea = (SELECT c_b4 FROM par_serial) AS c_b4
FROM par_rows;
-- The cuckoo layouts 0.3.0 adds, the default for fpr 0.1 (b2) among them.
SELECT cuckoo_agg(i, 0.1)::bytea = (SELECT c_b2_default FROM par_serial) AS c_b2_default,
       cuckoo_agg(s, 0.001, NULL, 'b8')::bytea = (SELECT c_b8 FROM par_serial) AS c_b8,
       cuckoo_agg(i, 0.001, 250000, 'semisorted')::bytea = (SELECT c_semisorted FROM par_serial)
         AS c_semisorted
FROM par_rows;
-- Counting (every row counted, with and without a capacity) and scalable (a
-- chain grown from 10,000 to hold 200,000 values) too.
SELECT bloom_agg(g, 0.01, NULL, 'counting')::bytea = (SELECT b_counting FROM par_serial)
         AS b_counting,
       bloom_agg(g, 0.01, 2000, 'counting')::bytea = (SELECT b_counting_capacity FROM par_serial)
         AS b_counting_capacity,
       bloom_frequency(bloom_agg(g, 0.01, NULL, 'counting'), 7) >= 200 AS frequency_all_rows,
       bloom_agg(i, 0.01, 10000, 'scalable')::bytea = (SELECT b_scalable FROM par_serial)
         AS b_scalable,
       jsonb_array_length(bloom_info(bloom_agg(i, 0.01, 10000, 'scalable'))->'links') AS links
FROM par_rows;
SELECT bloom_union_agg(f)::bytea = (SELECT b_union FROM par_serial) AS b_union FROM par_filters;
-- One matching row: the other workers' states are NULL and combine skips them.
SELECT bloom_agg(i)::bytea = (SELECT b_one_row FROM par_serial) AS b_one_row
FROM par_rows WHERE i = 77;
SELECT md5(string_agg(f::text, ',' ORDER BY g)) = (SELECT b_groups FROM par_serial) AS b_groups
FROM (SELECT g, bloom_agg(i) AS f FROM par_rows GROUP BY g) s;
-- No matching row at all: the empty default filter, in parallel too.
SELECT bloom_agg(i)::bytea = bloom_new(1, 0.01)::bytea AS empty_parallel
FROM par_rows WHERE i < 0;
-- A parallel probe (a function in a parallel scan) finds every member.
SELECT count(*) AS found FROM par_rows
WHERE bloom_contains((SELECT b_int::bloom FROM par_serial), i);

RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
DROP TABLE par_rows, par_filters, par_serial;
