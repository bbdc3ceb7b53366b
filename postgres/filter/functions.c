/*
 * filter/functions.c - the scalar SQL functions over the bloom and cuckoo types,
 * written once for every kind: each generic function below takes the
 * amq_pg_call (kind and SQL name) that one macro line per kind and SQL name
 * hands it (AMQ_PG_KIND_FUNCTION, at the end of the file), and core's variant
 * table does the rest. Functions that return a changed filter work on a fresh
 * copy, change it through the core and seal it (header fields and checksum)
 * before returning it.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "filter/filter.h"

/* bloom_new(capacity bigint, fpr float8, layout text = 'blocked' [,
 * expansion integer]), cuckoo_new(capacity bigint, fpr float8 = 0.01 [,
 * layout text]) */
static Datum new_filter(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	int64 capacity = PG_GETARG_INT64(0);
	double fpr = PG_GETARG_FLOAT8(1);
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	amq_layout layout = amq_default_layout(call->kind, fpr);
	int32 expansion = PG_NARGS() > 3 ? PG_GETARG_INT32(3) : 0;
	amq_filter f;
	amq_error err;
	struct varlena *result;

	amq_pg_check(amq_check_capacity(capacity, &err), &err);
	amq_pg_check(amq_check_fpr(fpr, &err), &err);
	if (PG_NARGS() > 2) {
		text *name = PG_GETARG_TEXT_PP(2);

		amq_pg_check(amq_parse_layout(call->kind, VARDATA_ANY(name),
					      VARSIZE_ANY_EXHDR(name), &layout, &err),
			     &err);
	}
	if (PG_NARGS() > 3 && (expansion < 1 || expansion > AMQ_SCALABLE_MAX_EXPANSION))
		ereport(ERROR, errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			errmsg("%s: expansion must be between 1 and %d, got %d", call->name,
			       AMQ_SCALABLE_MAX_EXPANSION, expansion));
	amq_pg_check(amq_filter_create_expanding(&f, call->kind, layout, (uint64)capacity, fpr,
						 (uint32)expansion, AMQ_DEFAULT_SEED, &a, &err),
		     &err);
	result = amq_pg_filter_to_varlena(&f);
	amq_filter_free(&f, &a);
	PG_RETURN_POINTER(result);
}

/* bloom_add(filter, value), cuckoo_add(filter, value): a copy with value
 * added (a scalable filter may grow, so the copy is a core buffer turned
 * into the result); NULL value: the filter as is. A full cuckoo filter is an
 * error. With unique (cuckoo_add_unique), the filter itself when it may hold
 * the value already: a false positive then skips a new value. */
static Datum add_value(FunctionCallInfo fcinfo, const amq_pg_call *call, bool unique)
{
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	struct varlena *result;
	amq_filter src, f;
	amq_error err;
	uint64 hash;
	bool added = true;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &src);
	hash = amq_pg_hash_value(amq_pg_cached_hasher(fcinfo, 1), PG_GETARG_DATUM(1), src.seed);
	if (unique) {
		amq_pg_check(amq_filter_add_unique(&src, hash, &f, &added, &a, &err), &err);
	} else {
		amq_pg_check(amq_filter_clone(&f, &src, &a, &err), &err);
		amq_pg_check(amq_filter_add_to(&f, hash, &a, &err), &err);
		amq_filter_seal(&f);
	}
	if (!added)
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	result = amq_pg_filter_to_varlena(&f);
	amq_filter_free(&f, &a);
	PG_RETURN_POINTER(result);
}

static Datum add(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	return add_value(fcinfo, call, false);
}

static Datum add_unique(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	return add_value(fcinfo, call, true);
}

/* cuckoo_delete(filter, value), bloom_delete(filter, value): a copy with one
 * copy of value removed (unchanged when none is stored); an error for a
 * variant that cannot delete. */
static Datum delete (FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	struct varlena *result;
	amq_filter f;
	amq_error err;
	uint64 hash;
	bool removed;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	result = amq_pg_copy_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	hash = amq_pg_hash_value(amq_pg_cached_hasher(fcinfo, 1), PG_GETARG_DATUM(1), f.seed);
	amq_pg_check(amq_filter_remove(&f, hash, &removed, &err), &err);
	if (removed)
		amq_filter_seal(&f);
	PG_RETURN_POINTER(result);
}

/* bloom_contains(filter, value), also filter @> value. */
static Datum contains(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	uint64 hash;
	amq_probe probe;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, call, &probe, &hash);

	PG_RETURN_BOOL(probe(f, hash));
}

/* value <@ filter: contains with the arguments swapped. */
static Datum contained_in(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	uint64 hash;
	amq_probe probe;
	const amq_filter *f = amq_pg_probe(fcinfo, 1, 0, call, &probe, &hash);

	PG_RETURN_BOOL(probe(f, hash));
}

/* cuckoo_count(filter, value) (int4), bloom_frequency(filter, value)
 * (bigint): how many times value was added, never less than the truth. */
static uint64 frequency(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	uint64 hash, count;
	amq_probe probe;
	amq_error err;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, call, &probe, &hash);

	amq_pg_check(amq_filter_frequency(f, hash, &count, &err), &err);
	return count;
}

static Datum frequency_int4(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	PG_RETURN_INT32((int32)Min(frequency(fcinfo, call), (uint64)PG_INT32_MAX));
}

static Datum frequency_int8(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	PG_RETURN_INT64((int64)Min(frequency(fcinfo, call), (uint64)PG_INT64_MAX));
}

/* A copy of the first filter combined with the second: union or intersection. */
static Datum combine(FunctionCallInfo fcinfo, const amq_pg_call *call, bool intersect)
{
	amq_filter a, b;
	amq_error err;
	struct varlena *result = amq_pg_copy_filter(PG_GETARG_DATUM(0), call, "first filter", &a);

	amq_pg_read_filter(PG_GETARG_DATUM(1), call, "second filter", &b);
	if (intersect)
		amq_pg_check(amq_filter_intersect_into(&a, &b, &err), &err);
	else
		amq_pg_check(amq_filter_union_into(&a, &b, &err), &err);
	amq_filter_seal(&a);
	PG_RETURN_POINTER(result);
}

static Datum union_of(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	return combine(fcinfo, call, false);
}

static Datum intersection(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	return combine(fcinfo, call, true);
}

/* bloom_count(filter): distinct items estimated, rounded. */
static Datum estimate(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	PG_RETURN_INT64((int64)round(amq_filter_estimate_items(&f)));
}

/* bloom_fpr(filter): the false-positive rate an absent value sees now. */
static Datum expected_fpr(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	PG_RETURN_FLOAT8(amq_filter_expected_fpr(&f));
}

/* bloom_info(filter), cuckoo_info(filter): the core's description as jsonb. */
static Datum info(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	char json[AMQ_INFO_MAX];
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	amq_filter_info_json(&f, json, sizeof(json));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* The entry points of amq--*.sql: one line per kind and SQL function. */
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_new, new_filter, AMQ_KIND_BLOOM, "bloom_new")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_add, add, AMQ_KIND_BLOOM, "bloom_add")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_contains, contains, AMQ_KIND_BLOOM, "bloom_contains")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_contained_in, contained_in, AMQ_KIND_BLOOM, "bloom_contains")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_union, union_of, AMQ_KIND_BLOOM, "bloom_union")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_intersect, intersection, AMQ_KIND_BLOOM, "bloom_intersect")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_count, estimate, AMQ_KIND_BLOOM, "bloom_count")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_fpr, expected_fpr, AMQ_KIND_BLOOM, "bloom_fpr")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_info, info, AMQ_KIND_BLOOM, "bloom_info")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_delete, delete, AMQ_KIND_BLOOM, "bloom_delete")
AMQ_PG_KIND_FUNCTION(amq_pg_bloom_frequency, frequency_int8, AMQ_KIND_BLOOM, "bloom_frequency")

AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_new, new_filter, AMQ_KIND_CUCKOO, "cuckoo_new")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_add, add, AMQ_KIND_CUCKOO, "cuckoo_add")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_add_unique, add_unique, AMQ_KIND_CUCKOO, "cuckoo_add_unique")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_delete, delete, AMQ_KIND_CUCKOO, "cuckoo_delete")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_contains, contains, AMQ_KIND_CUCKOO, "cuckoo_contains")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_contained_in, contained_in, AMQ_KIND_CUCKOO, "cuckoo_contains")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_count, frequency_int4, AMQ_KIND_CUCKOO, "cuckoo_count")
AMQ_PG_KIND_FUNCTION(amq_pg_cuckoo_info, info, AMQ_KIND_CUCKOO, "cuckoo_info")

/* The two functions that belong to no filter kind: amq_hash(value), the hash
 * every filter function uses (seed 0), and amq_version(). */
AMQ_PG_FUNCTION(amq_pg_hash);
AMQ_PG_FUNCTION(amq_pg_version);

/* amq_hash(value): the 64-bit hash as a signed bigint. */
Datum amq_pg_hash(PG_FUNCTION_ARGS)
{
	const amq_pg_hasher *h = amq_pg_cached_hasher(fcinfo, 0);

	PG_RETURN_INT64((int64)amq_pg_hash_value(h, PG_GETARG_DATUM(0), AMQ_DEFAULT_SEED));
}

/* amq_version(): the library's version, AMQ_VERSION. */
Datum amq_pg_version(PG_FUNCTION_ARGS)
{
	(void)fcinfo;
	PG_RETURN_TEXT_P(cstring_to_text(AMQ_VERSION));
}
