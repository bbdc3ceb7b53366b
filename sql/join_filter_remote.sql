-- Join filters shipped into postgres_fdw scans, over loopback servers to this
-- same cluster (tests/multi runs the same across real shards): the filter in
-- each foreign partition's Remote SQL, synchronous and asynchronous; the rows
-- each scan fetched; answers with the feature on and off; a rescan that
-- sends a new filter; the scans that get none (a server without extensions
-- 'amq', a filter over the size cap, left and anti joins); a remote column
-- of another type, which fails the query when key values (an exact set, a
-- range) ship and whose shard passes every row when they do not; and a
-- database without amq behind extensions 'amq', whose error fails the query.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
CREATE EXTENSION postgres_fdw;
SELECT split_part(current_setting('unix_socket_directories'), ',', 1) AS sockdir,
       current_setting('port') AS port, current_database() AS db \gset
-- A database without amq, with the table the rloop_noext server reads.
CREATE DATABASE amq_remote_noext;
\c amq_remote_noext
CREATE SCHEMA remote;
CREATE TABLE remote.fact_a (id int, k bigint);
INSERT INTO remote.fact_a SELECT g, g % 5000 FROM generate_series(1, 10000) g;
\c :db
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
CREATE SERVER rloop FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host :'sockdir', port :'port', dbname :'db', extensions 'amq');
CREATE SERVER rloop_plain FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host :'sockdir', port :'port', dbname :'db');
CREATE SERVER rloop_noext FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host :'sockdir', port :'port', dbname 'amq_remote_noext', extensions 'amq');
CREATE USER MAPPING FOR CURRENT_USER SERVER rloop;
CREATE USER MAPPING FOR CURRENT_USER SERVER rloop_plain;
CREATE USER MAPPING FOR CURRENT_USER SERVER rloop_noext;

-- The "shards": two tables of 10,000 rows, keys 0..4999 twice each.
CREATE SCHEMA remote;
CREATE TABLE remote.fact_a (id int, k bigint, n numeric, t text, k4 int);
CREATE TABLE remote.fact_b (LIKE remote.fact_a);
INSERT INTO remote.fact_a SELECT g, g % 5000, g % 5000, 'k' || g % 5000, g % 5000
  FROM generate_series(1, 10000) g;
INSERT INTO remote.fact_b SELECT g, g % 5000, g % 5000, 'k' || g % 5000, g % 5000
  FROM generate_series(10001, 20000) g;
INSERT INTO remote.fact_b VALUES (20001, NULL, NULL, NULL, NULL);
CREATE TABLE remote.fact_text (id int, k text);
INSERT INTO remote.fact_text SELECT g, (g % 5000)::text FROM generate_series(1, 10000) g;
ANALYZE remote.fact_a, remote.fact_b, remote.fact_text;

CREATE TABLE fact (id int, k bigint, n numeric, t text, k4 int) PARTITION BY RANGE (id);
CREATE FOREIGN TABLE fact_1 PARTITION OF fact FOR VALUES FROM (1) TO (10001)
  SERVER rloop OPTIONS (schema_name 'remote', table_name 'fact_a');
CREATE FOREIGN TABLE fact_2 PARTITION OF fact FOR VALUES FROM (10001) TO (30000)
  SERVER rloop OPTIONS (schema_name 'remote', table_name 'fact_b', async_capable 'true');
CREATE FOREIGN TABLE fact_plain (id int, k bigint)
  SERVER rloop_plain OPTIONS (schema_name 'remote', table_name 'fact_a');
CREATE FOREIGN TABLE fact_noext (id int, k bigint)
  SERVER rloop_noext OPTIONS (schema_name 'remote', table_name 'fact_a');
-- bigint here, text on the "shard": its values read as bigint, but the shard
-- would hash them as text.
CREATE FOREIGN TABLE fact_text (id int, k bigint)
  SERVER rloop OPTIONS (schema_name 'remote', table_name 'fact_text');
ANALYZE fact, fact_plain, fact_text;

-- 100 keys of the 5,000: every key matches 2 rows per partition.
CREATE TABLE dim AS SELECT g * 10 AS k, 'k' || g * 10 AS t FROM generate_series(1, 100) g;
CREATE TABLE dim8 AS SELECT (g * 7)::bigint AS k FROM generate_series(1, 50) g;
ANALYZE dim, dim8;

-- The lines of EXPLAIN (options) query that match pattern, trimmed.
CREATE FUNCTION pg_temp.plan_lines(options text, pattern text, query text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (' || options || ') ' || query LOOP
		IF line ~ pattern THEN
			RETURN NEXT trim(line);
		END IF;
	END LOOP;
END $$;
-- The Remote SQL of every foreign scan and what each builder ships.
CREATE FUNCTION pg_temp.shipped(query text) RETURNS SETOF text LANGUAGE sql AS $$
	SELECT pg_temp.plan_lines('VERBOSE, COSTS OFF', '(Remote SQL|Ships Bloom Filter|Sent To):', query)
$$;

-- Per foreign scan: its relation, the rows it fetched, and whether that is
-- at most the matching rows plus 1.5 x 1% of the others (the filter's rate).
-- 18 and later print Actual Rows with two decimals.
CREATE FUNCTION pg_temp.fetched(query text, matching int, total int)
RETURNS TABLE (scan text, rows_fetched int, within_fpr boolean) LANGUAGE plpgsql AS $$
DECLARE
	plan jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO plan;
	RETURN QUERY
	SELECT s ->> 'Relation Name', (s ->> 'Actual Rows')::numeric::int,
	       (s ->> 'Actual Rows')::numeric::int <= matching + 1.5 * 0.01 * (total - matching)
	FROM jsonb_path_query(plan, 'strict $.**?(@."Node Type" == "Foreign Scan")') s
	ORDER BY 1;
END $$;

-- Inner join over a synchronous and an asynchronous foreign partition.
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.fetched('SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k', 200, 10000);
SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k;
SET amq.join_filter_remote = off;
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.fetched('SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k', 200, 10000);
RESET amq.join_filter_remote;

-- Key types: int4 behind int8, numeric, text (compared under COLLATE "C").
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f JOIN dim8 d ON f.k4 = d.k');
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f JOIN dim d ON f.n = d.k::numeric');
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f JOIN dim d ON f.t = d.t');

-- A star join: both dimensions' filters reach the fact scans.
SELECT * FROM pg_temp.shipped(
  'SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k JOIN dim8 e ON f.k4 = e.k');

-- Joins that keep unmatched outer rows ship nothing.
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact f LEFT JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.shipped(
  'SELECT count(*) FROM fact f WHERE NOT EXISTS (SELECT FROM dim d WHERE d.k = f.k)');

-- A server without extensions 'amq' gets none.
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact_plain f JOIN dim d ON f.k = d.k');
-- A remote text column behind a local bigint: the exact set and the range
-- compare the bare column (what lets an index serve them), which no
-- operator compares with bigint there: the remote parse fails, loudly.
\set VERBOSITY terse
SELECT count(*) FROM fact_text f JOIN dim d ON f.k = d.k;
\set VERBOSITY default
-- With no key values, the Bloom condition ships (nothing asks the remote
-- server), and its type check passes every row.
SET amq.join_filter_remote_max_set_keys = 0;
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact_text f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.fetched('SELECT count(*) FROM fact_text f JOIN dim d ON f.k = d.k', 200, 10000);
SELECT count(*) FROM fact_text f JOIN dim d ON f.k = d.k;
RESET amq.join_filter_remote_max_set_keys;
-- A remote timestamptz behind a local text: a type that takes no collation,
-- so the probe's text cast must parse there too; every row passes.
CREATE TABLE remote.fact_tz AS
  SELECT g AS id, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour' AS k
  FROM generate_series(1, 1000) g;
CREATE FOREIGN TABLE fact_tz (id int, k text)
  SERVER rloop OPTIONS (schema_name 'remote', table_name 'fact_tz');
CREATE TABLE dim_tz AS
  SELECT to_char(timestamp '2024-01-01' + g * 10 * interval '1 hour', 'YYYY-MM-DD HH24:MI:SS') || '+00'
         AS k
  FROM generate_series(1, 50) g;
ANALYZE dim_tz;
-- No operator compares a timestamptz with the exact set's text there: the
-- remote parse fails, loudly ...
\set VERBOSITY terse
SELECT count(*) FROM fact_tz f JOIN dim_tz d ON f.k = d.k;
\set VERBOSITY default
-- ... and without key values the Bloom condition passes every row.
SET amq.join_filter_remote_max_set_keys = 0;
SELECT * FROM pg_temp.shipped('SELECT count(*) FROM fact_tz f JOIN dim_tz d ON f.k = d.k');
SELECT * FROM pg_temp.fetched('SELECT count(*) FROM fact_tz f JOIN dim_tz d ON f.k = d.k', 50, 1000);
SELECT count(*) FROM fact_tz f JOIN dim_tz d ON f.k = d.k;
RESET amq.join_filter_remote_max_set_keys;
-- A database without amq behind extensions 'amq': its own error, as
-- postgres_fdw gives for any extension a server declares but lacks.
\set VERBOSITY terse
SELECT count(*) FROM fact_noext f JOIN dim d ON f.k = d.k;
\set VERBOSITY default
SET amq.join_filter_remote = off;
SELECT count(*) FROM fact_noext f JOIN dim d ON f.k = d.k;
RESET amq.join_filter_remote;

-- A filter over amq.join_filter_remote_max_memory is not sent.
SET amq.join_filter_remote_max_memory = '1kB';
CREATE FUNCTION pg_temp.states(query text) RETURNS SETOF text LANGUAGE sql AS $$
	SELECT pg_temp.plan_lines('ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF',
	                          'Filter \d+ (State|Size|Keys Added):', query)
$$;
CREATE TABLE dim_big AS SELECT g AS k FROM generate_series(1, 4000, 2) g;
ANALYZE dim_big;
SELECT * FROM pg_temp.states('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k;
RESET amq.join_filter_remote_max_memory;
SELECT * FROM pg_temp.states('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
-- The filter sent has the lowest rate of 0.0001, 0.001 and 0.01 whose filter
-- of the build's rows fits amq.join_filter_remote_max_memory: the bytes of
-- bloom_agg(k, 0.0001) above, of bloom_agg(k, 0.001) within 5kB, of
-- bloom_agg(k) within 3kB.
SELECT length(bloom_agg(k, 0.0001)::bytea) AS "0.0001", length(bloom_agg(k, 0.001)::bytea) AS "0.001",
       length(bloom_agg(k)::bytea) AS "0.01"
FROM dim_big;
SET amq.join_filter_remote_max_memory = '5kB';
SELECT * FROM pg_temp.states('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
SET amq.join_filter_remote_max_memory = '3kB';
SELECT * FROM pg_temp.states('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
RESET amq.join_filter_remote_max_memory;
-- Nor one whose keys would take more than the join's own hash table may
-- while they are collected (work_mem times hash_mem_multiplier: 64kB holds
-- 512 keys at 128 bytes each), whatever amq.join_filter_remote_max_memory.
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SET amq.join_filter_remote_max_memory = '512000kB';
SELECT * FROM pg_temp.states('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k;
RESET work_mem;
RESET hash_mem_multiplier;
RESET amq.join_filter_remote_max_memory;

-- amq.join_filter_remote_filter = 'fuse': a binary fuse filter ships instead,
-- cast to amq's fuse type and probed by amq_join_filter_probe's fuse
-- overload: 16-bit fingerprints where the cap allows (the bytes of
-- fuse_agg(k, 0.0001)), 8-bit within 3kB (fuse_agg(k)). The scans fetch the
-- matching rows and about 0.0015% of the others; the answer is the same.
SET amq.join_filter_remote_filter = 'fuse';
SELECT * FROM pg_temp.plan_lines('VERBOSE, COSTS OFF', '(Remote SQL|Ships [A-Za-z ]+ \d+|Sent To):',
                                 'SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
SELECT length(fuse_agg(k, 0.0001)::bytea) AS "16-bit", length(fuse_agg(k)::bytea) AS "8-bit"
FROM dim_big;
CREATE FUNCTION pg_temp.sent(query text) RETURNS SETOF text LANGUAGE sql AS $$
	SELECT pg_temp.plan_lines('ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF',
	                          'Filter \d+ (Sent|Size):', query)
$$;
SELECT * FROM pg_temp.sent('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
SET amq.join_filter_remote_max_memory = '3kB';
SELECT * FROM pg_temp.sent('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
RESET amq.join_filter_remote_max_memory;
SELECT * FROM pg_temp.fetched('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k', 4000, 10000);
SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k;
-- Shards older than amq 0.6.0 have no fuse type: they get the Bloom filter.
SET amq.join_filter_remote_shard_version = '0.5.0';
SELECT * FROM pg_temp.sent('SELECT count(*) FROM fact f JOIN dim_big d ON f.k = d.k');
RESET amq.join_filter_remote_shard_version;
RESET amq.join_filter_remote_filter;

-- Answers with the feature on and off, rescans included: a subplan rebuilds
-- the hash table (and sends a new filter) for every outer row.
CREATE TABLE answers (query text, filter boolean, answer text);
CREATE FUNCTION pg_temp.answer(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE 'SELECT string_agg(r::text, '';'' ORDER BY r::text) FROM (' || query || ') r'
		INTO result;
	RETURN md5(coalesce(result, ''));
END $$;
CREATE TABLE queries (query text);
INSERT INTO queries VALUES
  ('SELECT f.id, d.k FROM fact f JOIN dim d ON f.k = d.k'),
  ('SELECT f.id FROM fact f WHERE f.k IN (SELECT k FROM dim8)'),
  ('SELECT f.id, d.k FROM fact f RIGHT JOIN dim d ON f.k = d.k + 3'),
  ('SELECT f.id, d.k FROM fact f LEFT JOIN dim d ON f.k = d.k'),
  ('SELECT f.id, d.k FROM fact f FULL JOIN dim d ON f.k = d.k'),
  ('SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT FROM dim d WHERE d.k = f.k)'),
  ('SELECT f.id FROM fact f JOIN dim d ON f.t = d.t'),
  ('SELECT f.id FROM fact f JOIN dim d ON f.n = d.k::numeric'),
  ('SELECT f.id FROM fact f JOIN dim8 d ON f.k4 = d.k'),
  ('SELECT f.id FROM fact f JOIN (SELECT * FROM dim WHERE false) d ON f.k = d.k'),
  ('SELECT g, (SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.k % 7 = g)
      FROM generate_series(0, 3) g'),
  ('SELECT f.id FROM fact f JOIN dim d ON f.k = d.k ORDER BY f.id LIMIT 7');
INSERT INTO answers SELECT query, true, pg_temp.answer(query) FROM queries;
SET amq.join_filter = off;
INSERT INTO answers SELECT query, false, pg_temp.answer(query) FROM queries;
RESET amq.join_filter;
SELECT count(*) AS queries, count(*) FILTER (WHERE a.answer = b.answer) AS same_answer
FROM answers a JOIN answers b USING (query) WHERE a.filter AND NOT b.filter;

-- A cursor read in pieces.
BEGIN;
DECLARE c CURSOR FOR SELECT f.id FROM fact f JOIN dim d ON f.k = d.k ORDER BY f.id;
FETCH 3 FROM c;
MOVE 390 IN c;
FETCH 10 FROM c;
COMMIT;

DROP SERVER rloop, rloop_plain, rloop_noext CASCADE;
DROP TABLE answers, queries, dim, dim8, dim_big, dim_tz;
DROP SCHEMA remote CASCADE;
DROP EXTENSION postgres_fdw;
DROP DATABASE amq_remote_noext WITH (FORCE);
