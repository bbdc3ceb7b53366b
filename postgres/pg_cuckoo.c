/*
 * pg_cuckoo.c - the scalar SQL functions over the cuckoo type: cuckoo_new,
 * cuckoo_add, cuckoo_delete, cuckoo_contains (and the @> / <@ operators),
 * cuckoo_count and cuckoo_info. As for bloom, a changed filter is a sealed
 * fresh copy. A full filter is an error, and then nothing was changed.
 */
#include "postgres.h"

#include "utils/fmgrprotos.h"

#include "amq_pg.h"

AMQ_PG_FUNCTION(amq_pg_cuckoo_new);
AMQ_PG_FUNCTION(amq_pg_cuckoo_add);
AMQ_PG_FUNCTION(amq_pg_cuckoo_delete);
AMQ_PG_FUNCTION(amq_pg_cuckoo_contains);
AMQ_PG_FUNCTION(amq_pg_cuckoo_contained_in);
AMQ_PG_FUNCTION(amq_pg_cuckoo_count);
AMQ_PG_FUNCTION(amq_pg_cuckoo_info);

/* cuckoo_new(capacity bigint, fpr float8 = 0.01) */
Datum amq_pg_cuckoo_new(PG_FUNCTION_ARGS)
{
	int64 capacity = PG_GETARG_INT64(0);
	double fpr = PG_GETARG_FLOAT8(1);
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	amq_filter f;
	amq_error err;
	struct varlena *result;

	amq_pg_check(amq_check_capacity(capacity, &err), &err);
	amq_pg_check(amq_check_fpr(fpr, &err), &err);
	amq_pg_check(amq_cuckoo_create(&f, (uint64)capacity, fpr, AMQ_DEFAULT_SEED, &a, &err),
		     &err);
	result = amq_pg_filter_to_varlena(&f);
	amq_filter_free(&f, &a);
	PG_RETURN_POINTER(result);
}

/* cuckoo_add(filter, value): a copy holding one more copy of value. */
Datum amq_pg_cuckoo_add(PG_FUNCTION_ARGS)
{
	struct varlena *result;
	amq_filter f;
	amq_error err;
	uint64 hash;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	result = amq_pg_copy_filter(PG_GETARG_DATUM(0), AMQ_KIND_CUCKOO, &f);
	hash = amq_pg_hash_value(amq_pg_cached_hasher(fcinfo, 1), PG_GETARG_DATUM(1), f.seed);
	amq_pg_check(amq_cuckoo_add(&f, hash, &err), &err);
	amq_filter_seal(&f);
	PG_RETURN_POINTER(result);
}

/* cuckoo_delete(filter, value): a copy with one copy of value removed. */
Datum amq_pg_cuckoo_delete(PG_FUNCTION_ARGS)
{
	struct varlena *result;
	amq_filter f;
	uint64 hash;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	result = amq_pg_copy_filter(PG_GETARG_DATUM(0), AMQ_KIND_CUCKOO, &f);
	hash = amq_pg_hash_value(amq_pg_cached_hasher(fcinfo, 1), PG_GETARG_DATUM(1), f.seed);
	if (amq_cuckoo_delete(&f, hash))
		amq_filter_seal(&f);
	PG_RETURN_POINTER(result);
}

/* cuckoo_contains(filter, value), also filter @> value. */
Datum amq_pg_cuckoo_contains(PG_FUNCTION_ARGS)
{
	uint64 hash;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, AMQ_KIND_CUCKOO, &hash);

	PG_RETURN_BOOL(amq_cuckoo_contains(f, hash));
}

/* value <@ filter: cuckoo_contains with the arguments swapped. */
Datum amq_pg_cuckoo_contained_in(PG_FUNCTION_ARGS)
{
	uint64 hash;
	const amq_filter *f = amq_pg_probe(fcinfo, 1, 0, AMQ_KIND_CUCKOO, &hash);

	PG_RETURN_BOOL(amq_cuckoo_contains(f, hash));
}

/* cuckoo_count(filter, value): copies of value's fingerprint stored. */
Datum amq_pg_cuckoo_count(PG_FUNCTION_ARGS)
{
	uint64 hash;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, AMQ_KIND_CUCKOO, &hash);

	PG_RETURN_INT32((int32)amq_cuckoo_count(f, hash));
}

/* cuckoo_info(filter): the core's description as jsonb. */
Datum amq_pg_cuckoo_info(PG_FUNCTION_ARGS)
{
	char json[512];
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), AMQ_KIND_CUCKOO, &f);
	amq_filter_info_json(&f, json, sizeof(json));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}
