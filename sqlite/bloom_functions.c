/*
 * bloom_functions.c - the scalar Bloom filter functions: bloom_new,
 * bloom_add, bloom_contains, bloom_union, bloom_intersect, bloom_count,
 * bloom_fpr and bloom_info. Each decodes its arguments, calls core and sets
 * the result; a function that changes a filter works on a fresh copy, since
 * SQL values are immutable.
 */
#include "functions.h"

#include <math.h>

/* bloom_new(capacity, fpr [, layout]): an empty filter. */
void bloom_new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	uint64_t capacity;
	double fpr;
	amq_layout layout = amq_default_layout(AMQ_KIND_BLOOM);
	if (!capacity_argument(ctx, argv[0], &capacity) || !fpr_argument(ctx, argv[1], &fpr) ||
	    (argc > 2 && !layout_argument(ctx, argv[2], AMQ_KIND_BLOOM, &layout)))
		return;
	amq_filter f;
	amq_error err;
	if (amq_bloom_create(&f, capacity, fpr, layout, AMQ_DEFAULT_SEED, &amq_sqlite_allocator,
			     &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	result_filter(ctx, &f);
}

/* bloom_add(filter, value): a copy of filter with value added; a NULL value
 * leaves the filter as it is. */
void bloom_add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter src;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_BLOOM, &src))
		return;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	uint64_t hash;
	if (!hash_value(ctx, argv[1], src.seed, &hash))
		return;
	amq_filter f;
	amq_error err;
	if (amq_filter_clone(&f, &src, &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	amq_bloom_add(&f, hash);
	amq_filter_seal(&f);
	result_filter(ctx, &f);
}

/* bloom_contains(filter, value): 1 if value may be in the filter, 0 if it
 * certainly is not. The filter is parsed once per statement. */
void bloom_contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct probe_filter *pf;
	uint64_t hash;
	if (probe_arguments(ctx, argv, AMQ_KIND_BLOOM, &pf, &hash))
		sqlite3_result_int(ctx, pf->bloom_contains(&pf->filter, hash));
}

/* Shared body of bloom_union and bloom_intersect: combine copies a into a
 * new filter and merges b into it with the core operation given. */
static void combine(sqlite3_context *ctx, sqlite3_value **argv,
		    amq_status (*merge)(amq_filter *, const amq_filter *, amq_error *))
{
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
	    sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	amq_filter a, b, out;
	amq_error err;
	if (!filter_argument(ctx, argv[0], "first filter", AMQ_KIND_BLOOM, &a) ||
	    !filter_argument(ctx, argv[1], "second filter", AMQ_KIND_BLOOM, &b))
		return;
	if (amq_filter_clone(&out, &a, &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	if (merge(&out, &b, &err) != AMQ_OK) {
		amq_filter_free(&out, &amq_sqlite_allocator);
		report_core_error(ctx, &err);
		return;
	}
	amq_filter_seal(&out);
	result_filter(ctx, &out);
}

/* bloom_union(a, b): a filter holding everything either holds. */
void bloom_union_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	combine(ctx, argv, amq_bloom_union_into);
}

/* bloom_intersect(a, b): the bitwise intersection of a and b. */
void bloom_intersect_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	combine(ctx, argv, amq_bloom_intersect_into);
}

/* bloom_count(filter): distinct items estimated from the set bits. */
void bloom_count_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_BLOOM, &f))
		return;
	sqlite3_result_int64(ctx, (sqlite3_int64)llround(amq_bloom_estimate_items(&f)));
}

/* bloom_fpr(filter): the false-positive rate an absent value sees now. */
void bloom_fpr_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_BLOOM, &f))
		return;
	sqlite3_result_double(ctx, amq_bloom_expected_fpr(&f));
}

/* bloom_info(filter): core's JSON description of the filter. */
void bloom_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_BLOOM, &f))
		return;
	result_info(ctx, &f);
}
