-- Upgrades never lose a stored filter. In a database of its own: CREATE
-- EXTENSION amq VERSION '0.1.0', store filters of every 0.1.0 kind and
-- layout, ALTER EXTENSION amq UPDATE, then read, probe and extend them. The
-- updated extension has exactly the objects a fresh install of the default
-- version creates.
CREATE DATABASE amq_upgrade;
\c amq_upgrade
\set VERBOSITY terse

CREATE EXTENSION amq VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'amq';
-- Under 0.1.0 bloom_new is classic unless told otherwise.
SELECT bloom_info(bloom_new(10, 0.01))->>'layout' AS layout_in_010;

CREATE TABLE stored (name text PRIMARY KEY, b bloom, c cuckoo, members int[]);
INSERT INTO stored
SELECT 'bloom_agg', bloom_agg(x), NULL::cuckoo, array_agg(x) FROM generate_series(1, 5000) x
UNION ALL
SELECT 'bloom_agg capacity', bloom_agg(x * 3, 0.001, 8000), NULL, array_agg(x * 3)
FROM generate_series(1, 4000) x
UNION ALL
SELECT 'bloom_new blocked', bloom_add(bloom_add(bloom_new(1000, 0.01, 'blocked'), 11), 12), NULL,
       ARRAY[11, 12]
UNION ALL
SELECT 'bloom_new classic', bloom_add(bloom_new(1000, 0.05), 13), NULL, ARRAY[13]
UNION ALL
SELECT 'cuckoo_agg', NULL::bloom, cuckoo_agg(x), array_agg(x) FROM generate_series(1, 5000) x
UNION ALL
SELECT 'cuckoo add/delete', NULL,
       cuckoo_delete(cuckoo_add(cuckoo_add(cuckoo_add(cuckoo_new(100), 7), 8), 7), 8), ARRAY[7];
CREATE TABLE stored_bytes AS
SELECT name, b::bytea AS b, c::bytea AS c, bloom_info(b) AS b_info, cuckoo_info(c) AS c_info
FROM stored;
-- A view over the functions keeps working across the update.
CREATE VIEW stored_view AS
SELECT name, bloom_contains(b, 11) AS bloom_has_11, c @> 7 AS cuckoo_has_7 FROM stored;

ALTER EXTENSION amq UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'amq';

-- Every stored filter reads back as the same bytes, describes itself the
-- same way and finds every member it was given.
SELECT s.name, s.b::bytea IS NOT DISTINCT FROM o.b AS same_bloom_bytes,
       s.c::bytea IS NOT DISTINCT FROM o.c AS same_cuckoo_bytes,
       bloom_info(s.b) IS NOT DISTINCT FROM o.b_info AS same_bloom_info,
       cuckoo_info(s.c) IS NOT DISTINCT FROM o.c_info AS same_cuckoo_info,
       coalesce(bloom_info(s.b)->>'layout', 'cuckoo') AS layout,
       (SELECT count(*) FROM unnest(s.members) m
        WHERE NOT coalesce(bloom_contains(s.b, m), cuckoo_contains(s.c, m))) AS false_negatives
FROM stored s JOIN stored_bytes o USING (name) ORDER BY s.name;
SELECT * FROM stored_view ORDER BY name;
SELECT cuckoo_count(c, 7) AS copies_of_7, cuckoo_count(c, 8) AS copies_of_8
FROM stored WHERE name = 'cuckoo add/delete';

-- The old filters work with what 0.2.0 adds. A classic filter made under
-- 0.1.0 is the one bloom_new(..., 'classic') makes now; a bloom_agg filter
-- stored under the 0.1.0 SQL by this library is the one bloom_agg builds now
-- (the aggregate's default layout is the library's), and it combines with
-- one built by the new 4-argument form.
SELECT b::bytea = bloom_add(bloom_new(1000, 0.05, 'classic'), 13)::bytea AS same_as_classic_now
FROM stored WHERE name = 'bloom_new classic';
SELECT b::bytea = (SELECT bloom_agg(x)::bytea FROM generate_series(1, 5000) x) AS same_as_agg_now,
       bloom_count(bloom_union(b, (SELECT bloom_agg(x, 0.01, NULL, 'blocked')
                                   FROM generate_series(2501, 7500) x))) AS union_count
FROM stored WHERE name = 'bloom_agg';
UPDATE stored SET b = bloom_add(b, 99999) WHERE name = 'bloom_agg capacity';
UPDATE stored SET c = cuckoo_delete(cuckoo_add(c, 99999), 1) WHERE name = 'cuckoo_agg';
SELECT name, coalesce(bloom_contains(b, 99999), cuckoo_contains(c, 99999)) AS has_new,
       coalesce(bloom_info(b)->'items', cuckoo_info(c)->'items') AS items
FROM stored WHERE name IN ('bloom_agg capacity', 'cuckoo_agg') ORDER BY name;
SELECT bloom_info(bloom_new(10, 0.01))->>'layout' AS layout_in_020,
       bloom_info(bloom_agg(x))->>'layout' AS agg_layout_in_020
FROM generate_series(1, 10) x;

-- The updated extension's objects, with everything the planner is told
-- about its functions and their argument defaults, are those of a fresh
-- install.
CREATE FUNCTION pg_temp.amq_objects() RETURNS SETOF text LANGUAGE sql AS $$
	SELECT pg_describe_object(d.classid, d.objid, 0) || coalesce(' | ' || concat_ws(' ',
	         pg_get_function_arguments(p.oid), '->', pg_get_function_result(p.oid), p.prosrc,
	         p.provolatile, p.proisstrict, p.proparallel, p.procost, a.aggtransfn, a.aggfinalfn,
	         a.aggcombinefn, a.aggserialfn, a.aggdeserialfn), '')
	FROM pg_depend d
	LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
	LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'amq')
$$;
CREATE TABLE updated_objects AS SELECT pg_temp.amq_objects() AS object;
DROP VIEW stored_view;
DROP TABLE stored;
DROP EXTENSION amq;
CREATE EXTENSION amq;
SELECT extversion FROM pg_extension WHERE extname = 'amq';
-- (16 and later also count the array types bloom[] and cuckoo[] as members.)
SELECT count(*) AS objects FROM updated_objects WHERE object NOT LIKE 'type %[]';
(SELECT 'only after update' AS where_, object FROM updated_objects
 EXCEPT SELECT 'only after update', pg_temp.amq_objects())
UNION ALL
(SELECT 'only in fresh install', pg_temp.amq_objects()
 EXCEPT SELECT 'only in fresh install', object FROM updated_objects);
-- A version that does not exist is refused by PostgreSQL itself.
ALTER EXTENSION amq UPDATE TO '9.9.9';

\c contrib_regression
DROP DATABASE amq_upgrade;

-- From 0.2.0, which is released too: its counting and scalable filters and
-- a cuckoo filter read back unchanged after ALTER EXTENSION amq UPDATE, and
-- the layouts 0.3.0 adds work beside them.
CREATE DATABASE amq_upgrade_020;
\c amq_upgrade_020
\set VERBOSITY terse
CREATE EXTENSION amq VERSION '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'amq';
CREATE TABLE stored (name text PRIMARY KEY, b bloom, c cuckoo);
INSERT INTO stored
SELECT 'counting', bloom_delete(bloom_agg(x, 0.01, NULL, 'counting'), 3), NULL::cuckoo
FROM generate_series(1, 3000) x
UNION ALL
SELECT 'scalable', bloom_agg(x, 0.01, 100, 'scalable'), NULL FROM generate_series(1, 3000) x
UNION ALL
SELECT 'cuckoo', NULL, cuckoo_agg(x, 0.01, NULL, 'b4') FROM generate_series(1, 3000) x;
CREATE TABLE stored_bytes AS SELECT name, b::bytea AS b, c::bytea AS c FROM stored;
ALTER EXTENSION amq UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'amq';
SELECT s.name, s.b::bytea IS NOT DISTINCT FROM o.b AND s.c::bytea IS NOT DISTINCT FROM o.c
           AS same_bytes,
       coalesce(bloom_info(s.b)->>'layout', cuckoo_info(s.c)->>'layout') AS layout,
       (SELECT count(*) FROM generate_series(1, 3000) x
        WHERE x <> 3 AND NOT coalesce(bloom_contains(s.b, x), cuckoo_contains(s.c, x)))
           AS false_negatives
FROM stored s JOIN stored_bytes o USING (name) ORDER BY s.name;
SELECT cuckoo_info(cuckoo_add(cuckoo_new(100, 0.01, 'semisorted'), 1))->>'layout' AS new_layout,
       cuckoo_add(c, 99999) @> 99999 AS old_filter_takes_adds
FROM stored WHERE name = 'cuckoo';
\c contrib_regression
DROP DATABASE amq_upgrade_020;
