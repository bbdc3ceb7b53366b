/*
 * cuckoo_functions.c - the scalar cuckoo filter functions: cuckoo_new,
 * cuckoo_add, cuckoo_delete, cuckoo_contains, cuckoo_count and cuckoo_info.
 * A cuckoo filter stores fingerprints, so it can forget a value again:
 * cuckoo_delete removes one stored copy, and is only meaningful for values
 * that were added (deleting a value never added may remove another value
 * with the same fingerprint).
 */
#include "functions.h"

/* cuckoo_new(capacity [, fpr]): an empty filter that holds at least
 * capacity items; fpr defaults to 0.01. */
void cuckoo_new_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	for (int i = 0; i < argc; i++)
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL)
			return;
	uint64_t capacity;
	double fpr = 0.01;
	if (!capacity_argument(ctx, argv[0], &capacity) ||
	    (argc > 1 && !fpr_argument(ctx, argv[1], &fpr)))
		return;
	amq_filter f;
	amq_error err;
	if (amq_cuckoo_create(&f, capacity, fpr, AMQ_DEFAULT_SEED, &amq_sqlite_allocator, &err) !=
	    AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	result_filter(ctx, &f);
}

/*
 * Decodes (filter, value) for cuckoo_add and cuckoo_delete into a private
 * copy of the filter and the value's hash. Returns false when the result is
 * already set: an error, NULL for a NULL filter, or the filter unchanged for
 * a NULL value.
 */
static bool copy_and_hash(sqlite3_context *ctx, sqlite3_value **argv, amq_filter *copy,
			  uint64_t *hash)
{
	amq_filter src;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_CUCKOO, &src))
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

/* cuckoo_add(filter, value): a copy with one more copy of value; a full
 * filter is an error (core's message says how full and what to do). */
void cuckoo_add_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	uint64_t hash;
	if (!copy_and_hash(ctx, argv, &f, &hash))
		return;
	amq_error err;
	if (amq_cuckoo_add(&f, hash, &err) != AMQ_OK) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		report_core_error(ctx, &err);
		return;
	}
	amq_filter_seal(&f);
	result_filter(ctx, &f);
}

/* cuckoo_delete(filter, value): a copy with one copy of value removed, or
 * the filter unchanged when value is not stored. */
void cuckoo_delete_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	uint64_t hash;
	if (!copy_and_hash(ctx, argv, &f, &hash))
		return;
	if (!amq_cuckoo_delete(&f, hash)) {
		amq_filter_free(&f, &amq_sqlite_allocator);
		sqlite3_result_value(ctx, argv[0]);
		return;
	}
	amq_filter_seal(&f);
	result_filter(ctx, &f);
}

/* cuckoo_contains(filter, value): 1 if value may be stored, 0 if it
 * certainly is not. The filter is parsed once per statement. */
void cuckoo_contains_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct probe_filter *pf;
	uint64_t hash;
	if (probe_arguments(ctx, argv, AMQ_KIND_CUCKOO, &pf, &hash))
		sqlite3_result_int(ctx, amq_cuckoo_contains(&pf->filter, hash));
}

/* cuckoo_count(filter, value): copies of value's fingerprint stored in its
 * two buckets. The filter is parsed once per statement. */
void cuckoo_count_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct probe_filter *pf;
	uint64_t hash;
	if (probe_arguments(ctx, argv, AMQ_KIND_CUCKOO, &pf, &hash))
		sqlite3_result_int64(ctx, amq_cuckoo_count(&pf->filter, hash));
}

/* cuckoo_info(filter): core's JSON description of the filter. */
void cuckoo_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	amq_filter f;
	if (!filter_unless_null(ctx, argv[0], AMQ_KIND_CUCKOO, &f))
		return;
	result_info(ctx, &f);
}
