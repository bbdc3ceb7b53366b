-- Filters that know what they hold: every filter records the families of the
-- values added (numbers, text, blobs; format version 4), and a probe, add,
-- delete or count of a value of another family is an error (22023) with a
-- hint that shows the cast, never a silent false. Aggregates record every
-- family they see, an empty filter takes its first add's, union and
-- intersection combine them, NULL stays NULL, and filters amq 0.3.0 wrote
-- (tests/fixtures/amq-0.3.0.tsv) are never checked and combine with new ones
-- into filters 0.3.0 still reads.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse
\getenv abs_srcdir PG_ABS_SRCDIR
\set try_sql :abs_srcdir '/sql/include/try.sql'
\i :try_sql

CREATE TEMP TABLE vip AS
SELECT bloom_agg(i) AS b, cuckoo_agg(i) AS c,
       bloom_agg(i, 0.01, 1000, 'counting') AS k
FROM generate_series(1, 100) i;
SELECT bloom_info(b)->'families' AS bloom, cuckoo_info(c)->'families' AS cuckoo,
       bloom_info(b)->'format_version' AS version, get_byte(b::bytea, 44) AS byte44
FROM vip;

-- The newcomer's mistake: an untyped literal resolves to text.
SELECT b @> 42 AS typed, bloom_contains(b, 42::int2) AS int2, bloom_contains(b, 42.0) AS numeric,
       bloom_contains(b, '42'::int8) AS cast_literal
FROM vip;
SELECT pg_temp.try($$SELECT bloom_contains(b, '42') FROM vip$$);
SELECT pg_temp.try($$SELECT b @> '42' FROM vip$$);
SELECT pg_temp.try($$SELECT '42' <@ b FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_contains(b, '4.5') FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_contains(b, 'it''s'::varchar) FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_contains(b, '\x0102'::bytea) FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_contains(b, DATE '2024-01-02') FROM vip$$);
SELECT pg_temp.try($$SELECT cuckoo_contains(c, 'abc') FROM vip$$);
SELECT pg_temp.try($$SELECT cuckoo_count(c, 'abc') FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_frequency(k, 'abc') FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_add(b, 'abc') FROM vip$$);
SELECT pg_temp.try($$SELECT bloom_delete(k, 'abc') FROM vip$$);
SELECT pg_temp.try($$SELECT cuckoo_add(c, 'abc'::text) FROM vip$$);
SELECT pg_temp.try($$SELECT cuckoo_add_unique(c, 'abc'::text) FROM vip$$);
SELECT pg_temp.try($$SELECT cuckoo_delete(c, 'abc'::text) FROM vip$$);
-- The bulk aggregates check every row.
SELECT pg_temp.try($$SELECT bloom_add_agg(b, v) FROM vip, (VALUES ('a'), ('b')) s(v)$$);
SELECT pg_temp.try($$SELECT cuckoo_delete_agg(c, v) FROM vip, (VALUES ('\x01'::bytea)) s(v)$$);
-- A filter of text refuses numbers, a filter of blobs text.
SELECT pg_temp.try($$SELECT bloom_contains(bloom_agg(v), 7) FROM (VALUES ('a'), ('b')) s(v)$$);
SELECT pg_temp.try($$SELECT bloom_contains(bloom_agg(v), 'abc') FROM (VALUES ('\x01'::bytea)) s(v)$$);
-- Values that hash as text are text: dates, timestamps, uuids.
SELECT bloom_contains(f, DATE '2024-01-02') AS date, bloom_contains(f, '2024-01-02') AS text
FROM (SELECT bloom_agg(d) AS f FROM (VALUES (DATE '2024-01-02')) s(d)) s;

-- NULL still gives NULL, whatever the family.
SELECT bloom_contains(b, NULL::text) IS NULL AS contains_null, (b @> NULL::text) IS NULL AS op_null,
       bloom_add(b, NULL::text)::bytea = b::bytea AS add_null
FROM vip;

-- An empty filter takes its first add's family; an add of another then fails.
SELECT bloom_info(bloom_new(10, 0.01))->'families' AS empty,
       bloom_info(bloom_add(bloom_new(10, 0.01), 'a'))->'families' AS first_add,
       bloom_contains(bloom_new(10, 0.01), 'a') AS empty_probe,
       bloom_contains(bloom_new(10, 0.01), 7) AS empty_probe_number;
SELECT pg_temp.try($$SELECT bloom_add(bloom_add(bloom_new(10, 0.01), 'a'), 1)$$);
-- bloom_add_agg on an empty filter: the first row decides.
SELECT bloom_info(bloom_add_agg(f, v))->'families' AS bulk_first
FROM (SELECT bloom_new(10, 0.01) AS f) s, generate_series(1, 3) v;

-- Union holds both families, intersection those both hold; a mixed filter
-- answers each of its families.
CREATE TEMP TABLE mixed AS
SELECT bloom_union(n, t) AS u, bloom_intersect(n, t) AS i
FROM (SELECT bloom_agg(v, 0.01, 100) AS n FROM generate_series(1, 10) v) a,
     (SELECT bloom_agg(v, 0.01, 100) AS t FROM (VALUES ('a'), ('b')) s(v)) b;
SELECT bloom_info(u)->'families' AS unioned, bloom_info(i)->'families' AS intersected,
       u @> 3 AS number, u @> 'a'::text AS text
FROM mixed;
SELECT pg_temp.try($$SELECT bloom_contains(u, '\x00'::bytea) FROM mixed$$);
SELECT bloom_info(bloom_union_agg(f))->'families' AS union_agg
FROM (SELECT bloom_agg(v, 0.01, 100) AS f FROM generate_series(1, 3) v
      UNION ALL SELECT bloom_agg(v, 0.01, 100) FROM (VALUES ('\x01'::bytea)) s(v)) s;

-- Parallel aggregates record the families too: the same bytes as serial.
CREATE TEMP TABLE fam_rows AS SELECT i FROM generate_series(1, 20000) i;
ANALYZE fam_rows;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TEMP TABLE par AS SELECT bloom_agg(i) AS f FROM fam_rows;
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;
SELECT (SELECT f FROM par)::bytea = bloom_agg(i)::bytea AS parallel_same,
       bloom_info(bloom_agg(i))->'families' AS families
FROM fam_rows;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- Filters amq 0.3.0 wrote, one per kind and layout over 1..200 and 'k1'..'k50'
-- (tests/fixtures/amq-0.3.0.tsv): read as they are, never checked.
CREATE TEMP TABLE old (name text, kind text, hex text);
\set fixtures :abs_srcdir '/tests/fixtures/amq-0.3.0.tsv'
COPY old FROM :'fixtures';
SELECT name, get_byte(decode(hex, 'hex'), 4) AS version,
       CASE kind WHEN 'bloom' THEN bloom_info(decode(hex, 'hex')::bloom)->'families'
                 ELSE cuckoo_info(decode(hex, 'hex')::cuckoo)->'families' END AS families,
       CASE kind WHEN 'bloom' THEN
           (SELECT count(*) FROM generate_series(1, 200) v
            WHERE bloom_contains(decode(hex, 'hex')::bloom, v))
           + (SELECT count(*) FROM generate_series(1, 50) v
              WHERE bloom_contains(decode(hex, 'hex')::bloom, 'k' || v))
       ELSE
           (SELECT count(*) FROM generate_series(1, 200) v
            WHERE cuckoo_contains(decode(hex, 'hex')::cuckoo, v))
           + (SELECT count(*) FROM generate_series(1, 50) v
              WHERE cuckoo_contains(decode(hex, 'hex')::cuckoo, 'k' || v))
       END AS members_found,
       CASE kind WHEN 'bloom' THEN bloom_contains(decode(hex, 'hex')::bloom, '\x00'::bytea) IS NOT NULL
                 ELSE cuckoo_contains(decode(hex, 'hex')::cuckoo, '\x00'::bytea) IS NOT NULL
       END AS blob_probe_answers
FROM old ORDER BY name;
-- An old filter combined with a new one has unknown families and is written
-- in the old filter's version, so 0.3.0 still reads it; bloom_union_agg over
-- filters stored before and after the upgrade keeps working.
SELECT bloom_info(bloom_union(o, n))->'families' AS families,
       get_byte(bloom_union(o, n)::bytea, 4) AS version,
       get_byte(bloom_union(n, o)::bytea, 4) AS version_swapped,
       bloom_contains(bloom_union(o, n), 'k7') AS old_member,
       bloom_contains(bloom_union(o, n), 1000) AS new_member,
       (SELECT get_byte(bloom_union_agg(f)::bytea, 4) FROM (VALUES (o), (n)) s(f))
           AS union_agg_version
FROM (SELECT decode(hex, 'hex')::bloom AS o FROM old WHERE name = 'bloom blocked') a,
     (SELECT bloom_add(bloom_new(250, 0.01), 1000) AS n) b;
