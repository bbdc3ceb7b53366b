-- amq is a trusted extension: the owner of a database, who is no superuser,
-- creates it and uses every kind of filter there; a role without CREATE on
-- the database cannot.
SELECT current_user AS regress_superuser \gset
CREATE ROLE regress_amq_owner LOGIN;
CREATE ROLE regress_amq_stranger LOGIN;
CREATE DATABASE regress_amq_trusted OWNER regress_amq_owner;
\c regress_amq_trusted regress_amq_stranger
\set VERBOSITY terse
CREATE EXTENSION amq;
\c regress_amq_trusted regress_amq_owner
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
CREATE EXTENSION amq;
SELECT extname, extowner::regrole AS owner FROM pg_extension WHERE extname = 'amq';
CREATE TABLE filters (name text PRIMARY KEY, b bloom, c cuckoo);
INSERT INTO filters
SELECT 'every ' || layout, bloom_agg(x, 0.01, 1000, layout), NULL
FROM generate_series(1, 500) x, unnest(ARRAY['blocked', 'classic', 'counting', 'scalable']) layout
GROUP BY layout;
INSERT INTO filters
SELECT 'every ' || layout, NULL, cuckoo_agg(x, 0.01, 1000, layout)
FROM generate_series(1, 500) x, unnest(ARRAY['b2', 'b4', 'b8', 'semisorted']) layout
GROUP BY layout;
SELECT name, coalesce(bloom_contains(b, 250), cuckoo_contains(c, 250)) AS has_250,
       (SELECT count(*) FROM generate_series(1, 500) x
        WHERE NOT coalesce(bloom_contains(b, x), cuckoo_contains(c, x))) AS false_negatives
FROM filters ORDER BY name;
UPDATE filters SET c = cuckoo_delete(c, 250) WHERE c IS NOT NULL;
SELECT count(*) AS cuckoo_without_250 FROM filters WHERE NOT cuckoo_contains(c, 250);
-- The join filter's settings are the user's own.
SET amq.join_filter = off;
RESET amq.join_filter;
-- Whether the join of fact and dim, planned as a hash join, gets a join
-- filter.
CREATE TABLE fact AS SELECT g % 5000 AS k FROM generate_series(1, 20000) g;
CREATE TABLE dim AS SELECT g * 50 AS k FROM generate_series(1, 100) g;
ANALYZE fact, dim;
CREATE FUNCTION join_filtered() RETURNS boolean LANGUAGE plpgsql
SET enable_mergejoin = off SET enable_nestloop = off SET max_parallel_workers_per_gather = 0 AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT count(*) FROM fact JOIN dim USING (k)' LOOP
		IF line ~ 'AmqJoinFilter' THEN
			RETURN true;
		END IF;
	END LOOP;
	RETURN false;
END $$;
-- Calling amq's functions (and CREATE EXTENSION) loaded the library, but a
-- function call never changes how later joins are planned.
SELECT join_filtered() AS filtered_after_calls;
-- Only a superuser may LOAD 'amq' or set session_preload_libraries; any role
-- may LOAD it from $libdir/plugins, which turns the join filter on.
LOAD 'amq';
ALTER ROLE regress_amq_owner SET session_preload_libraries = 'amq';
LOAD '$libdir/plugins/amq';
SELECT join_filtered() AS filtered_after_load;
-- local_preload_libraries (from $libdir/plugins) is the role's own setting:
-- a new session has the join filter from its start.
ALTER ROLE regress_amq_owner SET local_preload_libraries = 'amq';
\c regress_amq_trusted regress_amq_owner
SELECT join_filtered() AS filtered_with_local_preload;
ALTER ROLE regress_amq_owner RESET local_preload_libraries;
-- A new session that only calls a function: no join filter.
\c regress_amq_trusted regress_amq_owner
SELECT bloom_contains(bloom_agg(k), 50) AS called FROM dim;
SELECT join_filtered() AS filtered_after_a_call;
DROP TABLE filters, fact, dim;
DROP FUNCTION join_filtered();
DROP EXTENSION amq;
\c contrib_regression :regress_superuser
DROP DATABASE regress_amq_trusted;
DROP ROLE regress_amq_owner;
DROP ROLE regress_amq_stranger;
