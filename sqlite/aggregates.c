/*
 * aggregates.c - bloom_agg, cuckoo_agg and bloom_union_agg. The first two
 * feed value hashes to a core amq_builder, which sizes the filter for the
 * distinct values seen (or streams into a fixed one when a capacity is
 * given) and yields the same bytes whatever the row order. fpr, capacity and
 * layout are read from the first row (a NULL capacity or layout is the same
 * as none), NULL values are skipped, and no rows at all still give a valid
 * empty filter with the default parameters (core's, sql/arguments.h). As in
 * SQLite's ext/misc/percentile.c, the final function asks for the context
 * with size 0 so that "no rows" needs no allocation, and frees everything the
 * steps allocated. Also what the steps of every aggregate share (step_state,
 * step_value, step_status).
 */
#include "functions.h"

struct builder_state {
	struct step_progress progress; /* started: builder initialised from the first row */
	amq_builder builder;
};

/* What every aggregate's step shares (declared in functions.h). */

void *step_state(sqlite3_context *ctx, size_t size)
{
	struct step_progress *p = sqlite3_aggregate_context(ctx, (int)size);
	if (p == NULL) {
		sqlite3_result_error_nomem(ctx);
		return NULL;
	}
	return p->failed ? NULL : p;
}

bool step_value(sqlite3_context *ctx, struct step_progress *p, sqlite3_value *v, uint64_t seed,
		uint64_t *hash, amq_family *family)
{
	if (sqlite3_value_type(v) == SQLITE_NULL)
		return false;
	if (!hash_value(ctx, v, seed, hash, family)) {
		p->failed = true;
		return false;
	}
	return true;
}

void step_status(sqlite3_context *ctx, struct step_progress *p, amq_status st, const amq_error *err)
{
	if (st != AMQ_OK) {
		p->failed = true;
		report_core_error(ctx, err);
	}
}

/* True when argument i is given and not NULL: a NULL capacity or layout
 * means the same as leaving it out. */
static bool given(int argc, sqlite3_value **argv, int i)
{
	return argc > i && sqlite3_value_type(argv[i]) != SQLITE_NULL;
}

/* Initialises b from the optional fpr, capacity and layout arguments. */
static bool start_builder(sqlite3_context *ctx, int argc, sqlite3_value **argv, amq_builder *b)
{
	amq_sql_sizing s;
	amq_sql_sizing_init(&s, fn_kind(ctx));
	if ((argc > 1 && !fpr_argument(ctx, argv[1], &s)) ||
	    (given(argc, argv, 2) && !capacity_argument(ctx, argv[2], &s)) ||
	    (given(argc, argv, 3) && !layout_argument(ctx, argv[3], &s)))
		return false;
	amq_error err;
	amq_allocator a = connection_allocator(ctx);
	return core_ok(ctx, amq_sql_builder_init(b, &s, &a, &err), &err);
}

/* xStep of bloom_agg and cuckoo_agg. */
void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct builder_state *s = step_state(ctx, sizeof(*s));
	if (s == NULL)
		return;
	if (!s->progress.started) {
		if (!start_builder(ctx, argc, argv, &s->builder)) {
			s->progress.failed = true;
			return;
		}
		s->progress.started = true;
	}
	uint64_t hash;
	amq_family family;
	amq_error err;
	if (!step_value(ctx, &s->progress, argv[0], s->builder.seed, &hash, &family))
		return;
	amq_builder_note_family(&s->builder, family);
	step_status(ctx, &s->progress, amq_builder_add(&s->builder, hash, &err), &err);
}

/* Sets the finished filter of b as the result. */
static void result_finished(sqlite3_context *ctx, amq_builder *b)
{
	amq_filter f;
	amq_error err;
	if (core_ok(ctx, amq_builder_finish(b, &f, &err), &err))
		result_filter(ctx, &f);
}

/* xFinal of bloom_agg and cuckoo_agg. */
void agg_final(sqlite3_context *ctx)
{
	struct builder_state *s = sqlite3_aggregate_context(ctx, 0);
	if (s != NULL && s->progress.started) {
		if (!s->progress.failed)
			result_finished(ctx, &s->builder);
		amq_builder_free(&s->builder);
		return;
	}
	if (s != NULL && s->progress.failed)
		return;
	/* No rows: the filter of a builder that saw nothing, sized by the
	 * defaults. */
	amq_sql_sizing defaults;
	amq_sql_sizing_init(&defaults, fn_kind(ctx));
	amq_builder empty;
	amq_error err;
	if (!core_ok(ctx, amq_sql_builder_init(&empty, &defaults, &amq_sqlite_allocator, &err),
		     &err))
		return;
	result_finished(ctx, &empty);
	amq_builder_free(&empty);
}

struct union_state {
	bool started; /* acc holds a copy of the first non-NULL filter */
	amq_filter acc;
};

/* xStep of bloom_union_agg: merges each non-NULL filter into the first. */
void union_agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	struct union_state *s = sqlite3_aggregate_context(ctx, sizeof(*s));
	if (s == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	amq_filter f;
	amq_error err;
	if (!filter_argument(ctx, argv[0], "filter", &f))
		return;
	if (!s->started)
		s->started =
		    core_ok(ctx, amq_filter_clone(&s->acc, &f, &amq_sqlite_allocator, &err), &err);
	else
		core_ok(ctx, amq_filter_union_into(&s->acc, &f, &err), &err);
}

/* xFinal of bloom_union_agg: the union, or NULL when no filter came in. */
void union_agg_final(sqlite3_context *ctx)
{
	struct union_state *s = sqlite3_aggregate_context(ctx, 0);
	if (s == NULL || !s->started)
		return;
	s->started = false;
	amq_filter_seal(&s->acc);
	result_filter(ctx, &s->acc);
}
