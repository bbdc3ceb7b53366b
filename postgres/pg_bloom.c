/*
 * pg_bloom.c - the scalar SQL functions over the bloom type: bloom_new,
 * bloom_add, bloom_contains (and the @> / <@ operators), bloom_union,
 * bloom_intersect, bloom_count, bloom_fpr and bloom_info. Functions that
 * return a changed filter work on a fresh copy, change it through the core
 * and seal it (header fields and checksum) before returning it.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "amq_pg.h"

AMQ_PG_FUNCTION(amq_pg_bloom_new);
AMQ_PG_FUNCTION(amq_pg_bloom_add);
AMQ_PG_FUNCTION(amq_pg_bloom_contains);
AMQ_PG_FUNCTION(amq_pg_bloom_contained_in);
AMQ_PG_FUNCTION(amq_pg_bloom_union);
AMQ_PG_FUNCTION(amq_pg_bloom_intersect);
AMQ_PG_FUNCTION(amq_pg_bloom_count);
AMQ_PG_FUNCTION(amq_pg_bloom_fpr);
AMQ_PG_FUNCTION(amq_pg_bloom_info);

/* bloom_new(capacity bigint, fpr float8, layout text = 'blocked') */
Datum amq_pg_bloom_new(PG_FUNCTION_ARGS)
{
	int64 capacity = PG_GETARG_INT64(0);
	double fpr = PG_GETARG_FLOAT8(1);
	text *layout_name = PG_GETARG_TEXT_PP(2);
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	amq_layout layout;
	amq_filter f;
	amq_error err;
	struct varlena *result;

	amq_pg_check(amq_check_capacity(capacity, &err), &err);
	amq_pg_check(amq_check_fpr(fpr, &err), &err);
	amq_pg_check(amq_parse_layout(AMQ_KIND_BLOOM, VARDATA_ANY(layout_name),
				      VARSIZE_ANY_EXHDR(layout_name), &layout, &err),
		     &err);
	amq_pg_check(
	    amq_bloom_create(&f, (uint64)capacity, fpr, layout, AMQ_DEFAULT_SEED, &a, &err), &err);
	result = amq_pg_filter_to_varlena(&f);
	amq_filter_free(&f, &a);
	PG_RETURN_POINTER(result);
}

/* bloom_add(filter, value): a copy with value added; NULL value: filter as is. */
Datum amq_pg_bloom_add(PG_FUNCTION_ARGS)
{
	const amq_pg_hasher *hasher;
	struct varlena *result;
	amq_filter f;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	result = amq_pg_copy_filter(PG_GETARG_DATUM(0), AMQ_KIND_BLOOM, &f);
	hasher = amq_pg_cached_hasher(fcinfo, 1);
	amq_bloom_add(&f, amq_pg_hash_value(hasher, PG_GETARG_DATUM(1), f.seed));
	amq_filter_seal(&f);
	PG_RETURN_POINTER(result);
}

/* bloom_contains(filter, value), also filter @> value. */
Datum amq_pg_bloom_contains(PG_FUNCTION_ARGS)
{
	uint64 hash;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, AMQ_KIND_BLOOM, &hash);

	PG_RETURN_BOOL(amq_bloom_contains(f, hash));
}

/* value <@ filter: bloom_contains with the arguments swapped. */
Datum amq_pg_bloom_contained_in(PG_FUNCTION_ARGS)
{
	uint64 hash;
	const amq_filter *f = amq_pg_probe(fcinfo, 1, 0, AMQ_KIND_BLOOM, &hash);

	PG_RETURN_BOOL(amq_bloom_contains(f, hash));
}

/* A copy of the first filter combined with the second: union or intersection. */
static Datum combine(FunctionCallInfo fcinfo, bool intersect)
{
	amq_filter a, b;
	amq_error err;
	struct varlena *result = amq_pg_copy_filter(PG_GETARG_DATUM(0), AMQ_KIND_BLOOM, &a);

	amq_pg_read_filter(PG_GETARG_DATUM(1), AMQ_KIND_BLOOM, &b);
	if (intersect)
		amq_pg_check(amq_bloom_intersect_into(&a, &b, &err), &err);
	else
		amq_pg_check(amq_bloom_union_into(&a, &b, &err), &err);
	amq_filter_seal(&a);
	PG_RETURN_POINTER(result);
}

Datum amq_pg_bloom_union(PG_FUNCTION_ARGS)
{
	return combine(fcinfo, false);
}

Datum amq_pg_bloom_intersect(PG_FUNCTION_ARGS)
{
	return combine(fcinfo, true);
}

/* bloom_count(filter): distinct items estimated from the bits set, rounded. */
Datum amq_pg_bloom_count(PG_FUNCTION_ARGS)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), AMQ_KIND_BLOOM, &f);
	PG_RETURN_INT64((int64)round(amq_bloom_estimate_items(&f)));
}

/* bloom_fpr(filter): the false-positive rate an absent value sees now. */
Datum amq_pg_bloom_fpr(PG_FUNCTION_ARGS)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), AMQ_KIND_BLOOM, &f);
	PG_RETURN_FLOAT8(amq_bloom_expected_fpr(&f));
}

/* bloom_info(filter): the core's description as jsonb. */
Datum amq_pg_bloom_info(PG_FUNCTION_ARGS)
{
	char json[512];
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), AMQ_KIND_BLOOM, &f);
	amq_filter_info_json(&f, json, sizeof(json));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}
