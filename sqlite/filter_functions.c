/*
 * filter_functions.c - the scalar filter functions. One C function serves
 * every kind: the kind and the operation travel in the registration's user
 * data (its row of core's function table, extension.c), core's variant table
 * does the rest. Each decodes its arguments, calls core
 * and sets the result; a function that changes a filter works on a fresh
 * copy, since SQL values are immutable.
 */
#include "functions.h"

#include <math.h>

/* bloom_new(capacity, fpr [, layout [, expansion]]), cuckoo_new(capacity
 * [, fpr [, layout]]): an empty filter; the defaults of the arguments left
 * out are core's (sql/arguments.h). NULL if any argument is NULL. */
void new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	amq_sql_sizing s;
	amq_sql_sizing_init(&s, fn_kind(ctx));
	if (!capacity_argument(ctx, argv[0], &s) || (argc > 1 && !fpr_argument(ctx, argv[1], &s)) ||
	    (argc > 2 && !layout_argument(ctx, argv[2], &s)) ||
	    (argc > 3 && !expansion_argument(ctx, argv[3], &s)))
		return;
	amq_filter f;
	amq_error err;
	amq_allocator a = connection_allocator(ctx);
	if (core_ok(ctx, amq_sql_create(&f, &s, &a, &err), &err))
		result_filter(ctx, &f);
}

/*
 * Decodes (filter, value) for the functions that change a filter by a value:
 * the filter, the value (checked against the filter's families, admit_value)
 * and its hash. Returns false when the result is already set: an error, NULL
 * for a NULL filter, or the filter unchanged for a NULL value.
 */
static bool filter_and_hash(sqlite3_context *ctx, sqlite3_value **argv, amq_filter *src,
			    amq_value *value, uint64_t *hash)
{
	if (!filter_unless_null(ctx, argv[0], src))
		return false;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_value(ctx, argv[0]);
		return false;
	}
	return admit_value(ctx, src, argv[1], value, hash);
}

/* filter_and_hash into a private copy of the filter, for the add and delete
 * functions. */
static bool copy_and_hash(sqlite3_context *ctx, sqlite3_value **argv, amq_filter *copy,
			  amq_value *value, uint64_t *hash)
{
	amq_filter src;
	if (!filter_and_hash(ctx, argv, &src, value, hash))
		return false;
	amq_error err;
	return core_ok(ctx, amq_filter_clone(copy, &src, &amq_sqlite_allocator, &err), &err);
}

/* Ends a function that changed the copy f by a core call that returned st:
 * f sealed as the result, or on failure f freed and err reported. */
static void result_changed(sqlite3_context *ctx, amq_filter *f, amq_status st, const amq_error *err)
{
	if (st != AMQ_OK) {
		amq_filter_free(f, &amq_sqlite_allocator);
		report_core_error(ctx, err);
		return;
	}
	amq_filter_seal(f);
	result_filter(ctx, f);
}

/* bloom_add(filter, value), cuckoo_add(filter, value): a copy with value
 * added and its family recorded (a scalable filter grows into a larger
 * copy); a full cuckoo filter is an error (core says how full and what to
 * do). */
void add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	amq_value value;
	uint64_t hash;
	amq_error err;
	if (!copy_and_hash(ctx, argv, &f, &value, &hash))
		return;
	amq_status st = amq_filter_add_to(&f, hash, &amq_sqlite_allocator, &err);
	amq_filter_note_family(&f, value.family);
	result_changed(ctx, &f, st, &err);
}

/* cuckoo_add_unique(filter, value): the filter unchanged when it may hold
 * value already (a false positive skips a new value), else a copy with value
 * added; NULLs as in add_func. */
void add_unique_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter src, f;
	amq_value value;
	uint64_t hash;
	if (!filter_and_hash(ctx, argv, &src, &value, &hash))
		return;
	amq_error err;
	bool added;
	if (!core_ok(ctx,
		     amq_filter_add_unique(&src, hash, value.family, &f, &added,
					   &amq_sqlite_allocator, &err),
		     &err))
		return;
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
	amq_value value;
	uint64_t hash;
	if (!copy_and_hash(ctx, argv, &f, &value, &hash))
		return;
	amq_error err;
	bool removed;
	amq_status st = amq_filter_remove(&f, hash, &removed, &err);
	if (st == AMQ_OK && !removed) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	result_changed(ctx, &f, st, &err);
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
	if (core_ok(ctx, amq_filter_frequency(&pf->filter, hash, &count, &err), &err))
		sqlite3_result_int64(ctx, (sqlite3_int64)count);
}

/* bloom_union(a, b), bloom_intersect(a, b): a copy of the first filter
 * merged with the second as the operation says (amq_sql_merge). */
void combine_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
	    sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	amq_filter a, b, out;
	amq_error err;
	if (!filter_argument(ctx, argv[0], "first filter", &a) ||
	    !filter_argument(ctx, argv[1], "second filter", &b))
		return;
	if (core_ok(ctx, amq_filter_clone(&out, &a, &amq_sqlite_allocator, &err), &err))
		result_changed(ctx, &out, amq_sql_merge(fn_op(ctx), &out, &b, &err), &err);
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
