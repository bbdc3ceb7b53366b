/*
 * filter_functions.c - the scalar filter functions. One C function serves
 * every kind: the kind travels in the registration's user data (extension.c),
 * core's variant table does the rest. Each decodes its arguments, calls core
 * and sets the result; a function that changes a filter works on a fresh
 * copy, since SQL values are immutable.
 */
#include "functions.h"

#include <math.h>

/* bloom_new(capacity, fpr [, layout [, expansion]]), cuckoo_new(capacity
 * [, fpr [, layout]]): an empty filter; fpr defaults to 0.01, layout to the
 * kind's default for the fpr; only a scalable filter takes an expansion. */
void new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	uint64_t capacity;
	double fpr = 0.01;
	if (!capacity_argument(ctx, argv[0], &capacity) ||
	    (argc > 1 && !fpr_argument(ctx, argv[1], &fpr)))
		return;
	amq_layout layout = amq_default_layout(fn_kind(ctx), fpr);
	if (argc > 2 && !layout_argument(ctx, argv[2], &layout))
		return;
	sqlite3_int64 expansion = 0;
	if (argc > 3) {
		if (sqlite3_value_type(argv[3]) != SQLITE_INTEGER) {
			report_usage_error(ctx, "expansion must be an integer, got %s",
					   value_type_name(argv[3]));
			return;
		}
		expansion = sqlite3_value_int64(argv[3]);
		if (expansion < 1 || expansion > AMQ_SCALABLE_MAX_EXPANSION) {
			report_usage_error(ctx, "expansion must be between 1 and %d, got %lld",
					   AMQ_SCALABLE_MAX_EXPANSION, (long long)expansion);
			return;
		}
	}
	amq_filter f;
	amq_error err;
	if (amq_filter_create_expanding(&f, fn_kind(ctx), layout, capacity, fpr,
					(uint32_t)expansion, AMQ_DEFAULT_SEED,
					&amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	result_filter(ctx, &f);
}

/*
 * Decodes (filter, value) for the add and delete functions into a private
 * copy of the filter and the value's hash. Returns false when the result is
 * already set: an error, NULL for a NULL filter, or the filter unchanged for
 * a NULL value.
 */
static bool copy_and_hash(sqlite3_context *ctx, sqlite3_value **argv, amq_filter *copy,
			  uint64_t *hash)
{
	amq_filter src;
	if (!filter_unless_null(ctx, argv[0], &src))
		return false;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_value(ctx, argv[0]);
		return false;
	}
	if (!hash_value(ctx, argv[1], src.seed, hash))
		return false;
	amq_error err;
	if (amq_filter_clone(copy, &src, &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return false;
	}
	return true;
}

/* bloom_add(filter, value), cuckoo_add(filter, value): a copy with value
 * added (a scalable filter grows into a larger copy); a full cuckoo filter is
 * an error (core says how full and what to do). */
void add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	uint64_t hash;
	if (!copy_and_hash(ctx, argv, &f, &hash))
		return;
	amq_error err;
	if (amq_filter_add_to(&f, hash, &amq_sqlite_allocator, &err) != AMQ_OK) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		report_core_error(ctx, &err);
		return;
	}
	amq_filter_seal(&f);
	result_filter(ctx, &f);
}

/* cuckoo_add_unique(filter, value): the filter unchanged when it may hold
 * value already (a false positive skips a new value), else a copy with value
 * added; NULLs as in add_func. */
void add_unique_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter src, f;
	uint64_t hash;
	if (!filter_unless_null(ctx, argv[0], &src))
		return;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	if (!hash_value(ctx, argv[1], src.seed, &hash))
		return;
	amq_error err;
	bool added;
	if (amq_filter_add_unique(&src, hash, &f, &added, &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	if (added)
		result_filter(ctx, &f);
	else
		sqlite3_result_value(ctx, argv[0]);
}

/* cuckoo_delete(filter, value), bloom_delete(filter, value): a copy with one
 * copy of value removed, or the filter unchanged when value is certainly not
 * stored; an error for a variant that cannot delete. */
void delete_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	uint64_t hash;
	if (!copy_and_hash(ctx, argv, &f, &hash))
		return;
	amq_error err;
	bool removed;
	if (amq_filter_remove(&f, hash, &removed, &err) != AMQ_OK) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		report_core_error(ctx, &err);
		return;
	}
	if (!removed) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	amq_filter_seal(&f);
	result_filter(ctx, &f);
}

/* bloom_contains(filter, value), cuckoo_contains(filter, value): 1 if value
 * may be in the filter, 0 if it certainly is not. The filter is parsed once
 * per statement and its probe called directly. */
void contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct probe_filter *pf;
	uint64_t hash;
	if (probe_arguments(ctx, argv, &pf, &hash))
		sqlite3_result_int(ctx, pf->contains(&pf->filter, hash));
}

/* cuckoo_count(filter, value), bloom_frequency(filter, value): how many
 * times value was added, never less than the truth. */
void frequency_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct probe_filter *pf;
	uint64_t hash, count;
	amq_error err;
	if (!probe_arguments(ctx, argv, &pf, &hash))
		return;
	if (amq_filter_frequency(&pf->filter, hash, &count, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)count);
}

/* A copy of the first filter combined with the second by merge. */
static void combine(sqlite3_context *ctx, sqlite3_value **argv,
		    amq_status (*merge)(amq_filter *, const amq_filter *, amq_error *))
{
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
	    sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	amq_filter a, b, out;
	amq_error err;
	if (!filter_argument(ctx, argv[0], "first filter", &a) ||
	    !filter_argument(ctx, argv[1], "second filter", &b))
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
void union_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	combine(ctx, argv, amq_filter_union_into);
}

/* bloom_intersect(a, b): what both filters hold. */
void intersect_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	combine(ctx, argv, amq_filter_intersect_into);
}

/* bloom_count(filter): distinct items the filter is estimated to hold. */
void estimate_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], &f))
		return;
	sqlite3_result_int64(ctx, (sqlite3_int64)llround(amq_filter_estimate_items(&f)));
}

/* bloom_fpr(filter): the false-positive rate an absent value sees now. */
void fpr_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], &f))
		return;
	sqlite3_result_double(ctx, amq_filter_expected_fpr(&f));
}

/* bloom_info(filter), cuckoo_info(filter): core's JSON description. */
void info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], &f))
		return;
	result_info(ctx, &f);
}
