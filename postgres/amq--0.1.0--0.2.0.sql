-- amq 0.1.0 -> 0.2.0: Bloom filters made through SQL are blocked by default,
-- the aggregates take a layout as a 4th argument, the counting layout brings
-- bloom_delete and bloom_frequency, and the scalable layout bloom_new with an
-- expansion. Stored filters of every 0.1.0 kind
-- and layout read unchanged and are written unchanged (format version 1);
-- only the new layouts are written as format version 2.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.2.0'" to load this file. \quit

-- bloom_new: same signature, new default layout.
CREATE OR REPLACE FUNCTION bloom_new(capacity bigint, fpr float8, layout text DEFAULT 'blocked')
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

-- bloom_agg(value, fpr, capacity, layout) and cuckoo_agg(value, fpr,
-- capacity, layout). PostgreSQL aggregates take no named arguments: pass
-- NULL as the capacity to size the filter for the distinct values seen.
CREATE FUNCTION bloom_agg_trans(internal, anycompatible, float8, bigint, text) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_bloom_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE bloom_agg(anycompatible, float8, bigint, text) (
	SFUNC = bloom_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);

CREATE FUNCTION cuckoo_agg_trans(internal, anycompatible, float8, bigint, text) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE cuckoo_agg(anycompatible, float8, bigint, text) (
	SFUNC = cuckoo_agg_trans, STYPE = internal, FINALFUNC = cuckoo_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);

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
