-- amq 0.3.0: the bloom and cuckoo types, their functions, aggregates and
-- operators. Values of both types are the portable serialized filters of
-- docs/FORMAT.md, byte for byte the blobs the SQLite extension stores.

\echo Use "CREATE EXTENSION amq" to load this file. \quit

-- ---------------------------------------------------------------- types

CREATE TYPE bloom;
CREATE TYPE cuckoo;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_out(bloom) RETURNS cstring
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_recv(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_send(bloom) RETURNS bytea
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: filter bits do not compress, and an uncompressed value
-- lets a probe read the 64-byte header alone.
CREATE TYPE bloom (
	INPUT = bloom_in,
	OUTPUT = bloom_out,
	RECEIVE = bloom_recv,
	SEND = bloom_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = external
);

CREATE FUNCTION cuckoo_in(cstring) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cuckoo_out(cuckoo) RETURNS cstring
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cuckoo_recv(internal) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cuckoo_send(cuckoo) RETURNS bytea
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE cuckoo (
	INPUT = cuckoo_in,
	OUTPUT = cuckoo_out,
	RECEIVE = cuckoo_recv,
	SEND = cuckoo_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = external
);

-- bytea -> filter checks the bytes; filter -> bytea is the same bytes.
CREATE FUNCTION bloom(bytea) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION cuckoo(bytea) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (bytea AS bloom) WITH FUNCTION bloom(bytea) AS ASSIGNMENT;
CREATE CAST (bloom AS bytea) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (bytea AS cuckoo) WITH FUNCTION cuckoo(bytea) AS ASSIGNMENT;
CREATE CAST (cuckoo AS bytea) WITHOUT FUNCTION AS ASSIGNMENT;

-- ---------------------------------------------------------------- common

CREATE FUNCTION amq_hash(anycompatible) RETURNS bigint
	AS 'MODULE_PATHNAME', 'amq_pg_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION amq_version() RETURNS text
	AS 'MODULE_PATHNAME', 'amq_pg_version' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 1;

-- ---------------------------------------------------------------- bloom

-- Functions that read or write the whole filter cost O(size): COST 100.
-- Probes read a cached parse and touch a few cache lines: COST 1.

CREATE FUNCTION bloom_new(capacity bigint, fpr float8, layout text DEFAULT 'blocked')
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
-- Not STRICT: a NULL value returns the filter unchanged.
CREATE FUNCTION bloom_add(filter bloom, value anycompatible) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_contains(filter bloom, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION bloom_contained_in(value anycompatible, filter bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_contained_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION bloom_union(a bloom, b bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_intersect(a bloom, b bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_intersect' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_count(filter bloom) RETURNS bigint
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_fpr(filter bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_fpr' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_info(filter bloom) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

-- The counting Bloom filter (layout 'counting', format version 2): delete a
-- value that was added, and how often a value was added.
CREATE FUNCTION bloom_delete(filter bloom, value anycompatible) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_delete' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION bloom_frequency(filter bloom, value anycompatible) RETURNS bigint
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_frequency' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;

-- The scalable Bloom filter (layout 'scalable', format version 2): a chain
-- that grows by expansion times per link.
CREATE FUNCTION bloom_new(capacity bigint, fpr float8, layout text, expansion integer)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

-- filter @> value and value <@ filter: bloom_contains.
CREATE OPERATOR @> (
	LEFTARG = bloom, RIGHTARG = anycompatible, FUNCTION = bloom_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = anycompatible, RIGHTARG = bloom, FUNCTION = bloom_contained_in,
	COMMUTATOR = @>
);

-- ---------------------------------------------------------------- cuckoo

CREATE FUNCTION cuckoo_new(capacity bigint, fpr float8 DEFAULT 0.01) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
-- A cuckoo filter of a named layout: 'b2', 'b4' or 'b8' (fingerprints per
-- bucket) or 'semisorted' (b4 in one bit less per item). Without it the
-- layout is the bucket size with the fewest bits per item for the fpr.
CREATE FUNCTION cuckoo_new(capacity bigint, fpr float8, layout text) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;
CREATE FUNCTION cuckoo_add(filter cuckoo, value anycompatible) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION cuckoo_delete(filter cuckoo, value anycompatible) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_delete' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;
CREATE FUNCTION cuckoo_contains(filter cuckoo, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION cuckoo_contained_in(value anycompatible, filter cuckoo) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_contained_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION cuckoo_count(filter cuckoo, value anycompatible) RETURNS integer
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION cuckoo_info(filter cuckoo) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

CREATE OPERATOR @> (
	LEFTARG = cuckoo, RIGHTARG = anycompatible, FUNCTION = cuckoo_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = anycompatible, RIGHTARG = cuckoo, FUNCTION = cuckoo_contained_in,
	COMMUTATOR = @>
);

-- ---------------------------------------------------------------- aggregates

-- bloom_agg / cuckoo_agg: an amq builder as internal state. The support
-- functions are internal; their names start with amq_agg_ or the aggregate's.
-- Arguments (value [, fpr [, capacity [, layout]]]), positional only (an
-- aggregate takes no named arguments): a NULL capacity sizes the filter for
-- the distinct values seen, a NULL layout is the default one.
CREATE FUNCTION amq_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION amq_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'amq_pg_agg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION amq_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_agg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_agg_trans(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, anycompatible, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, anycompatible, float8, bigint) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_trans(internal, anycompatible, float8, bigint, text) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(anycompatible) (
	SFUNC = bloom_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(anycompatible, float8) (
	SFUNC = bloom_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(anycompatible, float8, bigint) (
	SFUNC = bloom_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE bloom_agg(anycompatible, float8, bigint, text) (
	SFUNC = bloom_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);

CREATE FUNCTION cuckoo_agg_trans(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_agg_trans(internal, anycompatible, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_agg_trans(internal, anycompatible, float8, bigint) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_agg_trans(internal, anycompatible, float8, bigint, text) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_agg_final(internal) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE cuckoo_agg(anycompatible) (
	SFUNC = cuckoo_agg_trans, STYPE = internal, FINALFUNC = cuckoo_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE cuckoo_agg(anycompatible, float8) (
	SFUNC = cuckoo_agg_trans, STYPE = internal, FINALFUNC = cuckoo_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE cuckoo_agg(anycompatible, float8, bigint) (
	SFUNC = cuckoo_agg_trans, STYPE = internal, FINALFUNC = cuckoo_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE cuckoo_agg(anycompatible, float8, bigint, text) (
	SFUNC = cuckoo_agg_trans, STYPE = internal, FINALFUNC = cuckoo_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);

CREATE FUNCTION bloom_union_agg_trans(internal, bloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union_agg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union_agg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloom_union_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_union_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE bloom_union_agg(bloom) (
	SFUNC = bloom_union_agg_trans, STYPE = internal, FINALFUNC = bloom_union_agg_final,
	COMBINEFUNC = bloom_union_agg_combine, SERIALFUNC = bloom_union_agg_serialize,
	DESERIALFUNC = bloom_union_agg_deserialize, PARALLEL = SAFE
);

-- ---------------------------------------------------------------- add if absent, bulk maintenance

-- cuckoo_add_unique: cuckoo_add unless the filter may hold the value already
-- (then the filter unchanged; a false positive skips a new value). Not
-- STRICT: a NULL value returns the filter unchanged.
CREATE FUNCTION cuckoo_add_unique(filter cuckoo, value anycompatible) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_add_unique' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100;

-- bloom_add_agg, bloom_delete_agg, cuckoo_add_agg, cuckoo_delete_agg(filter,
-- value): the one filter every row passes, with every row's value added or
-- deleted, in O(size + rows). No combine function: a cuckoo filter's bytes
-- depend on the order of its adds (use ORDER BY for repeatable bytes), and the
-- four stay alike; a parallel plan runs them above the Gather. No rows: NULL.
CREATE FUNCTION bloom_add_agg_trans(internal, bloom, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_add_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_add_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_bulk_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE bloom_add_agg(bloom, anycompatible) (
	SFUNC = bloom_add_agg_trans, STYPE = internal, FINALFUNC = bloom_add_agg_final,
	PARALLEL = SAFE
);
CREATE FUNCTION bloom_delete_agg_trans(internal, bloom, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_delete_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION bloom_delete_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_bulk_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE bloom_delete_agg(bloom, anycompatible) (
	SFUNC = bloom_delete_agg_trans, STYPE = internal, FINALFUNC = bloom_delete_agg_final,
	PARALLEL = SAFE
);
CREATE FUNCTION cuckoo_add_agg_trans(internal, cuckoo, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_add_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_add_agg_final(internal) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_bulk_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE cuckoo_add_agg(cuckoo, anycompatible) (
	SFUNC = cuckoo_add_agg_trans, STYPE = internal, FINALFUNC = cuckoo_add_agg_final,
	PARALLEL = SAFE
);
CREATE FUNCTION cuckoo_delete_agg_trans(internal, cuckoo, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_delete_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION cuckoo_delete_agg_final(internal) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_bulk_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE cuckoo_delete_agg(cuckoo, anycompatible) (
	SFUNC = cuckoo_delete_agg_trans, STYPE = internal, FINALFUNC = cuckoo_delete_agg_final,
	PARALLEL = SAFE
);
