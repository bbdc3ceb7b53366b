-- How values of each PostgreSQL type hash (docs/HASHING.md): equal values
-- hash equally across types, encodings do not depend on session settings,
-- and types whose equality is not bytewise are canonicalised or refused.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

-- Known answers: the core's test vectors (tests/core/test_hash.c), in hex.
SELECT to_hex(amq_hash(0)) AS int_0, to_hex(amq_hash(3)) AS int_3,
       to_hex(amq_hash(-1)) AS int_minus_1, to_hex(amq_hash(-9223372036854775808)) AS int_min;
SELECT to_hex(amq_hash(1.5::float8)) AS real_1_5, to_hex(amq_hash('NaN'::float8)) AS real_nan,
       to_hex(amq_hash('Infinity'::float8)) AS real_inf, to_hex(amq_hash(1e20::float8)) AS real_1e20;
SELECT to_hex(amq_hash('abc'::text)) AS text_abc, to_hex(amq_hash(''::text)) AS text_empty,
       to_hex(amq_hash('\x616263'::bytea)) AS blob_abc;
SELECT amq_hash(NULL::int) IS NULL AS null_is_null, amq_hash(NULL) IS NULL AS untyped_null;

-- Integers of every width, bool, integral numerics and floats: one hash.
SELECT count(DISTINCT h) AS distinct_hashes FROM (VALUES
	(amq_hash(7::int2)), (amq_hash(7::int4)), (amq_hash(7::int8)), (amq_hash(7::numeric)),
	(amq_hash(7.000::numeric)), (amq_hash(7::float4)), (amq_hash(7::float8)),
	(amq_hash(7e0::numeric))) v(h);
SELECT amq_hash(true) = amq_hash(1) AS true_is_1, amq_hash(false) = amq_hash(0) AS false_is_0;
SELECT amq_hash(-0.0::float8) = amq_hash(0) AS minus_zero,
       amq_hash(9223372036854775807) = amq_hash(9223372036854775807::numeric) AS int8_max,
       amq_hash(-9223372036854775808) = amq_hash(-9223372036854775808::numeric) AS int8_min,
       amq_hash(9007199254740993::int8) = amq_hash(9007199254740993::numeric) AS beyond_2_53,
       amq_hash(9007199254740993::int8) <> amq_hash(9007199254740992::int8) AS distinct_neighbours;
-- Fractions: numeric hashes as the double float8 comparisons see.
SELECT amq_hash(0.1) = amq_hash(0.1::float8) AS numeric_0_1,
       amq_hash(2.50) = amq_hash(2.5::float8) AS numeric_2_50,
       amq_hash(0.1::float4) = amq_hash(0.1::float8) AS float4_0_1_differs,
       amq_hash(0.5::float4) = amq_hash(0.5::float8) AS float4_0_5_exact,
       amq_hash(1e20) = amq_hash(1e20::float8) AS numeric_1e20,
       amq_hash(12345678901234567890) = amq_hash(12345678901234567890::float8) AS numeric_big;
SELECT amq_hash('NaN'::numeric) = amq_hash('NaN'::float8) AS nan,
       amq_hash('NaN'::float4) = amq_hash('NaN'::float8) AS nan_float4,
       amq_hash('Infinity'::numeric) = amq_hash('Infinity'::float8) AS inf,
       amq_hash('-Infinity'::numeric) = amq_hash('-Infinity'::float8) AS minus_inf,
       amq_hash('Infinity'::float8) <> amq_hash('-Infinity'::float8) AS inf_signs_differ;
-- A filter over int8 answers int2, int4, numeric and float probes.
SELECT bloom_contains(f, 123::int2) AS int2, bloom_contains(f, 123) AS int4,
       bloom_contains(f, 123.0) AS numeric, bloom_contains(f, 123::float8) AS float8,
       cuckoo_contains(c, 123::int2) AS cuckoo_int2, cuckoo_contains(c, 123.00) AS cuckoo_numeric
FROM (SELECT bloom_agg(x::int8) AS f, cuckoo_agg(x::int8) AS c FROM generate_series(100, 200) x) s;
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, x::int4)) AS int4_misses,
       count(*) FILTER (WHERE NOT bloom_contains(f, x::numeric)) AS numeric_misses,
       count(*) FILTER (WHERE NOT bloom_contains(f, x::float8)) AS float8_misses
FROM (SELECT bloom_agg(x::int8) AS f FROM generate_series(-50000, 50000) x) s,
     generate_series(-50000, 50000) x;

-- Character types: UTF-8 text. varchar and name are text; bpchar ignores
-- trailing spaces as its equality does; bytea is a blob, never text.
SELECT count(DISTINCT h) AS distinct_hashes FROM (VALUES
	(amq_hash('abc'::text)), (amq_hash('abc'::varchar)), (amq_hash('abc'::varchar(10))),
	(amq_hash('abc'::name)), (amq_hash('abc'::char(3))), (amq_hash('abc   '::char(6))),
	(amq_hash('abc'))) v(h);
SELECT amq_hash('abc'::text) <> amq_hash('abc '::text) AS text_spaces_count,
       amq_hash('abc'::text) <> amq_hash('\x616263'::bytea) AS text_is_not_blob,
       amq_hash('abc'::text) <> amq_hash('ABC'::text) AS case_counts,
       amq_hash('1'::text) <> amq_hash(1) AS text_is_not_int,
       amq_hash(' a'::char(3)) <> amq_hash('a'::char(3)) AS leading_spaces_count;
SELECT amq_hash(convert_to('héllo', 'UTF8')) <> amq_hash('héllo') AS blob_of_text_differs;

-- Dates, times, timestamps and uuids hash as their ISO text, whatever the
-- session's DateStyle and TimeZone.
CREATE TEMP TABLE temporal AS SELECT
	amq_hash('2024-02-29'::date) AS d, amq_hash('2024-02-29 13:04:05.25'::timestamp) AS ts,
	amq_hash('2024-02-29 13:04:05.25+00'::timestamptz) AS tstz,
	amq_hash('13:04:05.123'::time) AS t,
	amq_hash('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid) AS u;
SELECT d = amq_hash('2024-02-29') AS date_text,
       ts = amq_hash('2024-02-29 13:04:05.25') AS timestamp_text,
       tstz = amq_hash('2024-02-29 13:04:05.25') AS timestamptz_text_utc,
       t = amq_hash('13:04:05.123') AS time_text,
       u = amq_hash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11') AS uuid_text
FROM temporal;
SET DateStyle = 'SQL, DMY';
SET TimeZone = 'Asia/Kolkata';
SET extra_float_digits = -3;
SELECT d = amq_hash('2024-02-29'::date) AS date_same,
       ts = amq_hash('2024-02-29 13:04:05.25'::timestamp) AS timestamp_same,
       tstz = amq_hash('2024-02-29 18:34:05.25+05:30'::timestamptz) AS timestamptz_same,
       t = amq_hash('13:04:05.123'::time) AS time_same,
       amq_hash(0.1::float8) = amq_hash(0.1) AS float_same
FROM temporal;
RESET DateStyle;
RESET TimeZone;
RESET extra_float_digits;
SELECT amq_hash('2024-01-02 03:04:05'::timestamp) = amq_hash('2024-01-02 03:04:05') AS whole_seconds,
       amq_hash('2024-01-02 03:04:05.100'::timestamp) = amq_hash('2024-01-02 03:04:05.1')
         AS trailing_zeros_trimmed,
       amq_hash('infinity'::timestamp) = amq_hash('infinity') AS ts_infinity,
       amq_hash('-infinity'::timestamptz) = amq_hash('-infinity') AS tstz_minus_infinity,
       amq_hash('infinity'::date) = amq_hash('infinity') AS date_infinity,
       amq_hash('0044-03-15 BC'::date) = amq_hash('0044-03-15 BC') AS bc_date,
       amq_hash('24:00:00'::time) = amq_hash('24:00:00') AS end_of_day;
-- A date and a timestamp are different types with different encodings.
SELECT amq_hash('2024-02-29'::date) <> amq_hash('2024-02-29 00:00:00'::timestamp) AS date_vs_ts;

-- Domains hash as their base type.
CREATE DOMAIN pg_temp.positive AS int8 CHECK (VALUE > 0);
CREATE DOMAIN pg_temp.label AS varchar(20);
SELECT amq_hash(5::pg_temp.positive) = amq_hash(5) AS int_domain,
       amq_hash('x'::pg_temp.label) = amq_hash('x'::text) AS text_domain,
       bloom_contains(bloom_agg(v), 5) AS agg_over_domain
FROM (VALUES (5::pg_temp.positive), (6::pg_temp.positive)) s(v);

-- citext compares lower-cased text: it hashes lower-cased, so a filter over
-- citext finds 'ABC' and 'abc' alike.
CREATE EXTENSION IF NOT EXISTS citext;
SELECT amq_hash('MiXeD'::citext) = amq_hash('mixed'::citext) AS citext_case,
       amq_hash('MiXeD'::citext) = amq_hash('mixed'::text) AS citext_is_lower_text,
       bloom_contains(f, 'HELLO'::citext) AS upper_found, bloom_contains(f, 'hello'::citext) AS lower_found
FROM (SELECT bloom_agg(v::citext) AS f FROM (VALUES ('Hello'), ('World')) s(v)) s;
DROP EXTENSION citext;

-- Nondeterministic collations make different bytes equal: refused.
CREATE COLLATION pg_temp.nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TEMP TABLE ci (v text COLLATE pg_temp.nocase);
INSERT INTO ci VALUES ('abc'), ('ABC');
SELECT count(DISTINCT v) AS equal_under_collation FROM ci;
SELECT amq_hash(v) FROM ci;
SELECT bloom_agg(v) FROM ci;
SELECT bloom_contains(bloom_new(10, 0.01), v) FROM ci;
SELECT pg_temp.try($$SELECT amq_hash(v) FROM ci$$);
-- An explicit deterministic collation is accepted.
SELECT count(DISTINCT amq_hash(v COLLATE "C")) AS c_collation FROM ci;
SELECT count(DISTINCT amq_hash(v::text COLLATE "default")) AS default_collation FROM ci;

-- Types with no faithful encoding are refused with a hint.
SELECT amq_hash('1 day'::interval);
SELECT amq_hash(ARRAY[1, 2]);
SELECT amq_hash(ROW(1, 2));
SELECT amq_hash('{"a": 1}'::jsonb);
SELECT amq_hash('12:00+02'::timetz);
SELECT amq_hash('127.0.0.1'::inet);
SELECT pg_temp.try($$SELECT amq_hash('1 day'::interval)$$);
SELECT amq_hash(('1 day'::interval)::text) IS NOT NULL AS cast_to_text_works;

-- Text hashes as UTF-8 whatever the database encoding: LATIN1 gives the same.
SELECT to_hex(amq_hash('héllo wörld')) AS utf8_db, to_hex(amq_hash('héllo'::char(8))) AS utf8_char;
\set regress_db :DBNAME
CREATE DATABASE amq_latin1 TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C';
\c amq_latin1
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE EXTENSION amq;
RESET client_min_messages;
SELECT to_hex(amq_hash('héllo wörld')) AS latin1_db,
       to_hex(amq_hash('héllo'::char(8))) AS latin1_char, octet_length('héllo wörld') AS latin1_bytes;
\c :regress_db
DROP DATABASE amq_latin1;
