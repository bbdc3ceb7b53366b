/*
 * filter/functions.c - the scalar SQL functions over the bloom and cuckoo types,
 * written once for every kind: each generic function below takes the
 * amq_pg_call (kind, SQL name and operation) that its entry point hands it
 * (filter/entries.c, one per row of core/sql/function_list.h), and core's
 * variant table does the rest. Functions that return a changed filter work on
 * a fresh copy, change it through the core and seal it (header fields and
 * checksum) before returning it.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "filter/filter.h"

/* bloom_new(capacity bigint, fpr float8, layout text = 'blocked' [,
 * expansion integer]), cuckoo_new(capacity bigint, fpr float8 = 0.01 [,
 * layout text]): the defaults and checks are core's (sql/arguments.h). */
Datum amq_pg_op_new(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	amq_sql_sizing s;
	amq_filter f;
	amq_error err;

	amq_sql_sizing_init(&s, call->kind);
	amq_pg_check(amq_sql_set_capacity(&s, PG_GETARG_INT64(0), &err), &err);
	amq_pg_check(amq_sql_set_fpr(&s, PG_GETARG_FLOAT8(1), &err), &err);
	if (PG_NARGS() > 2) {
		text *name = PG_GETARG_TEXT_PP(2);

		amq_pg_check(
		    amq_sql_set_layout(&s, VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name), &err), &err);
	}
	if (PG_NARGS() > 3)
		amq_pg_check(amq_sql_set_expansion(&s, PG_GETARG_INT32(3), &err), &err);
	amq_pg_check(amq_sql_create(&f, &s, &a, &err), &err);
	PG_RETURN_POINTER(amq_pg_into_varlena(f.bytes, f.size));
}

/* bloom_add(filter, value), cuckoo_add(filter, value): a copy with value
 * added and its family recorded (a scalable filter may grow, so the copy is a core buffer turned
 * into the result); NULL value: the filter as is. A full cuckoo filter is an
 * error. cuckoo_add_unique (ADD_UNIQUE): the filter itself when it may hold
 * the value already, so a false positive skips a new value. */
Datum amq_pg_op_add(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
	const amq_pg_hasher *h;
	amq_filter src, f;
	amq_error err;
	uint64 hash;
	bool added = true;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &src);
	h = amq_pg_cached_hasher(fcinfo, 1);
	amq_pg_check_family(&src, h, PG_GETARG_DATUM(1), call);
	hash = amq_pg_hash_value(h, PG_GETARG_DATUM(1), src.seed);
	if (call->op == AMQ_SQL_ADD_UNIQUE) {
		amq_pg_check(amq_filter_add_unique(&src, hash, h->family, &f, &added, &a, &err),
			     &err);
	} else {
		amq_pg_check(amq_filter_clone(&f, &src, &a, &err), &err);
		amq_pg_check(amq_filter_add_to(&f, hash, &a, &err), &err);
		amq_filter_note_family(&f, h->family);
		amq_filter_seal(&f);
	}
	if (!added)
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	PG_RETURN_POINTER(amq_pg_into_varlena(f.bytes, f.size));
}

/* cuckoo_delete(filter, value), bloom_delete(filter, value): a copy with one
 * copy of value removed (unchanged when none is stored); an error for a
 * variant that cannot delete. */
Datum amq_pg_op_delete(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	const amq_pg_hasher *h;
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
	h = amq_pg_cached_hasher(fcinfo, 1);
	amq_pg_check_family(&f, h, PG_GETARG_DATUM(1), call);
	hash = amq_pg_hash_value(h, PG_GETARG_DATUM(1), f.seed);
	amq_pg_check(amq_filter_remove(&f, hash, &removed, &err), &err);
	if (removed)
		amq_filter_seal(&f);
	PG_RETURN_POINTER(result);
}

/* bloom_contains(filter, value), also filter @> value. */
Datum amq_pg_op_contains(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	uint64 hash;
	amq_probe probe;
	const amq_filter *f = amq_pg_probe(fcinfo, 0, 1, call, &probe, &hash);

	PG_RETURN_BOOL(probe(f, hash));
}

/* value <@ filter: contains with the arguments swapped. */
Datum amq_pg_op_contained_in(FunctionCallInfo fcinfo, const amq_pg_call *call)
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

Datum amq_pg_op_frequency_integer(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	PG_RETURN_INT32((int32)Min(frequency(fcinfo, call), (uint64)PG_INT32_MAX));
}

Datum amq_pg_op_frequency_bigint(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	PG_RETURN_INT64((int64)Min(frequency(fcinfo, call), (uint64)PG_INT64_MAX));
}

/* bloom_union(a, b), bloom_intersect(a, b): a copy of the first filter
 * merged with the second as the operation says (amq_sql_merge). */
Datum amq_pg_op_combine(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter a, b;
	amq_error err;
	struct varlena *result = amq_pg_copy_filter(PG_GETARG_DATUM(0), call, "first filter", &a);

	amq_pg_read_filter(PG_GETARG_DATUM(1), call, "second filter", &b);
	amq_pg_check(amq_sql_merge(call->op, &a, &b, &err), &err);
	amq_filter_seal(&a);
	PG_RETURN_POINTER(result);
}

/* bloom_count(filter): distinct items estimated, rounded. */
Datum amq_pg_op_estimate(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	PG_RETURN_INT64((int64)round(amq_filter_estimate_items(&f)));
}

/* bloom_fpr(filter): the false-positive rate an absent value sees now. */
Datum amq_pg_op_fpr(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	PG_RETURN_FLOAT8(amq_filter_expected_fpr(&f));
}

/* bloom_info(filter), cuckoo_info(filter): the core's description as jsonb. */
Datum amq_pg_op_info(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	char json[AMQ_INFO_MAX];
	amq_filter f;

	amq_pg_read_filter(PG_GETARG_DATUM(0), call, "filter", &f);
	amq_filter_info_json(&f, json, sizeof(json));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* amq_hash(value): the 64-bit hash every filter function uses (seed 0), as
 * a signed bigint. */
Datum amq_pg_op_hash(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	const amq_pg_hasher *h = amq_pg_cached_hasher(fcinfo, 0);

	PG_RETURN_INT64((int64)amq_pg_hash_value(h, PG_GETARG_DATUM(0), AMQ_DEFAULT_SEED));
}

/* amq_version(): the library's version, AMQ_VERSION. */
Datum amq_pg_op_version(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	PG_RETURN_TEXT_P(cstring_to_text(AMQ_VERSION));
}
