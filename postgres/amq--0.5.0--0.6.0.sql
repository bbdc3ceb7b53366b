-- amq 0.5.0 -> 0.6.0: the binary fuse filter (Graf & Lemire, 2022), a type
-- of its own, fuse: built whole by fuse_agg from every value, about 9 bits
-- per value at 0.39% false positives (8-bit fingerprints) or 18 at 0.0015%
-- (16-bit), probed by fuse_contains and @> / <@. It has no single adds,
-- deletes or merges. Its filters are format version 5, which amq 0.5.0 and
-- earlier refuse as "written by a newer amq". Hash joins ship fuse filters to
-- postgres_fdw scans when amq.join_filter_remote_filter says so and the
-- shards run 0.6.0 or later: the shards then need the fuse type and the
-- probe's overload below.

\echo Use "ALTER EXTENSION amq UPDATE TO '0.6.0'" to load this file. \quit

CREATE TYPE fuse;

CREATE FUNCTION fuse_in(cstring) RETURNS fuse
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION fuse_out(fuse) RETURNS cstring
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION fuse_recv(internal) RETURNS fuse
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION fuse_send(fuse) RETURNS bytea
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external, as bloom and cuckoo: fingerprints do not compress.
CREATE TYPE fuse (
	INPUT = fuse_in,
	OUTPUT = fuse_out,
	RECEIVE = fuse_recv,
	SEND = fuse_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = external
);

-- bytea -> fuse checks the bytes; fuse -> bytea is the same bytes.
CREATE FUNCTION fuse(bytea) RETURNS fuse
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (bytea AS fuse) WITH FUNCTION fuse(bytea) AS ASSIGNMENT;
CREATE CAST (fuse AS bytea) WITHOUT FUNCTION AS ASSIGNMENT;

CREATE FUNCTION fuse_contains(filter fuse, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION fuse_contained_in(value anycompatible, filter fuse) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_contained_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1;
CREATE FUNCTION fuse_info(filter fuse) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 100;

-- filter @> value and value <@ filter: fuse_contains.
CREATE OPERATOR @> (
	LEFTARG = fuse, RIGHTARG = anycompatible, FUNCTION = fuse_contains,
	COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = anycompatible, RIGHTARG = fuse, FUNCTION = fuse_contained_in,
	COMMUTATOR = @>
);

-- fuse_agg(value [, fpr]): an amq builder as internal state, as bloom_agg's,
-- parallel safe with the same combine and serial functions. The build holds
-- every distinct value's hash and its peeling arrays in memory, about 24
-- bytes a value: past work_mem it is an error that names bloom_agg.
CREATE FUNCTION fuse_agg_trans(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION fuse_agg_trans(internal, anycompatible, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION fuse_agg_final(internal) RETURNS fuse
	AS 'MODULE_PATHNAME', 'amq_pg_fuse_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE fuse_agg(anycompatible) (
	SFUNC = fuse_agg_trans, STYPE = internal, FINALFUNC = fuse_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);
CREATE AGGREGATE fuse_agg(anycompatible, float8) (
	SFUNC = fuse_agg_trans, STYPE = internal, FINALFUNC = fuse_agg_final,
	COMBINEFUNC = amq_agg_combine, SERIALFUNC = amq_agg_serialize,
	DESERIALFUNC = amq_agg_deserialize, PARALLEL = SAFE
);

-- amq_join_filter_probe(fuse, value): the judged probe a hash join ships to a
-- postgres_fdw scan, for a binary fuse filter (amq.join_filter_remote_filter =
-- 'fuse'); fuse_contains, switched off where it does not pay, as the bloom
-- one. VOLATILE, as that one: not for indexes or constraints.
CREATE FUNCTION amq_join_filter_probe(filter fuse, value anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'amq_pg_join_filter_probe_fuse' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
