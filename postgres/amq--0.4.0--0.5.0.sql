-- amq 0.4.0 -> 0.5.0: the probe a hash join ships into a postgres_fdw scan
-- judges whether it pays, on the shard. The coordinator ships it to remote
-- servers whose amq is 0.5.0 or later (amq.join_filter_remote_shard_version):
-- update amq on the shards first.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.5.0'" to load this file. \quit

-- amq_join_filter_probe(filter, value): bloom_contains, until the filter stops
-- paying at this call site. Over windows of 10,000 rows it counts how many
-- pass; a window where more than 90% passed switches the probe off for a
-- stretch of rows, each passed unprobed (true), the stretch doubling at each
-- further switch-off, as a local join filter's probe does. It never answers
-- false for a value the filter holds. Its answers depend on the rows before,
-- so it is VOLATILE: not for indexes or constraints (use bloom_contains).
CREATE FUNCTION amq_join_filter_probe(filter bloom, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_join_filter_probe' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
