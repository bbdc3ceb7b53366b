-- Automatic Bloom join filters: hash joins that may drop outer rows get a
-- builder under their Hash node and a probe above the outer side's scan.
LOAD 'amq';
SHOW amq.join_filter;
SHOW amq.join_filter_max_pass_rate;
SHOW amq.join_filter_max_memory;

CREATE TABLE jf_fact (id int, d1 int, d2 int8, tag text);
INSERT INTO jf_fact SELECT g, g % 1000, g % 500, 'k' || (g % 300) FROM generate_series(1, 20000) g;
CREATE TABLE jf_dim1 (d1 int4, region text);
INSERT INTO jf_dim1 SELECT g, CASE WHEN g % 10 = 0 THEN 'ASIA' ELSE 'EUROPE' END FROM generate_series(0, 999) g;
CREATE TABLE jf_dim2 (d2 int8, flag bool);
INSERT INTO jf_dim2 SELECT g, g % 5 = 0 FROM generate_series(0, 499) g;
ANALYZE jf_fact, jf_dim1, jf_dim2;
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;

-- Off: plain plans.
SET amq.join_filter = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';

-- On: the hash join builds filter 1 and the fact scan applies it.
SET amq.join_filter = on;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
EXPLAIN (VERBOSE, COSTS OFF)
SELECT f.id, d.region FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';

-- A star join: both filters reach the fact scan through the lower join;
-- int8 = int8 and int4 = int4 keys, each with its own filter.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f
  JOIN jf_dim1 d1 ON f.d1 = d1.d1
  JOIN jf_dim2 d2 ON f.d2 = d2.d2
WHERE d1.region = 'ASIA' AND d2.flag;
SELECT count(*) FROM jf_fact f
  JOIN jf_dim1 d1 ON f.d1 = d1.d1
  JOIN jf_dim2 d2 ON f.d2 = d2.d2
WHERE d1.region = 'ASIA' AND d2.flag;

-- Two hash clauses whose outer keys reach the same scan share one combined
-- filter: a fact row passes only if its (d1, d2) pair may be in the table.
-- Half the pairs match no fact row although each column alone does, so one
-- filter per column would let twice as many rows through.
CREATE TABLE jf_pairs (d1 int, d2 int8);
INSERT INTO jf_pairs SELECT g * 10, (g * 10 + (g % 2) * 250) % 500 FROM generate_series(0, 49) g;
ANALYZE jf_pairs;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_pairs p ON f.d1 = p.d1 AND f.d2 = p.d2;
SELECT count(*) FROM jf_fact f JOIN jf_pairs p ON f.d1 = p.d1 AND f.d2 = p.d2;
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN jf_pairs p ON f.d1 = p.d1 AND f.d2 = p.d2;
SET amq.join_filter = on;

-- Cross-type keys (int8 = int4) hash with the operator's own opfamily.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d2 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d2 = d.d1 WHERE d.region = 'ASIA';

-- Integer keys (int2, int4, int8 and date, hashed as int4) are taken as their
-- values: negative ones and cross-type pairs find the same rows as with the
-- filter off, and the filter still removes rows.
CREATE TABLE jf_ints (k2 int2, k8 int8, day date);
INSERT INTO jf_ints SELECT g, g::int8 * 3, date '2000-01-01' + g FROM generate_series(-3000, 3000) g;
CREATE TABLE jf_intdim (k4 int, day date, pick bool);
INSERT INTO jf_intdim SELECT g, date '2000-01-01' + g, g % 7 = 0 FROM generate_series(-3000, 3000, 3) g;
ANALYZE jf_ints, jf_intdim;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_ints i JOIN jf_intdim d ON i.k2 = d.k4 WHERE d.pick;
SELECT count(*), sum(i.k8), min(i.k2), max(i.k2) FROM jf_ints i JOIN jf_intdim d ON i.k2 = d.k4 WHERE d.pick;
SELECT count(*), sum(i.k2) FROM jf_ints i JOIN jf_intdim d ON i.k8 = d.k4 WHERE d.pick;
SELECT count(*), min(i.day), max(i.day) FROM jf_ints i JOIN jf_intdim d ON i.day = d.day WHERE d.pick;
SET amq.join_filter = off;
SELECT count(*), sum(i.k8), min(i.k2), max(i.k2) FROM jf_ints i JOIN jf_intdim d ON i.k2 = d.k4 WHERE d.pick;
SELECT count(*), sum(i.k2) FROM jf_ints i JOIN jf_intdim d ON i.k8 = d.k4 WHERE d.pick;
SELECT count(*), min(i.day), max(i.day) FROM jf_ints i JOIN jf_intdim d ON i.day = d.day WHERE d.pick;
SET amq.join_filter = on;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_ints i JOIN jf_intdim d ON i.day = d.day WHERE d.pick;

-- Semi and right joins (inner side preserved) are filtered; the outer rows
-- of left, full and anti joins are not.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f WHERE EXISTS (SELECT 1 FROM jf_dim1 d WHERE d.d1 = f.d1 AND d.region = 'ASIA');
SELECT count(*) FROM jf_fact f WHERE EXISTS (SELECT 1 FROM jf_dim1 d WHERE d.d1 = f.d1 AND d.region = 'ASIA');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f RIGHT JOIN jf_dim1 d ON f.d1 = d.d1 AND d.region = 'ASIA';
SELECT count(*) FROM jf_fact f RIGHT JOIN jf_dim1 d ON f.d1 = d.d1 AND d.region = 'ASIA';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f LEFT JOIN jf_dim1 d ON f.d1 = d.d1 AND d.region = 'ASIA';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f FULL JOIN jf_dim1 d ON f.d1 = d.d1 AND d.region = 'ASIA';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f WHERE NOT EXISTS (SELECT 1 FROM jf_dim1 d WHERE d.d1 = f.d1 AND d.region = 'ASIA');
SELECT count(*) FROM jf_fact f WHERE NOT EXISTS (SELECT 1 FROM jf_dim1 d WHERE d.d1 = f.d1 AND d.region = 'ASIA');

-- Text keys under a nondeterministic collation: 'K1' and 'k1' are equal.
CREATE COLLATION jf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE jf_names (tag text COLLATE jf_ci);
INSERT INTO jf_names VALUES ('K1'), ('k2'), ('K3');
ANALYZE jf_names;
SET amq.join_filter_max_pass_rate = 1;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_names n ON f.tag COLLATE jf_ci = n.tag;
SELECT count(*) FROM jf_fact f JOIN jf_names n ON f.tag COLLATE jf_ci = n.tag;
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN jf_names n ON f.tag COLLATE jf_ci = n.tag;
SET amq.join_filter = on;

-- Every row matches: the planner expects no gain at the default pass rate,
-- and a forced filter switches itself off after 10,000 probes.
RESET amq.join_filter_max_pass_rate;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1;
SET amq.join_filter_max_pass_rate = 1;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1;
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1;
RESET amq.join_filter_max_pass_rate;

-- The decision is made over windows of 10,000 probes, not once: a switched-off
-- probe passes 250,000 rows on unprobed, then probes another window. Here the
-- fact table is stored in key order and only its first 30,000 rows match, so
-- the first window switches the filter off and the window after the stretch
-- switches it on again for the rest of the scan.
CREATE TABLE jf_ordered AS SELECT g AS id FROM generate_series(1, 300000) g;
CREATE TABLE jf_first AS SELECT g AS id FROM generate_series(1, 30000) g;
ANALYZE jf_ordered, jf_first;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_ordered o JOIN jf_first f ON o.id = f.id;
SELECT count(*) FROM jf_ordered o JOIN jf_first f ON o.id = f.id;
SET amq.join_filter = off;
SELECT count(*) FROM jf_ordered o JOIN jf_first f ON o.id = f.id;
SET amq.join_filter = on;

-- A build that ends with far more keys than planned (a function that claims
-- 10 rows returns 15,000) leaves its filter unused: the probe switches off
-- until the next rescan, and the builder says why.
CREATE FUNCTION pg_temp.jf_many() RETURNS SETOF int ROWS 10 LANGUAGE sql
  AS 'SELECT generate_series(1, 30000, 2)';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN pg_temp.jf_many() m(id) ON f.id = m.id;
SELECT count(*) FROM jf_fact f JOIN pg_temp.jf_many() m(id) ON f.id = m.id;
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN pg_temp.jf_many() m(id) ON f.id = m.id;
SET amq.join_filter = on;

-- A probe reads its key straight from the heap tuple, as heap_getattr does:
-- past NULLs and variable-width columns before it, and NULL keys. The filter
-- holds 10, 20, ..., 990 but not 0, so a key misread as 0 drops its row.
CREATE TABLE jf_nulls (note text, a int, k int);
INSERT INTO jf_nulls
  SELECT CASE WHEN g % 3 = 0 THEN NULL ELSE repeat('n', g % 7) END,
         CASE WHEN g % 7 = 0 THEN NULL ELSE g END,
         CASE WHEN g % 11 = 0 THEN NULL ELSE g % 1000 END
  FROM generate_series(1, 30000) g;
ANALYZE jf_nulls;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*), max(n.note), max(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SELECT count(*), max(n.note), max(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SET amq.join_filter = off;
SELECT count(*), max(n.note), max(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SET amq.join_filter = on;
-- A table whose rows predate a column added with a default (the key, here
-- 10): PostgreSQL projects its scan, and the probe, sifting the scan's pages,
-- reads the key of the table's tuples as heap_getattr does, default included.
CREATE TABLE jf_evolved (note text, a int);
INSERT INTO jf_evolved SELECT 'n' || g, g FROM generate_series(1, 4000) g;
ALTER TABLE jf_evolved ADD COLUMN k int DEFAULT 10;
INSERT INTO jf_evolved SELECT NULL, g, g % 1000 FROM generate_series(1, 20000) g;
ANALYZE jf_evolved;
SELECT count(*), max(e.note) FROM jf_evolved e JOIN jf_dim1 d ON e.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SET amq.join_filter = off;
SELECT count(*), max(e.note) FROM jf_evolved e JOIN jf_dim1 d ON e.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SET amq.join_filter = on;

-- A build side beyond the memory cap gets no filter.
CREATE TABLE jf_big AS SELECT g AS id FROM generate_series(1, 100000) g;
ANALYZE jf_big;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_big a JOIN jf_big b ON a.id = b.id;
SET amq.join_filter_max_memory = '64kB';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_big a JOIN jf_big b ON a.id = b.id;
RESET amq.join_filter_max_memory;
-- Nor is a filter larger than the hash join's own memory limit (work_mem
-- times hash_mem_multiplier).
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_big a JOIN jf_big b ON a.id = b.id;
RESET work_mem;
RESET hash_mem_multiplier;

-- Rescans: a hash join under a nested loop rebuilds its table (and filter)
-- when its inner side depends on the outer row.
CREATE TABLE jf_outer (k int);
INSERT INTO jf_outer SELECT generate_series(1, 5);
ANALYZE jf_outer;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN (SELECT * FROM jf_dim1 d WHERE d.d1 % 5 = o.k OFFSET 0) d ON f.d1 = d.d1)
FROM jf_outer o;
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN (SELECT * FROM jf_dim1 d WHERE d.d1 % 5 = o.k OFFSET 0) d ON f.d1 = d.d1)
FROM jf_outer o;
SET amq.join_filter = off;
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN (SELECT * FROM jf_dim1 d WHERE d.d1 % 5 = o.k OFFSET 0) d ON f.d1 = d.d1)
FROM jf_outer o;
SET amq.join_filter = on;
-- The same under a nested loop (LATERAL): each outer row rescans the hash
-- join with a new inner side.
EXPLAIN (COSTS OFF)
SELECT o.k, s.n FROM jf_outer o CROSS JOIN LATERAL
  (SELECT count(*) AS n FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.d1 % 5 = o.k - 1) s;
SELECT o.k, s.n FROM jf_outer o CROSS JOIN LATERAL
  (SELECT count(*) AS n FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.d1 % 5 = o.k - 1) s;
SET amq.join_filter = off;
SELECT o.k, s.n FROM jf_outer o CROSS JOIN LATERAL
  (SELECT count(*) AS n FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.d1 % 5 = o.k - 1) s;
SET amq.join_filter = on;
-- When only the outer side depends on the outer row, the hash join keeps its
-- table on rescan, and its filter with it (built once, used in every loop).
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA' AND f.id % 7 = o.k)
FROM jf_outer o;
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA' AND f.id % 7 = o.k)
FROM jf_outer o;
SET amq.join_filter = off;
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA' AND f.id % 7 = o.k)
FROM jf_outer o;
SET amq.join_filter = on;

-- Cursors: rows come out in the same order with the filter on and off, a
-- cursor is fetched in pieces (the filter is built before the first outer
-- row is probed, whenever that happens), scrolled backwards (the hash join
-- then sits under a Materialize) and held past its transaction.
BEGIN;
DECLARE jf_on CURSOR FOR
SELECT f.id FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
FETCH 3 FROM jf_on;
FETCH 3 FROM jf_on;
SET LOCAL amq.join_filter = off;
DECLARE jf_off CURSOR FOR
SELECT f.id FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
FETCH 6 FROM jf_off;
COMMIT;
BEGIN;
DECLARE jf_scroll SCROLL CURSOR FOR
SELECT f.id, d.region FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
FETCH ABSOLUTE 1990 FROM jf_scroll;
FETCH 3 FROM jf_scroll;
FETCH BACKWARD 4 FROM jf_scroll;
FETCH ABSOLUTE 2 FROM jf_scroll;
MOVE LAST IN jf_scroll;
FETCH RELATIVE 0 FROM jf_scroll;
COMMIT;
BEGIN;
DECLARE jf_held CURSOR WITH HOLD FOR
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
COMMIT;
FETCH ALL FROM jf_held;
CLOSE jf_held;

-- Prepared statements: a generic plan keeps its filter and is right for
-- every parameter; a custom plan too.
SET plan_cache_mode = force_generic_plan;
PREPARE jf_prep(text) AS
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = $1;
EXPLAIN (COSTS OFF) EXECUTE jf_prep('ASIA');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE jf_prep('ASIA');
EXECUTE jf_prep('ASIA');
EXECUTE jf_prep('EUROPE');
EXECUTE jf_prep('nowhere');
SET amq.join_filter = off;
EXECUTE jf_prep('ASIA');
EXECUTE jf_prep('EUROPE');
SET amq.join_filter = on;
RESET plan_cache_mode;
DEALLOCATE jf_prep;

-- LIMIT stops the join early; the rows are those of the plain plan.
SELECT f.id, d.d1 FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA' LIMIT 4;
SET amq.join_filter = off;
SELECT f.id, d.d1 FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA' LIMIT 4;
SET amq.join_filter = on;

-- Parallel Hash joins: every participant adds its share of the inner rows to
-- one filter in shared memory (the builder is parallel-aware), and a probe
-- uses it only once the join's build barrier says the whole table is built.
-- A hash join under a Gather that is not parallel-aware builds its whole
-- table, and filter, in each participant.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
-- A multi-batch Parallel Hash join: the outer rows are partitioned into
-- batches after the build, through the probe.
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(b.id) FROM jf_fact f JOIN jf_big b ON f.id = b.id WHERE b.id <= 5000;
SELECT count(*), sum(b.id) FROM jf_fact f JOIN jf_big b ON f.id = b.id WHERE b.id <= 5000;
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*), sum(b.id) FROM jf_fact f JOIN jf_big b ON f.id = b.id WHERE b.id <= 5000;
SET amq.join_filter = on;
-- A join that lets 70% of its outer rows through gets a filter only when it is
-- expected to batch. With 4MB each, one backend's hash table batches (a
-- filter), while a Parallel Hash table may use the memory of all three
-- participants and fits (none).
CREATE TABLE jf_pfact AS SELECT 1 + g % 200000 AS id FROM generate_series(1, 400000) g;
CREATE TABLE jf_pdim AS SELECT g AS id, repeat('x', 20) AS pad FROM generate_series(1, 140000) g;
ANALYZE jf_pfact, jf_pdim;
SET work_mem = '4MB';
EXPLAIN (COSTS OFF)
SELECT count(*), max(d.pad) FROM jf_pfact f JOIN jf_pdim d ON f.id = d.id;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT count(*), max(d.pad) FROM jf_pfact f JOIN jf_pdim d ON f.id = d.id;
SET max_parallel_workers_per_gather = 2;
-- A Parallel Hash join's filter may take what its table may: the memory of
-- every participant. At 64kB each, a filter for 60,000 inner keys (75 kB
-- sized for their count) exceeds one backend's share: the serial join gets
-- none, while the Parallel Hash join of three participants gets one.
CREATE TABLE jf_pkeys AS SELECT g * 3 AS id FROM generate_series(1, 60000) g;
ANALYZE jf_pkeys;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.id) FROM jf_pfact f JOIN jf_pkeys k ON f.id = k.id;
SELECT count(*), sum(f.id) FROM jf_pfact f JOIN jf_pkeys k ON f.id = k.id;
SET amq.join_filter = off;
SELECT count(*), sum(f.id) FROM jf_pfact f JOIN jf_pkeys k ON f.id = k.id;
SET amq.join_filter = on;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.id) FROM jf_pfact f JOIN jf_pkeys k ON f.id = k.id;
SET max_parallel_workers_per_gather = 2;
RESET work_mem;
RESET hash_mem_multiplier;
-- A Gather rescanned for every outer row: the shared filter is emptied with
-- the rest of the parallel state and built again each time.
EXPLAIN (COSTS OFF)
SELECT o.k, (SELECT count(*) FROM (SELECT f.id FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.region = 'ASIA' OFFSET 0) s WHERE s.id % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SELECT o.k, (SELECT count(*) FROM (SELECT f.id FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.region = 'ASIA' OFFSET 0) s WHERE s.id % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SET amq.join_filter = off;
SELECT o.k, (SELECT count(*) FROM (SELECT f.id FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.region = 'ASIA' OFFSET 0) s WHERE s.id % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SET amq.join_filter = on;
-- EXPLAIN ANALYZE counts the rows of every participant: all 20,000 fact rows
-- are probed once, and all 100 keys are added, however the participants
-- shared the work (the lines that show how they shared it are left out). The
-- filter is sized for the whole inner side, not one participant's share.
CREATE FUNCTION pg_temp.jf_filter_lines(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ '(Bloom Filter|Rows Probed|Ready|Switched Off|Keys Added|Filter \d+ Memory|Hash Join)' THEN
      RETURN NEXT regexp_replace(btrim(line), '(->  | \(actual.*)', '', 'g');
    END IF;
  END LOOP;
END $$;
SELECT * FROM pg_temp.jf_filter_lines($$
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA'$$);
SET parallel_leader_participation = off;
SELECT * FROM pg_temp.jf_filter_lines($$
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA'$$);
RESET parallel_leader_participation;
-- Without parallel mode (a cursor), the same plan builds a private filter.
BEGIN;
DECLARE jf_par CURSOR FOR
SELECT count(*), sum(b.id) FROM jf_fact f JOIN jf_big b ON f.id = b.id WHERE b.id <= 5000;
FETCH ALL FROM jf_par;
COMMIT;
SET enable_parallel_hash = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
RESET enable_parallel_hash;
RESET max_parallel_workers_per_gather;

-- The outer side of a hash join expected to batch is narrowed to the columns
-- the join needs, so its scan projects. The probe sifts the scan's pages: it
-- reads the key from its table column (the 4th, behind a dropped one, though
-- the narrowed row has it 2nd), and the scan projects only the rows it keeps,
-- system and whole-row columns too.
CREATE TABLE jf_wide (a int, gone int, pad text, k int, c int);
ALTER TABLE jf_wide DROP COLUMN gone;
INSERT INTO jf_wide SELECT g, repeat('p', g % 40), CASE WHEN g % 11 = 0 THEN NULL ELSE g % 5000 END, g % 7
FROM generate_series(1, 30000) g;
CREATE TABLE jf_wdim AS SELECT g AS k, g % 9 = 0 AS flag FROM generate_series(0, 4999) g;
ANALYZE jf_wide, jf_wdim;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SELECT * FROM pg_temp.jf_filter_lines($$
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag$$);
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SELECT count(*), sum(w.c), max(w.ctid::text), sum(length(w::text))
FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SET amq.join_filter = off;
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SELECT count(*), sum(w.c), max(w.ctid::text), sum(length(w::text))
FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SET amq.join_filter = on;
RESET work_mem;
RESET hash_mem_multiplier;
RESET max_parallel_workers_per_gather;

-- A probe right above a sequential scan sifts the scan's pages: on the first
-- row of a page it tests the rest of the page and takes the rows its filter
-- rules out from the scan's list of visible tuples, so that the scan returns
-- only 2,116 of the 20,000 rows. It removes the same 18,000 rows as row by
-- row.
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
-- A scan whose qual calls a volatile function is not sifted: the qual runs
-- for all 20,000 rows, and the probe above the scan removes the same rows.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
WHERE d.region = 'ASIA' AND f.id + random() > 0;
-- Nor is one whose qual passes a column to a function that may raise an
-- error (is not leakproof): a row the filter drops (d1 = 7) still meets the
-- qual, and the query fails as it does with the filter off.
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
WHERE d.region = 'ASIA' AND 1 / (f.d1 - 7) > -2;
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
WHERE d.region = 'ASIA' AND 1 / (f.d1 - 7) > -2;
SET amq.join_filter = on;
-- A qual of leakproof comparisons (d2 < 50) runs only for the rows the sift
-- keeps: it removes 15,131 rows, not the 18,000 it would of all 20,000.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
WHERE d.region = 'ASIA' AND f.d2 < 50;
-- Keys hashed by a function, stored out of line (TOAST): sifting reads them
-- from the page's visible tuples only, and detoasts each in memory it resets
-- per row. 40 of the 800 rows match; the scan returns 47.
CREATE TABLE jf_long (id int, k text);
ALTER TABLE jf_long ALTER COLUMN k SET STORAGE EXTERNAL;
INSERT INTO jf_long SELECT g, (SELECT string_agg(md5(g::text || ':' || i), '')
  FROM generate_series(1, 120) i) FROM generate_series(1, 800) g;
CREATE TABLE jf_long_dim AS SELECT k FROM jf_long WHERE id % 20 = 0;
ANALYZE jf_long, jf_long_dim;
SELECT pg_relation_size(reltoastrelid) > 800 * 3000 AS toasted FROM pg_class
WHERE relname = 'jf_long';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT count(*), sum(l.id) FROM jf_long l JOIN jf_long_dim d ON l.k = d.k;
SELECT count(*), sum(l.id) FROM jf_long l JOIN jf_long_dim d ON l.k = d.k;
SET amq.join_filter = off;
SELECT count(*), sum(l.id) FROM jf_long l JOIN jf_long_dim d ON l.k = d.k;
SET amq.join_filter = on;
-- The same results as with the filter off for:
-- NULL keys, keys past NULLs and variable-width columns, a default from a
-- column added later, a narrowed scan, a scan qual that keeps few rows of
-- each page, and a composite key.
SELECT count(*), max(n.note), max(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SELECT count(*), max(e.note) FROM jf_evolved e JOIN jf_dim1 d ON e.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
RESET work_mem;
RESET hash_mem_multiplier;
SELECT count(*), sum(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND n.a % 50 = 0;
SELECT count(*) FROM jf_fact f JOIN jf_pairs p ON f.d1 = p.d1 AND f.d2 = p.d2;
-- Dead tuples on the pages (deleted, not yet vacuumed) are not among the
-- visible tuples sifted.
CREATE TABLE jf_dead AS SELECT * FROM jf_fact;
DELETE FROM jf_dead WHERE id % 3 = 0;
SELECT count(*), sum(f.id) FROM jf_dead f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
-- A cursor that stops mid-page while its own transaction updates rows on
-- that page (new versions, some on new line pointers) and adds more: the
-- cursor still sees its snapshot's rows.
CREATE FUNCTION pg_temp.jf_cursor_sum() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  r record;
  n int := 0;
  total bigint := 0;
BEGIN
  OPEN c FOR EXECUTE 'SELECT f.id FROM jf_dead f JOIN jf_dim1 d ON f.d1 = d.d1 '
                     'WHERE d.region = ''ASIA''';
  FOR i IN 1..5 LOOP
    FETCH c INTO r;
    n := n + 1;
    total := total + r.id;
  END LOOP;
  UPDATE jf_dead SET d1 = 10 WHERE id < 200;
  INSERT INTO jf_dead SELECT g, 10, 10, 'new' FROM generate_series(1, 500) g;
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    n := n + 1;
    total := total + r.id;
  END LOOP;
  CLOSE c;
  RETURN n || ' rows, ids summing to ' || total;
END $$;
BEGIN;
SELECT pg_temp.jf_cursor_sum();
ROLLBACK;
-- Rescanned for each outer row by a nested loop: each rescan sifts again
-- with the rebuilt filter, also on a table of one page, which the scan reads
-- again into the same buffer.
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.region = 'ASIA' AND d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
CREATE TABLE jf_onepage AS SELECT g AS d1 FROM generate_series(0, 99) g;
ANALYZE jf_onepage;
EXPLAIN (COSTS OFF)
SELECT o.k, (SELECT count(*) FROM jf_onepage f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SELECT o.k, (SELECT count(*) FROM jf_onepage f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
-- Each loop sifts its one page again, with that loop's filter: the scan
-- returns 15 of its 100 rows a loop (on average over the 3 loops).
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT o.k, (SELECT count(*) FROM jf_onepage f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SET amq.join_filter = off;
SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
SELECT count(*), max(n.note), max(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SELECT count(*), max(e.note) FROM jf_evolved e JOIN jf_dim1 d ON e.k = d.d1
WHERE d.region = 'ASIA' AND d.d1 <> 0;
SELECT count(*), sum(w.c), max(w.pad) FROM jf_wide w JOIN jf_wdim d ON w.k = d.k WHERE d.flag;
SELECT count(*), sum(n.a) FROM jf_nulls n JOIN jf_dim1 d ON n.k = d.d1
WHERE d.region = 'ASIA' AND n.a % 50 = 0;
SELECT count(*) FROM jf_fact f JOIN jf_pairs p ON f.d1 = p.d1 AND f.d2 = p.d2;
SELECT count(*), sum(f.id) FROM jf_dead f JOIN jf_dim1 d ON f.d1 = d.d1 WHERE d.region = 'ASIA';
BEGIN;
SELECT pg_temp.jf_cursor_sum();
ROLLBACK;
SELECT o.k, (SELECT count(*) FROM jf_fact f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.region = 'ASIA' AND d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SELECT o.k, (SELECT count(*) FROM jf_onepage f JOIN jf_dim1 d ON f.d1 = d.d1
  WHERE d.d1 % 7 = o.k) FROM (VALUES (1), (2), (3)) o(k);
SET amq.join_filter = on;
RESET max_parallel_workers_per_gather;

-- A partitioned outer table: the key reaches every partition's scan through
-- the Append, and each partition gets a probe of the one filter.
CREATE TABLE jf_parts (id int, k int, pad text) PARTITION BY RANGE (id);
CREATE TABLE jf_parts1 PARTITION OF jf_parts FOR VALUES FROM (0) TO (8000);
CREATE TABLE jf_parts2 PARTITION OF jf_parts FOR VALUES FROM (8000) TO (16000);
CREATE TABLE jf_parts3 PARTITION OF jf_parts FOR VALUES FROM (16000) TO (30000);
INSERT INTO jf_parts SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 1000 END, 'p' || g
FROM generate_series(0, 19999) g;
ANALYZE jf_parts;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
SELECT * FROM pg_temp.jf_filter_lines($$
SELECT count(*) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA'$$);
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
SET amq.join_filter = off;
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
SET amq.join_filter = on;
-- Partitions pruned at run time have no probe to run; a generic plan.
PREPARE jf_pruned(int) AS
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1
WHERE d.region = 'ASIA' AND p.id >= $1;
SET plan_cache_mode = force_generic_plan;
SELECT * FROM pg_temp.jf_filter_lines('EXECUTE jf_pruned(9000)');
EXECUTE jf_pruned(9000);
SET amq.join_filter = off;
EXECUTE jf_pruned(9000);
SET amq.join_filter = on;
RESET plan_cache_mode;
DEALLOCATE jf_pruned;
-- The branches of a UNION ALL, one of whose scans computes the key: its
-- probe reads that computed column.
SET amq.join_filter_max_pass_rate = 1;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM (SELECT id, k FROM jf_parts1 UNION ALL SELECT id, k + 0 FROM jf_parts2
  UNION ALL SELECT id, d1 FROM jf_fact) u JOIN jf_dim1 d ON u.k = d.d1 WHERE d.region = 'ASIA';
SELECT count(*), sum(u.id) FROM (SELECT id, k FROM jf_parts1 UNION ALL SELECT id, k + 0 FROM jf_parts2
  UNION ALL SELECT id, d1 FROM jf_fact) u JOIN jf_dim1 d ON u.k = d.d1 WHERE d.region = 'ASIA';
SET amq.join_filter = off;
SELECT count(*), sum(u.id) FROM (SELECT id, k FROM jf_parts1 UNION ALL SELECT id, k + 0 FROM jf_parts2
  UNION ALL SELECT id, d1 FROM jf_fact) u JOIN jf_dim1 d ON u.k = d.d1 WHERE d.region = 'ASIA';
SET amq.join_filter = on;
-- The probes of one filter share their judge: over 40 partitions of about
-- 500 rows each, a filter that lets every row through is probed for one
-- window of 10,000 rows in all, spread over the first partitions; the probe
-- that ends it and all later ones pass their rows unprobed (the next window
-- would come after 250,000 rows).
CREATE TABLE jf_small_parts (id int, k int) PARTITION BY HASH (id);
DO $$
BEGIN
  FOR i IN 0..39 LOOP
    EXECUTE format('CREATE TABLE jf_small_parts%s PARTITION OF jf_small_parts
      FOR VALUES WITH (MODULUS 40, REMAINDER %s)', i, i);
  END LOOP;
END $$;
INSERT INTO jf_small_parts SELECT g, g % 1000 FROM generate_series(1, 20000) g;
ANALYZE jf_small_parts;
CREATE FUNCTION pg_temp.jf_probe_totals(query text,
  OUT probes int, OUT probed bigint, OUT removed bigint, OUT switched_off int)
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  probes := 0; probed := 0; removed := 0; switched_off := 0;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ 'Applies Bloom Filter' THEN probes := probes + 1; END IF;
    IF line ~ 'Rows Probed: ' THEN
      probed := probed + substring(line FROM 'Rows Probed: (\d+)')::bigint;
    END IF;
    IF line ~ 'Rows Removed by Bloom Filter: ' THEN
      removed := removed + substring(line FROM 'Rows Removed by Bloom Filter: (\d+)')::bigint;
    END IF;
    IF line ~ 'Switched Off: true' THEN switched_off := switched_off + 1; END IF;
  END LOOP;
END $$;
SELECT * FROM pg_temp.jf_probe_totals($$
SELECT count(*) FROM jf_small_parts p JOIN jf_dim1 d ON p.k = d.d1$$);
RESET amq.join_filter_max_pass_rate;
-- A selective filter over the same partitions removes the same rows as one
-- probe would, and stays on.
SELECT * FROM pg_temp.jf_probe_totals($$
SELECT count(*) FROM jf_small_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA'$$);
-- Sifting in each partition, and a Parallel Append.
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
-- Sifting takes no pin of its own: a cursor that has read all 40
-- partitions, its query still open, holds none of their pages pinned.
CREATE EXTENSION pg_buffercache;
CREATE FUNCTION pg_temp.jf_count_lines(query text, pattern text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  n int := 0;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF line ~ pattern THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $$;
BEGIN;
SELECT pg_temp.jf_count_lines($$DECLARE jf_cur CURSOR FOR
SELECT p.id FROM jf_small_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA'$$,
  'Applies Bloom Filter 1: p_\d+\.k') AS probes;
DECLARE jf_cur CURSOR FOR
SELECT p.id FROM jf_small_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
MOVE FORWARD ALL IN jf_cur;
SELECT count(*) AS pinned_pages FROM pg_buffercache b JOIN pg_class c
  ON b.relfilenode = pg_relation_filenode(c.oid)
WHERE c.relname LIKE 'jf_small_parts%' AND b.pinning_backends > 0;
COMMIT;
DROP EXTENSION pg_buffercache;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_parallel_hash = off;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
SELECT count(*), sum(p.id) FROM jf_parts p JOIN jf_dim1 d ON p.k = d.d1 WHERE d.region = 'ASIA';
RESET enable_parallel_hash;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

DROP TABLE jf_fact, jf_dim1, jf_dim2, jf_names, jf_outer, jf_big, jf_pairs, jf_ints, jf_intdim,
  jf_ordered, jf_first, jf_pfact, jf_pdim, jf_nulls, jf_evolved, jf_wide, jf_wdim, jf_dead,
  jf_onepage, jf_parts, jf_small_parts, jf_pkeys;
DROP COLLATION jf_ci;
