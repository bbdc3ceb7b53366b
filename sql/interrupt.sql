-- Cancel reaches amq's long loops: a statement timeout during bloom_new of a
-- filter near 1 GiB (cleared in pieces, each polling CHECK_FOR_INTERRUPTS
-- through core's interrupt hook) and during the sorting and inserting of an
-- aggregate's collected hashes ends the statement with PostgreSQL's own
-- error, and the session goes on. How soon is measured by bench/release
-- ("Cancel"), not asserted here.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

SET statement_timeout = '50ms';
SELECT length(bloom_new(500000000, 0.001)::bytea);
SELECT length(cuckoo_new(500000000, 0.001)::bytea);
SELECT length(bloom_agg(i)::bytea) FROM generate_series(1, 20000000) i;
RESET statement_timeout;
-- The session is fine afterwards, and so is the next filter.
SELECT bloom_contains(bloom_agg(i), 7) AS after FROM generate_series(1, 10) i;
