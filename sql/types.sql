-- The bloom and cuckoo types: text input/output, binary send/recv, casts to
-- and from bytea, NULLs, storage, and every way a bad value is refused.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- Text output is \x + lower-case hex of the serialized filter (this one's
-- size follows from the textbook Bloom formulas, so it is pinned).
SELECT bloom_new(8, 0.5, 'classic') AS b, cuckoo_new(4) AS c \gset
SELECT :'b' AS bloom_text;
SELECT :'b'::bloom::text = :'b' AS bloom_round_trip,
       :'c'::cuckoo::text = :'c' AS cuckoo_round_trip;
SELECT length(:'b') = 2 + 2 * octet_length(:'b'::bloom::bytea) AS two_digits_a_byte;
-- Input accepts upper-case digits after the \x prefix.
SELECT ('\x' || upper(substr(:'b', 3)))::bloom::text = :'b' AS upper_case_accepted;
-- The bytes start with the magic "AMQF", format version 1, the kind.
SELECT substr(:'b'::bloom::bytea, 1, 6) AS bloom_head, substr(:'c'::cuckoo::bytea, 1, 6) AS cuckoo_head;

-- Text input errors name the fault.
SELECT ''::bloom;
SELECT 'abc'::bloom;
SELECT '\X00'::bloom;
SELECT '\x0'::cuckoo;
SELECT '\x0g'::bloom;
SELECT '\xzz00'::cuckoo;
SELECT '\x'::bloom;
SELECT '\x00'::bloom;
SELECT ('\x' || repeat('00', 64))::bloom;
SELECT :'c'::bloom;
SELECT :'b'::cuckoo;
-- Damaged bytes: version, a payload bit, a truncated and a padded value.
SELECT ('\x414d514606' || substr(:'b', 13))::bloom;
SELECT (substr(:'b', 1, length(:'b') - 1) || '1')::bloom;
SELECT substr(:'b', 1, length(:'b') - 2)::bloom;
SELECT (:'b' || '00')::bloom;
SELECT pg_temp.try($$SELECT '\x00'::bloom$$);
SELECT pg_temp.try($$SELECT 'abc'::cuckoo$$);
SELECT pg_temp.try(format('SELECT %L::bloom', :'c'));
SELECT pg_temp.try(format('SELECT %L::bloom', substr(:'b', 1, length(:'b') - 1) || '1'));

-- Casts: bytea -> filter is checked, filter -> bytea is the same bytes.
SELECT :'b'::bloom::bytea = decode(substr(:'b', 3), 'hex') AS bloom_to_bytea,
       :'c'::cuckoo::bytea = decode(substr(:'c', 3), 'hex') AS cuckoo_to_bytea;
SELECT decode(substr(:'b', 3), 'hex')::bloom::text = :'b' AS bytea_to_bloom,
       decode(substr(:'c', 3), 'hex')::cuckoo::text = :'c' AS bytea_to_cuckoo;
SELECT bloom(decode(substr(:'b', 3), 'hex'))::text = :'b' AS cast_function;
SELECT '\x0102'::bytea::bloom;
SELECT decode(substr(:'b', 3), 'hex')::cuckoo;
SELECT decode(substr(:'c', 3), 'hex')::bloom;
SELECT pg_temp.try($$SELECT '\x0102'::bytea::cuckoo$$);
-- Both casts apply in assignment, so a bytea parameter fills a bloom column.
CREATE TEMP TABLE stored (b bloom, c cuckoo, raw bytea);
INSERT INTO stored (b, c) VALUES (decode(substr(:'b', 3), 'hex'), decode(substr(:'c', 3), 'hex'));
INSERT INTO stored (raw) SELECT b FROM stored WHERE b IS NOT NULL;
INSERT INTO stored (b) VALUES ('\x0102'::bytea);
SELECT count(b) AS blooms, count(c) AS cuckoos, count(raw) AS raws,
       bool_and(raw = decode(substr(:'b', 3), 'hex')) AS raw_is_bytes FROM stored;
-- No implicit cast between the two kinds.
SELECT bloom_contains(cuckoo_new(10), 1);

-- NULLs pass through input, casts and output.
SELECT NULL::bloom IS NULL AS null_bloom, NULL::bytea::cuckoo IS NULL AS null_cast,
       NULL::bloom::bytea IS NULL AS null_to_bytea;

-- Binary send/recv: send is the bytes; COPY BINARY round-trips both types.
SELECT bloom_send(:'b') = :'b'::bloom::bytea AS bloom_send,
       cuckoo_send(:'c') = :'c'::cuckoo::bytea AS cuckoo_send;
\getenv abs_builddir PG_ABS_BUILDDIR
\set binfile :abs_builddir '/results/types_copy.bin'
COPY (SELECT bloom_agg(x) AS b, cuckoo_agg(x) AS c FROM generate_series(1, 1000) x)
	TO :'binfile' (FORMAT binary);
CREATE TEMP TABLE copied (b bloom, c cuckoo);
COPY copied FROM :'binfile' (FORMAT binary);
SELECT b::bytea = (SELECT bloom_agg(x)::bytea FROM generate_series(1, 1000) x) AS bloom_recv,
       c::bytea = (SELECT cuckoo_agg(x)::bytea FROM generate_series(1, 1000) x) AS cuckoo_recv
FROM copied;
-- recv checks the bytes like input does: a short value, the other kind.
COPY (SELECT '\x0102'::bytea, NULL::bytea) TO :'binfile' (FORMAT binary);
COPY copied FROM :'binfile' (FORMAT binary);
COPY (SELECT NULL::bytea, :'b'::bloom::bytea) TO :'binfile' (FORMAT binary);
COPY copied FROM :'binfile' (FORMAT binary);
COPY (SELECT (substr(:'b', 1, length(:'b') - 1) || '1')::bytea, NULL::bytea)
	TO :'binfile' (FORMAT binary);
COPY copied FROM :'binfile' (FORMAT binary);
SELECT count(*) AS rows_after_bad_copies FROM copied;

-- Storage external: never compressed, so a probe can read the header alone.
SELECT typname, typstorage, typlen, typalign FROM pg_type
WHERE typname IN ('bloom', 'cuckoo') ORDER BY typname;
CREATE TEMP TABLE big AS SELECT bloom_agg(x, 0.01, 200000) AS f FROM generate_series(1, 10) x;
SELECT octet_length(f::bytea) AS bytes, pg_column_size(f) AS stored_bytes,
       pg_column_compression(f) AS compression FROM big;
