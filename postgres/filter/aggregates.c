/*
 * filter/aggregates.c - the aggregates bloom_agg, cuckoo_agg and bloom_union_agg, with
 * the combine, serial and deserial functions that let PostgreSQL run them in
 * parallel workers.
 *
 * bloom_agg and cuckoo_agg keep a core amq_builder as their internal state,
 * allocated with every byte it owns in the aggregate's memory context, and
 * past work_mem its sorted runs in temporary files (filter/temp_files.c). The
 * builder's result depends only on the multiset of hashes it was given, so a
 * plan produces the same bytes serial or parallel: each worker serialises its
 * builder, the leader deserialises and merges them. bloom_union_agg keeps the
 * running union as a filter in the aggregate context; OR is order-free too.
 */
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/memutils.h"

#include "filter/filter.h"

/* The builder state's combine, serial and deserial functions: one set for
 * bloom_agg and cuckoo_agg alike (the builder knows its kind). The other
 * support functions are generic (filter.h), entered through filter/entries.c. */
AMQ_PG_FUNCTION(amq_pg_agg_combine);
AMQ_PG_FUNCTION(amq_pg_agg_serialize);
AMQ_PG_FUNCTION(amq_pg_agg_deserialize);

/* The aggregate memory context; raises when not called as an aggregate. */
static MemoryContext aggregate_context(FunctionCallInfo fcinfo)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "amq aggregate support function called in non-aggregate context");
	return aggctx;
}

/* Raises when a state of len bytes cannot pass between processes. */
static void check_state_size(size_t len)
{
	if (len > MaxAllocSize - VARHDRSZ)
		ereport(
		    ERROR, errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
		    errmsg("filter aggregate state of %zu bytes is too large to pass between "
			   "parallel workers",
			   len),
		    errhint("Run it serially (SET max_parallel_workers_per_gather = 0): the serial "
			    "aggregate spills to temporary files and has no such limit."));
}

/* A bytea (in CurrentMemoryContext) holding bytes[0..len). */
static bytea *to_bytea(const void *bytes, size_t len)
{
	bytea *result;

	check_state_size(len);
	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), bytes, len);
	return result;
}

/* What a builder in aggctx allocates with: aggctx, and past work_mem its
 * temporary files (which a serializing aggregate's state hands over). */
static amq_allocator builder_allocator(MemoryContext aggctx, bool serializing)
{
	amq_allocator a = amq_pg_allocator(aggctx);

	a.spill = amq_pg_temp_files(aggctx, serializing);
	return a;
}

/*
 * The builder of a bloom_agg/cuckoo_agg call: fpr, capacity and layout come
 * from the optional arguments of the first row, their defaults and checks
 * from core (sql/arguments.h). A missing or NULL capacity means "size for the
 * distinct values seen", a missing or NULL layout the kind's default for the
 * fpr; a NULL fpr is an error.
 */
static amq_builder *new_builder(FunctionCallInfo fcinfo, amq_kind kind, MemoryContext aggctx)
{
	/* A partial aggregate whose states leave it serialized: a parallel
	 * worker's, or the leader's own part. */
	bool serializing = fcinfo->context != NULL && IsA(fcinfo->context, AggState) &&
			   DO_AGGSPLIT_SERIALIZE(((AggState *)fcinfo->context)->aggsplit);
	amq_allocator a = builder_allocator(aggctx, serializing);
	amq_builder *b;
	amq_error err;
	amq_sql_sizing s;

	amq_sql_sizing_init(&s, kind);
	if (PG_NARGS() > 2) {
		if (PG_ARGISNULL(2)) {
			amq_sql_argument_type(&s, "fpr", "null", &err);
			amq_pg_raise_as(&err, ERRCODE_NULL_VALUE_NOT_ALLOWED);
		}
		amq_pg_check(amq_sql_set_fpr(&s, PG_GETARG_FLOAT8(2), &err), &err);
	}
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
		amq_pg_check(amq_sql_set_capacity(&s, PG_GETARG_INT64(3), &err), &err);
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4)) {
		text *name = PG_GETARG_TEXT_PP(4);

		amq_pg_check(
		    amq_sql_set_layout(&s, VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name), &err), &err);
	}
	b = MemoryContextAlloc(aggctx, sizeof(*b));
	amq_pg_check(amq_sql_builder_init(b, &s, &a, &err), &err);
	/* Its state passes in one bytea: keys that would not fit stay in files
	 * it hands over. */
	if (serializing)
		amq_builder_limit_state(b, MaxAllocSize - VARHDRSZ);
	return b;
}

/* A builder's progress (arg: the aggregate's name) at DEBUG1: each merge of
 * spilled runs as it starts and ends. */
static void log_progress(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	if (done == 0 || done == total)
		elog(DEBUG1, "%s: %s: %llu of %llu keys", (const char *)arg, phase,
		     (unsigned long long)done, (unsigned long long)total);
}

/* Transition: add the value's hash; a NULL value only starts the builder. */
Datum amq_pg_op_agg_trans(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	amq_builder *b;
	amq_error err;

	if (PG_ARGISNULL(0)) {
		b = new_builder(fcinfo, call->kind, aggctx);
		b->progress = log_progress;
		b->progress_arg = (void *)call->name;
	} else
		b = (amq_builder *)PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1)) {
		const amq_pg_hasher *hasher = amq_pg_cached_hasher(fcinfo, 1);
		uint64 hash = amq_pg_hash_value(hasher, PG_GETARG_DATUM(1), b->seed);

		amq_builder_note_family(b, hasher->family);
		amq_pg_check(amq_builder_add(b, hash, &err), &err);
	}
	PG_RETURN_POINTER(b);
}

/* A combine step with a NULL input (a worker that saw no rows): the other
 * input, or NULL when both are. Either state lives in the aggregate's
 * context, so it can stand in for the missing one. */
static Datum combine_with_null(FunctionCallInfo fcinfo)
{
	if (!PG_ARGISNULL(0))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	if (!PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(1));
	PG_RETURN_NULL();
}

/* Merges one aggregate state into another of the same aggregate. */
typedef amq_status (*merge_states)(void *into, void *from, amq_error *err);

/* A combine function: merges the second state into the first by merge. */
static Datum combine_states(FunctionCallInfo fcinfo, merge_states merge)
{
	amq_error err;

	aggregate_context(fcinfo);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return combine_with_null(fcinfo);
	amq_pg_check(merge(PG_GETARG_POINTER(0), PG_GETARG_POINTER(1), &err), &err);
	PG_RETURN_POINTER(PG_GETARG_POINTER(0));
}

/* The second builder merged into the first, and freed. */
static amq_status merge_builders(void *into, void *from, amq_error *err)
{
	amq_status st = amq_builder_merge(into, from, err);

	if (st == AMQ_OK)
		amq_builder_free(from);
	return st;
}

/* Combine: merge the second builder into the first. */
Datum amq_pg_agg_combine(PG_FUNCTION_ARGS)
{
	return combine_states(fcinfo, merge_builders);
}

/* Serial: the builder's state as bytea, for the trip out of a worker. */
Datum amq_pg_agg_serialize(PG_FUNCTION_ARGS)
{
	amq_builder *b = (amq_builder *)PG_GETARG_POINTER(0);
	uint8_t *state;
	size_t len;
	amq_error err;

	aggregate_context(fcinfo);
	/* Made in this call's context, where it becomes the bytea in place. */
	b->result = amq_pg_allocator(CurrentMemoryContext);
	amq_pg_check(amq_builder_serialize(b, &state, &len, &err), &err);
	check_state_size(len);
	PG_RETURN_BYTEA_P(amq_pg_into_varlena(state, len));
}

/* Deserial: a builder in the aggregate context from serial's bytes. */
Datum amq_pg_agg_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	bytea *state = PG_GETARG_BYTEA_PP(0);
	size_t len = VARSIZE_ANY_EXHDR(state);
	amq_allocator a = builder_allocator(aggctx, false);
	amq_builder *b = MemoryContextAlloc(aggctx, sizeof(*b));
	amq_error err;

	amq_pg_check(amq_builder_deserialize(b, VARDATA_ANY(state), len, &a, &err), &err);
	PG_RETURN_POINTER(b);
}

/*
 * Final: the builder's filter. No rows at all gives the filter of a builder
 * with the defaults (no capacity): a valid empty filter, never NULL. The
 * builder is left as it was, so the state may be finished again.
 */
Datum amq_pg_op_agg_final(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_builder empty, *b;
	amq_filter f;
	amq_error err;
	struct varlena *result;

	aggregate_context(fcinfo);
	if (PG_ARGISNULL(0)) {
		amq_allocator a = amq_pg_allocator(CurrentMemoryContext);
		amq_sql_sizing defaults;

		amq_sql_sizing_init(&defaults, call->kind);
		amq_pg_check(amq_sql_builder_init(&empty, &defaults, &a, &err), &err);
		b = &empty;
	} else {
		b = (amq_builder *)PG_GETARG_POINTER(0);
	}
	b->progress = log_progress;
	b->progress_arg = (void *)call->name;
	/* The filter in this call's context, where it becomes the result in
	 * place: never held twice. */
	b->result = amq_pg_allocator(CurrentMemoryContext);
	elog(DEBUG1,
	     "%s: finishing a filter of %llu rows; %llu bytes in %llu sorted runs written to "
	     "temporary files past work_mem, %d runs to merge",
	     call->name, (unsigned long long)b->rows, (unsigned long long)b->spilled_bytes,
	     (unsigned long long)b->spilled_runs, b->nspilled);
	amq_pg_check(amq_builder_finish(b, &f, &err), &err);
	elog(DEBUG1, "%s: finished a filter of %llu bytes", call->name, (unsigned long long)f.size);
	result = amq_pg_into_varlena(f.bytes, f.size);
	if (b == &empty)
		amq_builder_free(&empty);
	PG_RETURN_POINTER(result);
}

/* A union state in aggctx: a verified, writable copy of bytes[0..size). */
static amq_filter *new_union_state(MemoryContext aggctx, const void *bytes, size_t size,
				   const amq_pg_call *call)
{
	amq_filter *state = MemoryContextAlloc(aggctx, sizeof(*state));
	void *copy = MemoryContextAllocExtended(aggctx, size, MCXT_ALLOC_HUGE);

	memcpy(copy, bytes, size);
	amq_pg_open_bytes(state, copy, size, call, "filter");
	return state;
}

/* bloom_union_agg transition: merge the filter in; NULL filters are skipped. */
Datum amq_pg_op_union_agg_trans(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	amq_filter *state = PG_ARGISNULL(0) ? NULL : (amq_filter *)PG_GETARG_POINTER(0);
	amq_filter in;
	amq_error err;

	if (PG_ARGISNULL(1)) {
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	amq_pg_read_filter(PG_GETARG_DATUM(1), call, "filter", &in);
	if (state == NULL)
		PG_RETURN_POINTER(new_union_state(aggctx, in.bytes, in.size, call));
	amq_pg_check(amq_filter_union_into(state, &in, &err), &err);
	PG_RETURN_POINTER(state);
}

/* The second union ORed into the first. */
static amq_status merge_unions(void *into, void *from, amq_error *err)
{
	return amq_filter_union_into(into, from, err);
}

/* bloom_union_agg combine: OR the second union into the first. */
Datum amq_pg_op_union_agg_combine(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	return combine_states(fcinfo, merge_unions);
}

/* bloom_union_agg serial: the sealed union's bytes. */
Datum amq_pg_op_union_agg_serialize(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	amq_filter *state = (amq_filter *)PG_GETARG_POINTER(0);

	aggregate_context(fcinfo);
	amq_filter_seal(state);
	PG_RETURN_BYTEA_P(to_bytea(state->bytes, state->size));
}

/* bloom_union_agg deserial: a checked copy in the aggregate context. */
Datum amq_pg_op_union_agg_deserialize(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	MemoryContext aggctx = aggregate_context(fcinfo);
	bytea *bytes = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(
	    new_union_state(aggctx, VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes), call));
}

/* bloom_union_agg final: the union, or NULL when every input was NULL. */
Datum amq_pg_op_union_agg_final(FunctionCallInfo fcinfo, const amq_pg_call *call)
{
	aggregate_context(fcinfo);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(amq_pg_sealed_copy((amq_filter *)PG_GETARG_POINTER(0)));
}
