-- The extension as a whole: its exact SQL surface (names, signatures,
-- volatility, strictness, parallel safety, cost), DROP EXTENSION and
-- CREATE EXTENSION again.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'amq';
SELECT amq_version();

-- Every function, with what the planner is told about it.
SELECT p.oid::regprocedure AS function, p.prokind AS kind, p.provolatile AS volatile,
       p.proisstrict AS strict, p.proparallel AS parallel, p.procost AS cost,
       p.prorettype::regtype AS returns
FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'amq')
ORDER BY p.oid::regprocedure::text;
-- Aggregates: internal state, combine, serial and deserial functions.
SELECT a.aggfnoid::regprocedure AS aggregate, a.aggtranstype::regtype AS state,
       a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggfinalmodify
FROM pg_aggregate a JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = a.aggfnoid
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'amq')
ORDER BY a.aggfnoid::regprocedure::text;
-- Types, casts and operators.
SELECT castsource::regtype, casttarget::regtype, castfunc::regprocedure, castcontext, castmethod
FROM pg_cast WHERE castsource IN ('bloom'::regtype, 'cuckoo'::regtype)
   OR casttarget IN ('bloom'::regtype, 'cuckoo'::regtype)
ORDER BY castsource::regtype::text, casttarget::regtype::text;
SELECT oprname, oprleft::regtype, oprright::regtype, oprresult::regtype, oprcode
FROM pg_operator WHERE oprleft IN ('bloom'::regtype, 'cuckoo'::regtype)
   OR oprright IN ('bloom'::regtype, 'cuckoo'::regtype)
ORDER BY oprcode::text;

-- A table using the types keeps the extension from being dropped...
CREATE TABLE ext_keep (f bloom);
INSERT INTO ext_keep SELECT bloom_agg(x) FROM generate_series(1, 10) x;
DROP EXTENSION amq;
DROP TABLE ext_keep;
-- ... and once nothing depends on it, it goes and comes back whole.
DROP EXTENSION amq;
SELECT count(*) AS types_left FROM pg_type WHERE typname IN ('bloom', 'cuckoo');
SELECT count(*) AS functions_left FROM pg_proc
WHERE proname LIKE 'bloom%' OR proname LIKE 'cuckoo%' OR proname LIKE 'amq%';
SELECT bloom_new(10, 0.01);
CREATE EXTENSION amq;
SELECT bloom_contains(bloom_agg(x), 5) AS works_again, amq_version()
FROM generate_series(1, 10) x;
-- Into another schema (the extension is relocatable).
DROP EXTENSION amq;
CREATE SCHEMA amq_elsewhere;
CREATE EXTENSION amq SCHEMA amq_elsewhere;
SELECT amq_elsewhere.bloom_contains(amq_elsewhere.bloom_agg(x), 5) AS in_schema
FROM generate_series(1, 10) x;
SELECT count(*) FILTER (WHERE NOT amq_elsewhere.bloom_contains(f, x)) AS misses
FROM (SELECT amq_elsewhere.bloom_agg(x) AS f FROM generate_series(1, 1000) x) s,
     generate_series(1, 1000) x;
DROP EXTENSION amq;
DROP SCHEMA amq_elsewhere;
CREATE EXTENSION amq;
