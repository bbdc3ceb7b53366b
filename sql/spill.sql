-- Spilling past work_mem: bloom_agg and cuckoo_agg without a capacity (and
-- cuckoo_agg with one) keep about work_mem of hashes and write sorted runs to
-- temporary files past it (BufFile: temp_file_limit and log_temp_files
-- apply). The filter is the same bytes whatever work_mem, serial, grouped or
-- parallel, and no file is left after a finish, an error or a cancel. A
-- parallel worker hands its runs to the leader in files of the leader's
-- directory (base/pgsql_tmp/pgsql_tmp<pid>.2153868657.fileset), which the
-- leader removes as it merges them and, with whatever it never read, at the
-- end of its transaction or of a subtransaction that aborts.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

-- Every file and directory in the default tablespace's pgsql_tmp (which
-- pg_ls_tmpdir lists only the plain files of).
CREATE FUNCTION pg_temp.temp_files_left() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false)
$$;

CREATE TABLE spill_rows AS
SELECT i, i % 40000 AS g, md5(i::text) AS s FROM generate_series(1, 300000) i;
ANALYZE spill_rows;

-- Every layout that collects, in one statement.
CREATE VIEW spill_filters AS
SELECT bloom_agg(i, 0.01, NULL, 'blocked')::bytea AS blocked,
       bloom_agg(s, 0.001, NULL, 'classic')::bytea AS classic,
       bloom_agg(g, 0.01, NULL, 'counting')::bytea AS counting,
       bloom_agg(i, 0.01, NULL, 'scalable')::bytea AS scalable,
       cuckoo_agg(i, 0.1, NULL, 'b2')::bytea AS b2,
       cuckoo_agg(s, 0.01, NULL, 'b4')::bytea AS b4,
       cuckoo_agg(i, 0.001, NULL, 'b8')::bytea AS b8,
       cuckoo_agg(i, 0.01, NULL, 'semisorted')::bytea AS semisorted,
       cuckoo_agg(g, 0.01, 50000)::bytea AS cuckoo_capacity,
       bloom_agg(CASE WHEN i % 2 = 0 THEN i::text ELSE NULL END)::bytea AS half_null
FROM spill_rows;
CREATE VIEW spill_groups AS
SELECT md5(string_agg(f::text, ',' ORDER BY k)) AS groups
FROM (SELECT i % 4 AS k, bloom_agg(i) AS f FROM spill_rows GROUP BY 1) s;

SET max_parallel_workers_per_gather = 0;
SET work_mem = '1GB';
CREATE TABLE spill_in_memory AS SELECT * FROM spill_filters, spill_groups;

-- The least work_mem: every aggregate spills (temp_file_limit says so, by its
-- SQLSTATE: PostgreSQL 17 quotes the setting's name in the message).
SET work_mem = '64kB';
SET temp_file_limit = '64kB';
DO $$
BEGIN
	PERFORM length(bloom_agg(i)::bytea) FROM spill_rows;
EXCEPTION WHEN configuration_limit_exceeded THEN
	RAISE NOTICE 'temp_file_limit exceeded: %', SQLSTATE;
END $$;
RESET temp_file_limit;
SELECT pg_temp.temp_files_left();

CREATE TABLE spill_serial AS SELECT * FROM spill_filters, spill_groups;
SELECT m.blocked = s.blocked AS blocked, m.classic = s.classic AS classic,
       m.counting = s.counting AS counting, m.scalable = s.scalable AS scalable,
       m.b2 = s.b2 AS b2, m.b4 = s.b4 AS b4, m.b8 = s.b8 AS b8,
       m.semisorted = s.semisorted AS semisorted,
       m.cuckoo_capacity = s.cuckoo_capacity AS cuckoo_capacity,
       m.half_null = s.half_null AS half_null, m.groups = s.groups AS groups
FROM spill_in_memory m, spill_serial s;
SELECT pg_temp.temp_files_left();

-- What spilled, at DEBUG1.
SET client_min_messages = debug1;
SELECT length(bloom_agg(i)::bytea) FROM spill_rows WHERE i <= 100000;
RESET client_min_messages;

-- Parallel workers that spill, and a leader that spills what they send.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE FUNCTION pg_temp.workers(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
		IF line ~ 'Workers Launched' THEN
			RETURN NEXT btrim(line);
		END IF;
	END LOOP;
END $$;
SELECT pg_temp.workers('SELECT bloom_agg(i), cuckoo_agg(i) FROM spill_rows');
CREATE TABLE spill_parallel AS SELECT * FROM spill_filters, spill_groups;
SELECT m.blocked = p.blocked AS blocked, m.classic = p.classic AS classic,
       m.counting = p.counting AS counting, m.scalable = p.scalable AS scalable,
       m.b2 = p.b2 AS b2, m.b4 = p.b4 AS b4, m.b8 = p.b8 AS b8,
       m.semisorted = p.semisorted AS semisorted,
       m.cuckoo_capacity = p.cuckoo_capacity AS cuckoo_capacity,
       m.half_null = p.half_null AS half_null, m.groups = p.groups AS groups
FROM spill_in_memory m, spill_parallel p;
SELECT pg_temp.temp_files_left();
-- Each group's partial states hand their runs over; LIMIT 1 reads the first
-- group's, the rest are never read: removed at the end of the statement.
SELECT pg_temp.workers('SELECT i % 8, bloom_agg(i) FROM spill_rows GROUP BY 1 LIMIT 1');
SELECT i % 8 AS k, length(bloom_agg(i)::bytea) FROM spill_rows GROUP BY 1 ORDER BY 1 LIMIT 1;
SELECT pg_temp.temp_files_left();
-- An error in the leader after it took some groups' runs: the same, at the
-- end of the transaction, and of a subtransaction rolled back.
SELECT i % 8 AS k, length(bloom_agg(i)::bytea) / (i % 8 - 3) FROM spill_rows GROUP BY 1 ORDER BY 1;
SELECT pg_temp.temp_files_left();
BEGIN;
SAVEPOINT a;
SELECT i % 8 AS k, length(bloom_agg(i)::bytea) / (i % 8 - 3) FROM spill_rows GROUP BY 1 ORDER BY 1;
ROLLBACK TO a;
SELECT pg_temp.temp_files_left();
COMMIT;
SET max_parallel_workers_per_gather = 0;

-- An error in the middle of a spilling aggregate, a cancel, and an error
-- inside a subtransaction that is caught: no file stays.
SELECT length(bloom_agg(CASE WHEN i < 200000 THEN i ELSE 1 / (i - i) END)::bytea)
FROM spill_rows;
SELECT pg_temp.temp_files_left();
SET statement_timeout = '300ms';
SELECT length(bloom_agg(a.i::int8 * 1000 + b)::bytea)
FROM spill_rows a CROSS JOIN generate_series(1, 1000) b;
RESET statement_timeout;
SELECT pg_temp.temp_files_left();
DO $$
BEGIN
	PERFORM bloom_agg(CASE WHEN i < 200000 THEN i ELSE 1 / (i - i) END) FROM spill_rows;
EXCEPTION WHEN division_by_zero THEN
	RAISE NOTICE 'caught: %', SQLERRM;
END $$;
SELECT pg_temp.temp_files_left();
-- The same in a transaction that goes on, and one that commits.
BEGIN;
SAVEPOINT a;
SELECT length(bloom_agg(CASE WHEN i < 200000 THEN i ELSE 1 / (i - i) END)::bytea)
FROM spill_rows;
ROLLBACK TO a;
SELECT length(cuckoo_agg(i)::bytea) FROM spill_rows;
COMMIT;
SELECT pg_temp.temp_files_left();

DROP VIEW spill_filters, spill_groups;
DROP TABLE spill_rows, spill_in_memory, spill_serial, spill_parallel;
RESET work_mem;
