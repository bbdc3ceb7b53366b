-- The binary fuse filter (type fuse): fuse_agg, fuse_contains, @> and <@,
-- fuse_info; 8- and 16-bit fingerprints chosen by fpr; the same bytes for
-- any row order, with duplicates and NULLs, in a parallel plan; an empty
-- filter; the memory bound; what it refuses.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

CREATE TABLE fuse_rows AS SELECT i, md5(i::text) AS s FROM generate_series(1, 100000) i;
ANALYZE fuse_rows;
SET work_mem = '64MB';
CREATE TABLE fuse_filters AS
SELECT fuse_agg(i) AS f8, fuse_agg(i, 0.0001) AS f16, fuse_agg(s) AS ft FROM fuse_rows;

-- 8 bits at the default 1% and down to 1/256; 16 bits below it, down to
-- 1/65536; about 9.5 and 19 bits a value at 100,000 values (9.04 and 18.1
-- from a million on); format version 5.
SELECT fuse_info(f8) - 'families' AS info FROM fuse_filters;
SELECT p, (SELECT fuse_info(fuse_agg(i, p))->'fingerprint_bits' FROM generate_series(1, 100) i) AS bits
FROM unnest(ARRAY[0.5, 0.01, 0.00390625, 0.0039, 0.0001, 0.0000152587890625]::float8[]) AS p;
SELECT round(octet_length(f8::bytea) * 8 / 100000.0, 2) AS bits8,
       round(octet_length(f16::bytea) * 8 / 100000.0, 2) AS bits16,
       get_byte(f8::bytea, 4) AS format_version FROM fuse_filters;

-- No false negatives; the measured rate is near 2^-bits.
SELECT (SELECT count(*) FROM fuse_rows WHERE NOT fuse_contains(f8, i)) AS missing8,
       (SELECT count(*) FROM fuse_rows WHERE NOT f16 @> i) AS missing16,
       (SELECT count(*) FROM fuse_rows WHERE NOT s <@ ft) AS missing_text,
       (SELECT count(*) FROM generate_series(1000001, 1400000) x WHERE fuse_contains(f8, x))
           BETWEEN 400000 * 0.0039 * 0.85 AND 400000 * 0.0039 * 1.15 AS rate8_near_0_39pct,
       (SELECT count(*) FROM generate_series(1000001, 1400000) x WHERE fuse_contains(f16, x))
           < 30 AS rate16_under_0_0075pct
FROM fuse_filters;

-- The bytes depend on the set alone: row order, duplicates and NULLs change
-- nothing; the type's text form and bytea round-trip them.
SELECT (SELECT fuse_agg(i ORDER BY i DESC) FROM fuse_rows)::bytea = f8::bytea AS any_order,
       (SELECT fuse_agg(x) FROM (SELECT i AS x FROM fuse_rows UNION ALL SELECT i FROM fuse_rows
                                 UNION ALL SELECT NULL::int FROM generate_series(1, 10)) d)::bytea
           = f8::bytea AS duplicates_and_nulls,
       f8::text::fuse::bytea = f8::bytea AS text_round_trip,
       f8::bytea::fuse::bytea = f8::bytea AS bytea_round_trip
FROM fuse_filters;

-- Binary send/recv: send is the bytes; COPY BINARY round-trips the type, and
-- recv checks the bytes as input does (a bloom filter is refused).
SELECT fuse_send(f8) = f8::bytea AS fuse_send FROM fuse_filters;
\getenv abs_builddir PG_ABS_BUILDDIR
\set binfile :abs_builddir '/results/fuse_copy.bin'
COPY (SELECT f8, f16 FROM fuse_filters) TO :'binfile' (FORMAT binary);
CREATE TEMP TABLE copied (a fuse, b fuse);
COPY copied FROM :'binfile' (FORMAT binary);
SELECT a::bytea = f8::bytea AND b::bytea = f16::bytea AS fuse_recv FROM copied, fuse_filters;
COPY (SELECT bloom_agg(1)::bytea, NULL::bytea) TO :'binfile' (FORMAT binary);
COPY copied FROM :'binfile' (FORMAT binary);
SELECT count(*) AS rows_after_bad_copy FROM copied;

-- A parallel plan gives the same bytes.
ALTER TABLE fuse_rows SET (parallel_workers = 2);
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT fuse_agg(i) FROM fuse_rows;
SELECT (SELECT fuse_agg(i) FROM fuse_rows)::bytea = f8::bytea AS parallel_same,
       (SELECT fuse_agg(s) FROM fuse_rows)::bytea = ft::bytea AS parallel_text_same
FROM fuse_filters;
RESET max_parallel_workers_per_gather;

-- No rows, or only NULLs: a valid empty filter that holds nothing.
SELECT fuse_info(f) - 'families' AS empty_info, fuse_contains(f, 1) AS holds_1,
       f::bytea = (SELECT fuse_agg(NULL::int) FROM generate_series(1, 3))::bytea AS nulls_same
FROM (SELECT fuse_agg(i) AS f FROM fuse_rows WHERE false) e;

-- The memory bound: about 24 bytes a distinct value, within work_mem.
SET work_mem = '1MB';
SELECT fuse_agg(i) IS NOT NULL AS fits FROM generate_series(1, 30000) i;
SELECT pg_temp.try($$SELECT fuse_agg(i) FROM generate_series(1, 100000) i$$);
SELECT pg_temp.try($$SELECT fuse_agg(i) FROM generate_series(1, 1000000) i$$);
RESET work_mem;

-- Refused: a rate below 16 bits', a filter of another type, damaged bytes,
-- a value of a family the filter does not hold.
SELECT pg_temp.try($$SELECT fuse_agg(i, 0.00001) FROM generate_series(1, 10) i$$);
SELECT pg_temp.try($$SELECT fuse_agg(i, 0) FROM generate_series(1, 10) i$$);
SELECT pg_temp.try($$SELECT fuse_agg(i, NULL) FROM generate_series(1, 10) i$$);
SELECT pg_temp.try($$SELECT bloom_agg(1)::bytea::fuse$$);
SELECT pg_temp.try($$SELECT fuse_info(bloom_agg(1)::bytea::fuse)$$);
SELECT pg_temp.try($$SELECT fuse_contains(overlay(f8::bytea placing '\xff'::bytea from 100)::fuse, 1) FROM fuse_filters$$);
SELECT pg_temp.try($$SELECT fuse_contains(f8, 'text') FROM fuse_filters$$);
SELECT pg_temp.try($$SELECT bloom_contains(f8::bytea::bloom, 1) FROM fuse_filters$$);

DROP TABLE fuse_rows, fuse_filters;
