/*
 * aggregates.c - bloom_agg, cuckoo_agg and bloom_union_agg. The first two
 * feed value hashes to a core amq_builder, which sizes the filter for the
 * distinct values seen (or streams into a fixed one when a capacity is
 * given) and yields the same bytes whatever the row order. fpr, capacity and
 * layout are read from the first row (a NULL capacity or layout is the same
 * as none), NULL values are skipped, and no rows at all still give a valid
 * empty filter with the default parameters. As in SQLite's ext/misc/percentile.c, the
 * final function asks for the context with size 0 so that "no rows" needs no
 * allocation, and frees everything the steps allocated.
 */
#include "functions.h"

struct builder_state {
	bool started; /* builder initialised from the first row */
	bool failed;  /* a step reported an error; the statement is aborting */
	amq_builder builder;
};

/* True when argument i is given and not NULL: a NULL capacity or layout
 * means the same as leaving it out. */
static bool given(int argc, sqlite3_value **argv, int i)
{
	return argc > i && sqlite3_value_type(argv[i]) != SQLITE_NULL;
}

/* Initialises b from the optional fpr, capacity and layout arguments. */
static bool start_builder(sqlite3_context *ctx, int argc, sqlite3_value **argv, amq_builder *b)
{
	amq_kind kind = fn_kind(ctx);
	double fpr = 0.01;
	uint64_t capacity = 0;
	if ((argc > 1 && !fpr_argument(ctx, argv[1], &fpr)) ||
	    (given(argc, argv, 2) && !capacity_argument(ctx, argv[2], &capacity)))
		return false;
	amq_layout layout = amq_default_layout(kind, fpr);
	if (given(argc, argv, 3) && !layout_argument(ctx, argv[3], &layout))
		return false;
	amq_error err;
	if (amq_builder_init(b, kind, layout, fpr, capacity, AMQ_DEFAULT_SEED,
			     &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return false;
	}
	return true;
}

/* xStep of bloom_agg and cuckoo_agg. */
void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct builder_state *s = sqlite3_aggregate_context(ctx, sizeof(*s));
	if (s == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (s->failed)
		return;
	if (!s->started) {
		if (!start_builder(ctx, argc, argv, &s->builder)) {
			s->failed = true;
			return;
		}
		s->started = true;
	}
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	uint64_t hash;
	amq_error err;
	if (!hash_value(ctx, argv[0], s->builder.seed, &hash)) {
		s->failed = true;
		return;
	}
	if (amq_builder_add(&s->builder, hash, &err) != AMQ_OK) {
		s->failed = true;
		report_core_error(ctx, &err);
	}
}

/* Sets the finished filter of b as the result. */
static void result_finished(sqlite3_context *ctx, amq_builder *b)
{
	amq_filter f;
	amq_error err;
	if (amq_builder_finish(b, &f, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
	result_filter(ctx, &f);
}

/* xFinal of bloom_agg and cuckoo_agg. */
void agg_final(sqlite3_context *ctx)
{
	amq_kind kind = fn_kind(ctx);
	struct builder_state *s = sqlite3_aggregate_context(ctx, 0);
	if (s != NULL && s->started) {
		if (!s->failed)
			result_finished(ctx, &s->builder);
		amq_builder_free(&s->builder);
		return;
	}
	if (s != NULL && s->failed)
		return;
	/* No rows: the filter of a builder that saw nothing. */
	amq_builder empty;
	amq_error err;
	if (amq_builder_init(&empty, kind, amq_default_layout(kind, 0.01), 0.01, 0,
			     AMQ_DEFAULT_SEED, &amq_sqlite_allocator, &err) != AMQ_OK) {
		report_core_error(ctx, &err);
		return;
	}
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
	if (!s->started) {
		if (amq_filter_clone(&s->acc, &f, &amq_sqlite_allocator, &err) != AMQ_OK) {
			report_core_error(ctx, &err);
			return;
		}
		s->started = true;
		return;
	}
	if (amq_filter_union_into(&s->acc, &f, &err) != AMQ_OK)
		report_core_error(ctx, &err);
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
