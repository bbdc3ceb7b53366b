/*
 * bulk_aggregates.c - bloom_add_agg, bloom_delete_agg, cuckoo_add_agg and
 * cuckoo_delete_agg(filter, value): one existing filter with every row's
 * value added or deleted, through core's amq_bulk (copied once, changed in
 * place, sealed once). Every row must pass the same filter; a NULL filter is
 * an error, a NULL value is skipped, and no rows at all give NULL. The final
 * function frees the state on every path, an aborted statement included.
 */
#include "functions.h"

struct bulk_state {
	bool started; /* bulk holds a copy of the first row's filter */
	bool failed;  /* a step reported an error; the statement is aborting */
	amq_bulk bulk;
};

/* Checks this row's filter argument v: the first row's starts the state
 * for op, a later row's must be that same filter. */
static bool bulk_filter(sqlite3_context *ctx, struct bulk_state *s, sqlite3_value *v,
			amq_bulk_op op)
{
	amq_error err;
	amq_status st;
	if (sqlite3_value_type(v) == SQLITE_NULL) {
		amq_bulk_null_filter(fn_name(ctx), fn_kind(ctx), &err);
		report_core_error(ctx, &err);
		return false;
	}
	if (!s->started) {
		amq_filter src;
		if (!filter_argument(ctx, v, "filter", &src))
			return false;
		st = amq_bulk_start(&s->bulk, op, fn_name(ctx), &src, &amq_sqlite_allocator, &err);
		s->started = true; /* the final function frees whatever start left */
	} else {
		size_t size = (size_t)sqlite3_value_bytes(v);
		const void *head =
		    sqlite3_value_type(v) == SQLITE_BLOB ? sqlite3_value_blob(v) : NULL;
		st = amq_bulk_check_same(&s->bulk, head, head ? size : 0, size, &err);
	}
	if (st != AMQ_OK) {
		report_core_error(ctx, &err);
		return false;
	}
	return true;
}

/* One row: check the filter, then apply op to the value unless it is NULL. */
static void bulk_step(sqlite3_context *ctx, sqlite3_value **argv, amq_bulk_op op)
{
	struct bulk_state *s = sqlite3_aggregate_context(ctx, sizeof(*s));
	if (s == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (s->failed)
		return;
	if (!bulk_filter(ctx, s, argv[0], op)) {
		s->failed = true;
		return;
	}
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return;
	uint64_t hash;
	amq_error err;
	if (!hash_value(ctx, argv[1], s->bulk.filter.seed, &hash)) {
		s->failed = true;
		return;
	}
	if (amq_bulk_apply(&s->bulk, hash, &err) != AMQ_OK) {
		s->failed = true;
		report_core_error(ctx, &err);
	}
}

/* xStep of bloom_add_agg and cuckoo_add_agg. */
void bulk_add_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	bulk_step(ctx, argv, AMQ_BULK_ADD);
}

/* xStep of bloom_delete_agg and cuckoo_delete_agg. */
void bulk_delete_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	bulk_step(ctx, argv, AMQ_BULK_DELETE);
}

/* xFinal of all four: the changed filter, NULL when there were no rows. */
void bulk_final(sqlite3_context *ctx)
{
	struct bulk_state *s = sqlite3_aggregate_context(ctx, 0);
	if (s == NULL || !s->started)
		return;
	if (!s->failed) {
		amq_filter f;
		amq_bulk_finish(&s->bulk, &f);
		result_filter(ctx, &f);
	}
	amq_bulk_free(&s->bulk);
}
