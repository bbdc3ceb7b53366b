-- amq_join_filter_probe, the probe a hash join ships into postgres_fdw
-- scans: bloom_contains until the filter stops paying at its call site. Over
-- windows of 10,000 rows it counts passes; a window where more than 90%
-- passed switches it off for 250,000 rows passed unprobed (true), each
-- further switch-off doubling the stretch. Then which probe ships
-- (amq.join_filter_remote_shard_version), and what a query hears from a
-- remote database whose amq is older than the probe.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
CREATE TABLE sp_probe_filter AS SELECT bloom_agg(k, 0.01) AS f FROM generate_series(1, 1000) k;

-- Every row a member for 20,000 rows, then 300,000 non-members: the first
-- window passes all and switches the probe off; the 250,000 rows after it
-- pass unprobed (members and non-members alike); then it probes again, and
-- the non-members pass at the fpr only. bloom_contains passes the 20,000
-- and the false positives.
CREATE TABLE sp_stream AS
SELECT i, CASE WHEN i <= 20000 THEN i % 1000 + 1 ELSE 1000000 + i END AS v
FROM generate_series(1, 320000) i;
SELECT count(*) FILTER (WHERE bloom_contains(f, v)) AS contains,
       count(*) FILTER (WHERE bloom_contains(f, v) AND i <= 20000) AS members,
       count(*) FILTER (WHERE bloom_contains(f, v) AND i > 260000) AS contains_after
FROM (SELECT * FROM sp_stream ORDER BY i) s, sp_probe_filter;
SELECT count(*) AS passed,
       count(*) FILTER (WHERE i <= 260000) = 260000 AS passed_all_first_260000,
       count(*) FILTER (WHERE i > 260000) AS passed_after
FROM (SELECT * FROM sp_stream ORDER BY i OFFSET 0) s, sp_probe_filter
WHERE amq_join_filter_probe(f, v);

-- A filter that pays (1% of the rows are members) is never switched off:
-- the same rows as bloom_contains, in any order.
CREATE TABLE sp_selective AS
SELECT i, CASE WHEN i % 100 = 0 THEN i % 1000 + 1 ELSE 1000000 + i END AS v
FROM generate_series(1, 100000) i;
SELECT (SELECT count(*) FROM sp_selective, sp_probe_filter WHERE amq_join_filter_probe(f, v)) =
       (SELECT count(*) FROM sp_selective, sp_probe_filter WHERE bloom_contains(f, v)) AS same_rows,
       (SELECT count(*) FROM sp_selective, sp_probe_filter
        WHERE i % 100 = 0 AND NOT amq_join_filter_probe(f, v)) AS false_negatives;

-- Each call site judges its own rows: in one query, the probe over the
-- all-member stream switches off and the one over the selective rows does
-- not.
SELECT (SELECT count(*) FROM (SELECT * FROM sp_stream ORDER BY i OFFSET 0) s, sp_probe_filter
        WHERE amq_join_filter_probe(f, v)) AS stream_passed,
       (SELECT count(*) FROM sp_selective, sp_probe_filter WHERE amq_join_filter_probe(f, v)) =
       (SELECT count(*) FROM sp_selective, sp_probe_filter WHERE bloom_contains(f, v))
           AS selective_same_rows;

-- NULL in, NULL out (STRICT); text and numbers as bloom_contains hashes
-- them; a value of another family and damaged bytes are bloom_contains's
-- errors, in the probe's name.
SELECT amq_join_filter_probe(f, NULL::bigint) IS NULL AS null_value,
       amq_join_filter_probe(NULL::bloom, 1) IS NULL AS null_filter,
       amq_join_filter_probe(f, 7::int2) AND amq_join_filter_probe(f, 7.0::numeric) AS numbers
FROM sp_probe_filter;
SELECT amq_join_filter_probe(bloom_agg(t), 'b') AS text_member
FROM (VALUES ('a'), ('b')) v(t);
SELECT amq_join_filter_probe(f, 'x'::text) FROM sp_probe_filter;
SELECT amq_join_filter_probe('\x00'::bytea::bloom, 1);
-- Its answers depend on the rows before it: VOLATILE, not for an index
-- (bloom_contains is what an index or a constraint uses).
CREATE TABLE sp_indexed (f bloom, k bigint);
DO $$
BEGIN
  CREATE INDEX ON sp_indexed (amq_join_filter_probe(f, k));
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE '%', SQLERRM;
END $$;
SELECT provolatile, proisstrict, proparallel FROM pg_proc
WHERE oid = 'amq_join_filter_probe(bloom, anycompatible)'::regprocedure;

-- amq.join_filter_remote_shard_version: an amq release, 0.1.0 to this one.
SHOW amq.join_filter_remote_shard_version;
SET amq.join_filter_remote_shard_version = '0.4.0';
SET amq.join_filter_remote_shard_version = '0.1.0';
SET amq.join_filter_remote_shard_version = '0.0.9';
SET amq.join_filter_remote_shard_version = '9.0.0';
SET amq.join_filter_remote_shard_version = '0.4';
SET amq.join_filter_remote_shard_version = ' 0.4.0';
SET amq.join_filter_remote_shard_version = '0.4.0x';
SET amq.join_filter_remote_shard_version = '0.1234.0';
RESET amq.join_filter_remote_shard_version;

-- Over a loopback server: the probe ships by default, and bloom_contains
-- under an older shard version; a database whose amq is still 0.4.0 fails
-- the query with the shard's error and a hint that names the version needed,
-- and answers once the coordinator is told its version.
CREATE EXTENSION postgres_fdw;
SELECT split_part(current_setting('unix_socket_directories'), ',', 1) AS sockdir,
       current_setting('port') AS port, current_database() AS db \gset
CREATE DATABASE amq_shard_040;
\c amq_shard_040
SET client_min_messages = warning;
CREATE EXTENSION amq VERSION '0.4.0';
RESET client_min_messages;
CREATE TABLE sp_fact (id int, k bigint);
INSERT INTO sp_fact SELECT g, g % 5000 FROM generate_series(1, 20000) g;
ANALYZE sp_fact;
\c :db
LOAD 'amq';
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
CREATE SERVER shard_040 FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host :'sockdir', port :'port', dbname 'amq_shard_040', extensions 'amq');
CREATE SERVER shard_now FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host :'sockdir', port :'port', dbname :'db', extensions 'amq');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard_040;
CREATE USER MAPPING FOR CURRENT_USER SERVER shard_now;
CREATE TABLE sp_fact (id int, k bigint);
INSERT INTO sp_fact SELECT g, g % 5000 FROM generate_series(1, 20000) g;
ANALYZE sp_fact;
CREATE FOREIGN TABLE sp_fact_now (id int, k bigint) SERVER shard_now OPTIONS (table_name 'sp_fact');
CREATE FOREIGN TABLE sp_fact_040 (id int, k bigint) SERVER shard_040 OPTIONS (table_name 'sp_fact');
ANALYZE sp_fact_now, sp_fact_040;
CREATE TABLE sp_dim AS SELECT g * 5 AS k FROM generate_series(0, 1999) g;
ANALYZE sp_dim;
-- Which probe each plan ships (2,000 keys: past the exact set's 1,000).
CREATE FUNCTION pg_temp.shipped(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
    IF line LIKE '%Remote SQL%' THEN
      RETURN substring(line FROM 'public\.(bloom_contains|amq_join_filter_probe)\(');
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
SELECT pg_temp.shipped('SELECT count(*) FROM sp_fact_now f JOIN sp_dim USING (k)') AS default_probe;
SET amq.join_filter_remote_shard_version = '0.4.0';
SELECT pg_temp.shipped('SELECT count(*) FROM sp_fact_now f JOIN sp_dim USING (k)') AS probe_for_040;
SELECT count(*) FROM sp_fact_040 f JOIN sp_dim USING (k);
RESET amq.join_filter_remote_shard_version;
DO $$
DECLARE
  state text;
  message text;
  hint text;
BEGIN
  PERFORM count(*) FROM sp_fact_040 f JOIN sp_dim USING (k);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RAISE NOTICE 'SQLSTATE %: %', state, message;
  RAISE NOTICE 'HINT: %', hint;
END $$;
-- The same join, on and off, through the current probe.
SELECT count(*) FROM sp_fact_now f JOIN sp_dim USING (k);
SET amq.join_filter_remote = off;
SELECT count(*) FROM sp_fact_now f JOIN sp_dim USING (k);
RESET amq.join_filter_remote;

DROP FOREIGN TABLE sp_fact_now, sp_fact_040;
DROP USER MAPPING FOR CURRENT_USER SERVER shard_now;
DROP USER MAPPING FOR CURRENT_USER SERVER shard_040;
DROP SERVER shard_now, shard_040;
DROP EXTENSION postgres_fdw;
DROP TABLE sp_fact, sp_dim, sp_indexed, sp_stream, sp_selective, sp_probe_filter;
DROP DATABASE amq_shard_040;
