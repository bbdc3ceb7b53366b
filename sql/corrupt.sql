-- Damaged values are refused with an error, never a crash: every one-bit
-- change and every truncation of valid filters, random byte strings, and
-- the same bytes smuggled past input checks (as on-disk corruption would
-- be) into every function that reads a filter.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amq;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TEMP TABLE good AS
SELECT 'bloom' AS kind, bloom_agg(x)::bytea AS bytes FROM generate_series(1, 40) x
UNION ALL SELECT 'blocked', bloom_add(bloom_new(100, 0.01, 'blocked'), 5)::bytea
UNION ALL SELECT 'counting', bloom_agg(x % 7, 0.1, 20, 'counting')::bytea FROM generate_series(1, 40) x
UNION ALL SELECT 'scalable', bloom_agg(x, 0.1, 8, 'scalable')::bytea FROM generate_series(1, 40) x
UNION ALL SELECT 'cuckoo', cuckoo_agg(x)::bytea FROM generate_series(1, 40) x
UNION ALL SELECT 'cuckoo b2', cuckoo_agg(x, 0.1, NULL, 'b2')::bytea FROM generate_series(1, 40) x
UNION ALL SELECT 'cuckoo b8', cuckoo_agg(x, 0.01, NULL, 'b8')::bytea FROM generate_series(1, 40) x
UNION ALL SELECT 'cuckoo semisorted', cuckoo_agg(x, 0.01, NULL, 'semisorted')::bytea
          FROM generate_series(1, 40) x;

-- Parses bytes as the named type; 'ok' or the SQLSTATE of the refusal.
CREATE FUNCTION pg_temp.parse(kind text, bytes bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF kind LIKE 'cuckoo%' THEN
		PERFORM bytes::cuckoo;
	ELSE
		PERFORM bytes::bloom;
	END IF;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;

-- Every single-bit flip, at every byte: all refused (22P02).
SELECT kind, count(*) = length(bytes) * 8 AS every_bit, r.result
FROM good, generate_series(0, length(bytes) * 8 - 1) bit,
     LATERAL (SELECT pg_temp.parse(kind, set_bit(bytes, bit, 1 - get_bit(bytes, bit)))) r(result)
GROUP BY kind, length(bytes), r.result ORDER BY kind;
-- Every truncation.
SELECT kind, count(*) = length(bytes) AS every_length, r.result
FROM good, generate_series(0, length(bytes) - 1) n,
     LATERAL (SELECT pg_temp.parse(kind, substr(bytes, 1, n))) r(result)
GROUP BY kind, length(bytes), r.result ORDER BY kind;
-- Random byte strings, and random payloads behind a valid header.
SELECT setseed(0.25);
SELECT r.result, count(*)
FROM generate_series(1, 2000) i,
     LATERAL (SELECT CASE WHEN i % 2 = 0 THEN 'bloom' ELSE 'cuckoo' END AS kind,
                     (SELECT string_agg(decode(lpad(to_hex((random() * 255)::int), 2, '0'), 'hex'), ''::bytea)
                      FROM generate_series(1, (random() * 150)::int + i % 3)) AS junk) j,
     LATERAL (SELECT pg_temp.parse(j.kind, coalesce(j.junk, ''::bytea))) r(result)
GROUP BY r.result;
SELECT r.result, count(*)
FROM good, generate_series(1, 200) i,
     LATERAL (SELECT substr(bytes, 1, 64) ||
                     (SELECT string_agg(decode(lpad(to_hex((random() * 255)::int), 2, '0'), 'hex'), ''::bytea)
                      FROM generate_series(1, length(bytes) - 64)) AS junk) j,
     LATERAL (SELECT pg_temp.parse(kind, j.junk)) r(result)
GROUP BY r.result;

-- Corruption behind the input checks (a superuser's identity cast standing
-- in for a damaged disk page): every function verifies what it reads.
CREATE FUNCTION pg_temp.unchecked_bloom(bytea, int4 DEFAULT -1, bool DEFAULT false)
	RETURNS bloom LANGUAGE internal IMMUTABLE STRICT AS 'varchar';
CREATE FUNCTION pg_temp.unchecked_cuckoo(bytea, int4 DEFAULT -1, bool DEFAULT false)
	RETURNS cuckoo LANGUAGE internal IMMUTABLE STRICT AS 'varchar';
CREATE TEMP TABLE damaged AS
SELECT pg_temp.unchecked_bloom(set_byte(bytes, 70, get_byte(bytes, 70) # 1)) AS b,
       pg_temp.unchecked_bloom('\x414d5146'::bytea) AS short_b,
       (SELECT pg_temp.unchecked_cuckoo(set_byte(bytes, 70, get_byte(bytes, 70) # 1))
        FROM good WHERE kind = 'cuckoo') AS c,
       (SELECT pg_temp.unchecked_bloom(bytes) FROM good WHERE kind = 'cuckoo') AS wrong_kind
FROM good WHERE kind = 'bloom';
SELECT bloom_contains(b, 1) FROM damaged;
SELECT b @> 1 FROM damaged;
SELECT 1 <@ b FROM damaged;
SELECT bloom_add(b, 1) FROM damaged;
SELECT bloom_union(b, (SELECT bloom_agg(1))) FROM damaged;
SELECT bloom_intersect((SELECT bloom_agg(1)), b) FROM damaged;
SELECT bloom_count(b) FROM damaged;
SELECT bloom_fpr(b) FROM damaged;
SELECT bloom_info(b) FROM damaged;
SELECT bloom_union_agg(b) FROM damaged;
SELECT bloom_contains(short_b, 1) FROM damaged;
SELECT bloom_info(short_b) FROM damaged;
SELECT bloom_contains(wrong_kind, 1) FROM damaged;
SELECT bloom_count(wrong_kind) FROM damaged;
SELECT cuckoo_contains(c, 1) FROM damaged;
SELECT cuckoo_count(c, 1) FROM damaged;
SELECT cuckoo_add(c, 1) FROM damaged;
SELECT cuckoo_delete(c, 1) FROM damaged;
SELECT cuckoo_info(c) FROM damaged;
-- A damaged filter in one row of many: the probe's cache refuses it too.
SELECT count(*) FROM (SELECT bloom_agg(x) AS f FROM generate_series(1, 40) x
                      UNION ALL SELECT b FROM damaged) s
WHERE bloom_contains(f, 3);

-- The backend is still alive and well.
SELECT bloom_contains(bloom_agg(x), 3) AS alive FROM generate_series(1, 10) x;
-- Counting and scalable filters damaged behind the input checks: their own
-- functions verify too, and a scalable chain with a damaged link table is
-- refused when it opens, before the checksum is read.
CREATE TEMP TABLE damaged_new AS
SELECT pg_temp.unchecked_bloom(set_byte(c.bytes, 70, get_byte(c.bytes, 70) # 1)) AS counting,
       pg_temp.unchecked_bloom(set_byte(s.bytes, 200, get_byte(s.bytes, 200) # 1)) AS scalable
FROM good c, good s WHERE c.kind = 'counting' AND s.kind = 'scalable';
SELECT bloom_delete(counting, 1) FROM damaged_new;
SELECT bloom_frequency(counting, 1) FROM damaged_new;
SELECT bloom_contains(scalable, 1) FROM damaged_new;
SELECT bloom_add(scalable, 1000) FROM damaged_new;
SELECT bloom_info(scalable) FROM damaged_new;
-- The cuckoo layouts 0.3.0 adds, damaged behind the input checks: every
-- cuckoo function refuses each of them.
CREATE TEMP TABLE damaged_cuckoo AS
SELECT kind, pg_temp.unchecked_cuckoo(set_byte(bytes, 70, get_byte(bytes, 70) # 1)) AS c
FROM good WHERE kind IN ('cuckoo b2', 'cuckoo b8', 'cuckoo semisorted');
SELECT cuckoo_contains(c, 1) FROM damaged_cuckoo WHERE kind = 'cuckoo b2';
SELECT cuckoo_count(c, 1) FROM damaged_cuckoo WHERE kind = 'cuckoo b8';
SELECT cuckoo_add(c, 1) FROM damaged_cuckoo WHERE kind = 'cuckoo semisorted';
SELECT cuckoo_delete(c, 1) FROM damaged_cuckoo WHERE kind = 'cuckoo semisorted';
SELECT cuckoo_info(c) FROM damaged_cuckoo WHERE kind = 'cuckoo b8';
SELECT c @> 1 FROM damaged_cuckoo WHERE kind = 'cuckoo semisorted';
-- The bulk aggregates and cuckoo_add_unique verify the first row's filter;
-- a later row whose header is not the first row's is another filter.
SELECT bloom_add_agg(b, 1) FROM damaged;
SELECT bloom_add_agg(short_b, 1) FROM damaged;
SELECT bloom_add_agg(wrong_kind, 1) FROM damaged;
SELECT bloom_delete_agg(counting, 1) FROM damaged_new;
SELECT bloom_add_agg(scalable, 1) FROM damaged_new;
SELECT cuckoo_add_agg(c, 1) FROM damaged;
SELECT cuckoo_delete_agg(c, 1) FROM damaged;
SELECT cuckoo_add_unique(c, 1) FROM damaged;
SELECT bloom_add_agg(f, 1) FROM (SELECT bloom_agg(x) AS f FROM generate_series(1, 40) x
                                 UNION ALL SELECT short_b FROM damaged) s;
