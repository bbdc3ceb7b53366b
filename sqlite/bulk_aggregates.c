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
	struct step_progress progress; /* started: bulk holds a copy of the first row's filter */
	amq_bulk bulk;
};

/* Checks this row's filter argument v: the first row's starts the state
 * for the function's operation, a later row's must be that same filter. */
static bool bulk_filter(sqlite3_context *ctx, struct bulk_state *s, sqlite3_value *v)
{
	amq_error err;
	amq_status st;
	if (sqlite3_value_type(v) == SQLITE_NULL) {
		amq_bulk_null_filter(fn_name(ctx), fn_kind(ctx), &err);
		report_core_error(ctx, &err);
		return false;
	}
	if (!s->progress.started) {
		amq_filter src;
		if (!filter_argument(ctx, v, "filter", &src))
			return false;
		st = amq_bulk_start(&s->bulk, amq_sql_bulk_op(fn_op(ctx)), fn_name(ctx), &src,
				    &amq_sqlite_allocator, &err);
		s->progress.started = true; /* the final function frees whatever start left */
	} else {
		size_t size = (size_t)sqlite3_value_bytes(v);
		const void *head =
		    sqlite3_value_type(v) == SQLITE_BLOB ? sqlite3_value_blob(v) : NULL;
		st = amq_bulk_check_same(&s->bulk, head, head ? size : 0, size, &err);
	}
	return core_ok(ctx, st, &err);
}

/* xStep of the four: check the filter, then add or delete the value (as the
 * function's operation says) unless it is NULL. */
void bulk_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	struct bulk_state *s = step_state(ctx, sizeof(*s));
	if (s == NULL)
		return;
	if (!bulk_filter(ctx, s, argv[0])) {
		s->progress.failed = true;
		return;
	}
	uint64_t hash;
	amq_family family;
	amq_error err;
	if (!step_value(ctx, &s->progress, argv[1], s->bulk.filter.seed, &hash, &family))
		return;
	amq_status st = AMQ_OK;
	/* The family check decodes the value only when it has something to say:
	 * a family the filter lacks, or the first add to an empty filter. */
	if (!amq_filter_takes(&s->bulk.filter, family) || s->bulk.filter.families == 0) {
		amq_value value;
		if (!decode_value(ctx, argv[1], &value)) {
			s->progress.failed = true;
			return;
		}
		st = amq_bulk_admit(&s->bulk, &value, AMQ_DIALECT_SQL, &err);
	}
	if (st == AMQ_OK)
		st = amq_bulk_apply(&s->bulk, hash, &err);
	step_status(ctx, &s->progress, st, &err);
}

/* xFinal of all four: the changed filter, NULL when there were no rows. */
void bulk_final(sqlite3_context *ctx)
{
	struct bulk_state *s = sqlite3_aggregate_context(ctx, 0);
	if (s == NULL || !s->progress.started)
		return;
	if (!s->progress.failed) {
		amq_filter f;
		amq_bulk_finish(&s->bulk, &f);
		result_filter(ctx, &f);
	}
	amq_bulk_free(&s->bulk);
}
