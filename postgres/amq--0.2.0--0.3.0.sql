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
