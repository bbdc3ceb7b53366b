/*
 * joinfilter/build.c - the builder node: a pass-through custom scan
 * between a Hash node and its input. Every tuple the Hash node pulls passes
 * through unchanged; on the way its inner join keys go into one blocked Bloom
 * filter per hash clause. When the input ends (MultiExecHash always reads it
 * to the end) the filters are published. A rescan of the input means the hash
 * join is rebuilding its table, so the filters are unpublished and rebuilt
 * from scratch; a hash join that keeps its table never rescans us, and its
 * filters stay valid.
 *
 * Under a Parallel Hash join the builder is parallel-aware: its filters live
 * in the query's dynamic shared memory, created empty by the leader, and every
 * participant adds the rows its share of the input brings, with atomic ORs.
 * They are usable once the join's build barrier says the whole table is built
 * (amq_jf_filter_readiness). A rescan of the parallel plan clears them before the
 * workers start again. Run without shared memory (no workers could be used),
 * the same plan builds private filters as above.
 *
 * Plan form (built by joinfilter/plan.c, already as set_plan_refs leaves
 * a plan): lefttree = the input; targetlist = Var(INDEX_VAR, i) for each
 * input column; custom_scan_tlist = Var(OUTER_VAR, i), so EXPLAIN VERBOSE
 * resolves columns through the input; custom_exprs = the inner keys of every
 * filter in turn, over the input (OUTER_VAR), then those of the remote
 * filters; custom_private = its amq_jf_build_plan (joinfilter/plan_data.c):
 * the local filters', and the remote filters' (joinfilter/ship.c, which
 * builds them from the same rows).
 */
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/hashjoin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "storage/barrier.h"
#include "storage/shm_toc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "filter/filter.h"
#include "joinfilter/joinfilter.h"

static Node *build_create_state(CustomScan *cscan);
static void build_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *build_exec(CustomScanState *node);
static void build_end(CustomScanState *node);
static void build_rescan(CustomScanState *node);
static void build_explain(CustomScanState *node, List *ancestors, ExplainState *es);
static Size build_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void build_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void build_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
static void build_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
static void build_shutdown(CustomScanState *node);

const CustomScanMethods amq_jf_build_methods = {
    .CustomName = AMQ_JF_BUILD_NAME,
    .CreateCustomScanState = build_create_state,
};

const CustomExecMethods amq_jf_build_exec_methods = {
    .CustomName = AMQ_JF_BUILD_NAME,
    .BeginCustomScan = build_begin,
    .ExecCustomScan = build_exec,
    .EndCustomScan = build_end,
    .ReScanCustomScan = build_rescan,
    .ExplainCustomScan = build_explain,
    .EstimateDSMCustomScan = build_estimate_dsm,
    .InitializeDSMCustomScan = build_initialize_dsm,
    .ReInitializeDSMCustomScan = build_reinitialize_dsm,
    .InitializeWorkerCustomScan = build_initialize_worker,
    .ShutdownCustomScan = build_shutdown,
};

/* The state of one builder node, its filters described by its plan. */
static Node *build_create_state(CustomScan *cscan)
{
	amq_jf_build_state *state = palloc0(sizeof(amq_jf_build_state));
	amq_jf_build_plan plan;
	ListCell *lc;

	amq_jf_build_plan_read(cscan->custom_private, &plan);
	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &amq_jf_build_exec_methods;
	state->filters = palloc0(sizeof(amq_jf_filter) * (list_length(plan.filters) + 1));
	foreach (lc, plan.filters) {
		const amq_jf_filter_plan *fp = lfirst(lc);
		amq_jf_filter *f = &state->filters[state->nfilters++];

		f->id = fp->id;
		f->capacity = fp->capacity;
		f->nkeys = fp->nkeys;
		f->keys = palloc0(sizeof(amq_jf_key) * f->nkeys);
		f->key_exprs = palloc0(sizeof(ExprState *) * f->nkeys);
		for (int k = 0; k < f->nkeys; k++)
			amq_jf_key_init(&f->keys[k], fp->keys[k].form, fp->keys[k].hash_proc,
					fp->keys[k].collation);
		amq_jf_judge_init(&f->judge);
		f->owner = state;
		if (fp->collect_keys)
			f->keys_seen = palloc0(sizeof(amq_jf_key_set));
	}
	amq_jf_ship_create(state, plan.remote);
	return (Node *)state;
}

/* Starts the input and compiles the keys; the result slot is the input's. */
static void build_begin(CustomScanState *node, EState *estate, int eflags)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	CustomScan *cscan = (CustomScan *)node->ss.ps.plan;
	PlanState *input = ExecInitNode(outerPlan(cscan), estate, eflags);
	ListCell *lc = list_head(cscan->custom_exprs);

	outerPlanState(node) = input;
	/* We return the input's own slots, so parents must see its slot type. */
	node->ss.ps.resultops = ExecGetResultSlotOps(input, &node->ss.ps.resultopsfixed);
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		for (int k = 0; k < f->nkeys; k++) {
			f->key_exprs[k] = ExecInitExpr((Expr *)lfirst(lc), &node->ss.ps);
			lc = lnext(cscan->custom_exprs, lc);
		}
		/* One key (plan.c): its set, and its range where its type has no
		 * collation. */
		if (f->keys_seen != NULL) {
			Oid type = exprType((Node *)f->key_exprs[0]->expr);

			amq_jf_key_set_init(f->keys_seen, type, !type_is_collatable(type), true,
					    estate->es_query_cxt);
		}
	}
	amq_jf_ship_begin(state, lc, cscan->custom_exprs);
}

/* Marks the filters unpublished and drops the memory of private ones (shared
 * ones belong to the parallel query and are cleared by its re-initialisation). */
static void build_reset(amq_jf_build_state *state)
{
	amq_allocator alloc = amq_pg_allocator(state->css.ss.ps.state->es_query_cxt);

	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		f->published = false;
		f->overfull = false;
		if (f->keys_seen != NULL)
			amq_jf_key_set_clear(f->keys_seen);
		if (f->shared)
			continue;
		if (f->bloom.bytes != NULL)
			amq_filter_free(&f->bloom, &alloc);
		f->bloom.bytes = NULL;
	}
	amq_jf_ship_reset(state);
	state->started = false;
	state->finished = false;
}

/* Creates the empty private filters a build fills (shared ones exist). */
static void build_start(amq_jf_build_state *state)
{
	amq_allocator alloc = amq_pg_allocator(state->css.ss.ps.state->es_query_cxt);
	amq_error err;

	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		if (f->shared)
			continue;
		amq_pg_check(amq_bloom_create(&f->bloom, f->capacity, AMQ_JF_FPR,
					      AMQ_LAYOUT_BLOCKED, AMQ_DEFAULT_SEED, &alloc, &err),
			     &err);
		f->contains = amq_filter_probe_for(&f->bloom);
	}
}

/* Whether a finished filter came out too full to be worth probing (the inner
 * side held far more keys than planned). */
static bool filter_overfull(const amq_jf_filter *f)
{
	return amq_filter_expected_fpr(&f->bloom) > AMQ_JF_MAX_BUILT_FPR;
}

/* Publishes the private filters of a finished build, unless overfull. Shared
 * filters are published by their join's build barrier instead. */
static void build_publish(amq_jf_build_state *state)
{
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		if (f->shared)
			continue;
		f->overfull = filter_overfull(f);
		f->published = !f->overfull;
		if (f->keys_seen != NULL)
			amq_jf_key_set_seal(f->keys_seen);
		f->builds++;
	}
}

/* See joinfilter/nodes.h. */
amq_jf_readiness amq_jf_filter_readiness(amq_jf_filter *f)
{
	HashJoinState *join = f->owner->join;
	HashJoinTable table = join != NULL ? join->hj_HashTable : NULL;

	if (table == NULL)
		return AMQ_JF_NOT_BUILT;
	if (!f->shared) {
		if (f->published)
			return AMQ_JF_USABLE;
		return f->overfull ? AMQ_JF_OVERFULL : AMQ_JF_NOT_BUILT;
	}
	if (table->parallel_state == NULL ||
	    BarrierPhase(&table->parallel_state->build_barrier) < PHJ_BUILD_HASH_OUTER)
		return AMQ_JF_NOT_BUILT;
	if (!f->published) { /* the first look at this build's finished filter */
		f->overfull = filter_overfull(f);
		f->published = true;
	}
	return f->overfull ? AMQ_JF_OVERFULL : AMQ_JF_USABLE;
}

/* Passes the next input tuple on after adding its keys to the filters. */
static TupleTableSlot *build_exec(CustomScanState *node)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot;
	MemoryContext old;

	if (!state->started) {
		build_start(state);
		state->started = true;
	}
	slot = ExecProcNode(outerPlanState(node));
	if (TupIsNull(slot)) {
		if (!state->finished) {
			build_publish(state);
			amq_jf_ship_publish(state);
		}
		state->finished = true;
		return slot;
	}
	ResetExprContext(econtext);
	econtext->ecxt_outertuple = slot;
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];
		Datum values[INDEX_MAX_KEYS];
		bool any_null = false;
		uint64 h;

		for (int k = 0; k < f->nkeys && !any_null; k++)
			values[k] = ExecEvalExpr(f->key_exprs[k], econtext, &any_null);
		/* Hash operators are strict: a row with a NULL key matches nothing. */
		if (any_null)
			continue;
		h = amq_jf_hash_keys(f->keys, f->nkeys, values);
		if (f->keys_seen != NULL)
			amq_jf_key_set_add(f->keys_seen, values[0], h);
		if (f->shared)
			amq_blocked_add_concurrent(&f->bloom, h);
		else
			amq_bloom_add(&f->bloom, h);
		f->keys_added++;
	}
	amq_jf_ship_add(state, econtext);
	MemoryContextSwitchTo(old);
	return slot;
}

/* Frees the filters and ends the input. */
static void build_end(CustomScanState *node)
{
	build_reset((amq_jf_build_state *)node);
	ExecEndNode(outerPlanState(node));
}

/* The hash join is rebuilding its table: so are we. */
static void build_rescan(CustomScanState *node)
{
	PlanState *input = outerPlanState(node);

	build_reset((amq_jf_build_state *)node);
	if (input->chgParam == NULL)
		ExecReScan(input);
}

/* The bytes of filter f's serialized form; in shared memory each filter
 * starts MAXALIGNed after the one before. */
static Size filter_bytes(const amq_jf_filter *f)
{
	size_t bytes;
	amq_error err;

	amq_pg_check(amq_filter_bytes(AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, f->capacity, AMQ_JF_FPR,
				      &bytes, &err),
		     &err);
	return bytes;
}

/* The bytes at the head of a builder's shared memory: one count of keys
 * added per filter, summed over the participants. */
static Size shared_counts_bytes(const amq_jf_build_state *state)
{
	return MAXALIGN(sizeof(pg_atomic_uint64) * state->nfilters);
}

/* Parallel query: the shared memory the key counts and all of this builder's
 * filters take. */
static Size build_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	Size total = shared_counts_bytes(state);

	for (int i = 0; i < state->nfilters; i++)
		total = add_size(total, MAXALIGN(filter_bytes(&state->filters[i])));
	return total;
}

/* Where the next filter goes in a builder's share of shared memory: the
 * allocator that amq_bloom_create writes an empty filter through. */
typedef struct dsm_cursor {
	char *next;
	Size left;
} dsm_cursor;

/* Hands out the cursor's next bytes, or NULL when they would not fit (an
 * estimate that disagrees with the filter's size: an error, never an overrun). */
static void *dsm_take(void *ctx, size_t size)
{
	dsm_cursor *cursor = ctx;
	void *at = cursor->next;

	if (MAXALIGN(size) > cursor->left)
		return NULL;
	cursor->next += MAXALIGN(size);
	cursor->left -= MAXALIGN(size);
	return at;
}

/* Shared memory is freed with the parallel query, never filter by filter. */
static void dsm_keep(void *ctx, void *ptr) {}

/* The leader: creates the empty shared filters in coordinate (pscan_len
 * bytes, as estimated). */
static void build_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	Size counts = shared_counts_bytes(state);
	dsm_cursor cursor = {(char *)coordinate + counts, node->pscan_len - counts};
	amq_allocator alloc = {.alloc = dsm_take, .free = dsm_keep, .ctx = &cursor};
	amq_error err;

	state->shared_keys_added = coordinate;
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		pg_atomic_init_u64(&state->shared_keys_added[i], 0);
		amq_pg_check(amq_bloom_create(&f->bloom, f->capacity, AMQ_JF_FPR,
					      AMQ_LAYOUT_BLOCKED, AMQ_DEFAULT_SEED, &alloc, &err),
			     &err);
		f->contains = amq_filter_probe_for(&f->bloom);
		f->shared = true;
	}
}

/* The leader, before a rescan of the parallel plan: empties the filters. */
static void build_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;

	for (int i = 0; i < state->nfilters; i++)
		memset(state->filters[i].bloom.payload, 0, state->filters[i].bloom.payload_size);
}

/* A worker: views the filters the leader created. */
static void build_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	char *at = (char *)coordinate + shared_counts_bytes(state);
	amq_error err;

	state->shared_keys_added = coordinate;
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];
		Size size = filter_bytes(f);

		amq_pg_check(amq_filter_open(&f->bloom, at, size, &err), &err);
		f->contains = amq_filter_probe_for(&f->bloom);
		f->shared = true;
		at += MAXALIGN(size);
	}
}

/*
 * The end of execution, while the parallel query's shared memory is still
 * there (a Gather shuts down after the nodes below it): every participant
 * adds its count of keys to the shared ones, and the leader takes their sum
 * for EXPLAIN ANALYZE. A worker shuts down before its last rows reach the
 * leader, so once the Gather has read all rows, every count is in; a query
 * cut short (LIMIT) may miss those of workers still running.
 */
static void build_shutdown(CustomScanState *node)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;

	if (state->shared_keys_added == NULL || state->keys_reported)
		return;
	state->keys_reported = true;
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];
		uint64 all = pg_atomic_add_fetch_u64(&state->shared_keys_added[i], f->keys_added);

		if (!IsParallelWorker())
			f->keys_added = all;
	}
}

/* EXPLAIN: the filters built and, under ANALYZE, what went into them. */
static void build_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	amq_jf_build_state *state = (amq_jf_build_state *)node;
	CustomScan *cscan = (CustomScan *)node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	ListCell *lc = list_head(cscan->custom_exprs);

	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];
		List *keys = NIL;
		char *label = psprintf("Builds Bloom Filter %d", f->id);

		for (int k = 0; k < f->nkeys; k++) {
			keys = lappend(keys, lfirst(lc));
			lc = lnext(cscan->custom_exprs, lc);
		}
		ExplainPropertyText(label, amq_jf_deparse_keys(keys, context), es);
		if (es->analyze) {
			char *prefix = psprintf("Filter %d ", f->id);

			ExplainPropertyInteger(psprintf("%sKeys Added", prefix), NULL,
					       (int64)f->keys_added, es);
			if (f->bloom.bytes != NULL)
				ExplainPropertyInteger(psprintf("%sMemory", prefix), "kB",
						       (int64)((f->bloom.size + 1023) / 1024), es);
			if (f->overfull)
				ExplainPropertyText(psprintf("%sState", prefix),
						    "not used: more keys than planned", es);
			if (f->keys_seen != NULL)
				ExplainPropertyInteger(
				    psprintf("%sPartitions Skipped by Join Filter", prefix), NULL,
				    (int64)f->partitions_skipped, es);
		}
	}
	amq_jf_ship_explain(state, lc, cscan->custom_exprs, context, es);
}
