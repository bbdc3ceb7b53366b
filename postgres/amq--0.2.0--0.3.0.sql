-- amq 0.2.0 -> 0.3.0: cuckoo filters with buckets of 2, 4 or 8 fingerprints
-- and semi-sorted buckets, add-if-absent, and aggregates that add rows to (or
-- delete them from) an existing filter in one pass. Stored filters of every
-- 0.2.0 kind and layout read unchanged and are written unchanged; only the
-- new cuckoo layouts are written as format version 3.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.3.0'" to load this file. \quit

-- Cuckoo layouts: cuckoo_new takes a layout, 'b2', 'b4' or 'b8'
-- (fingerprints per bucket) or 'semisorted' (b4 in one bit less per item);
-- cuckoo_agg's 4th argument takes the same names. Without a layout a filter
-- gets the bucket size with the fewest bits per item for its fpr.
CREATE FUNCTION cuckoo_new(capacity bigint, fpr float8, layout text) RETURNS cuckoo
	AS 'MODULE_PATHNAME', 'amq_pg_cuckoo_new' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

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
