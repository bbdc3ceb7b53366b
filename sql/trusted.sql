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
DROP TABLE filters;
DROP EXTENSION amq;
\c contrib_regression :regress_superuser
DROP DATABASE regress_amq_trusted;
DROP ROLE regress_amq_owner;
DROP ROLE regress_amq_stranger;
