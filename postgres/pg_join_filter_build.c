/*
 * pg_join_filter_build.c - the builder node: a pass-through custom scan
 * between a Hash node and its input. Every tuple the Hash node pulls passes
 * through unchanged; on the way its inner join keys go into one blocked Bloom
 * filter per hash clause. When the input ends (MultiExecHash always reads it
 * to the end) the filters are published. A rescan of the input means the hash
 * join is rebuilding its table, so the filters are unpublished and rebuilt
 * from scratch; a hash join that keeps its table never rescans us, and its
 * filters stay valid.
 *
 * Plan form (built by pg_join_filter_plan.c, already as set_plan_refs leaves
 * a plan): lefttree = the input; targetlist = Var(INDEX_VAR, i) for each
 * input column; custom_scan_tlist = Var(OUTER_VAR, i), so EXPLAIN VERBOSE
 * resolves columns through the input; custom_exprs = the inner keys of every
 * filter in turn, over the input (OUTER_VAR); custom_private = per filter its
 * id, capacity and number of keys, then per key its extended hash function,
 * its amq_jf_key_form and collation.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "amq_pg.h"
#include "pg_join_filter.h"

static Node *build_create_state(CustomScan *cscan);
static void build_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *build_exec(CustomScanState *node);
static void build_end(CustomScanState *node);
static void build_rescan(CustomScanState *node);
static void build_explain(CustomScanState *node, List *ancestors, ExplainState *es);

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
};

/* The next integer of custom_private, at *lc, which moves on. */
static int next_int(List *list, ListCell **lc)
{
	int value = intVal(lfirst(*lc));

	*lc = lnext(list, *lc);
	return value;
}

/* The state of one builder node, its filters described by custom_private. */
static Node *build_create_state(CustomScan *cscan)
{
	amq_jf_build_state *state = palloc0(sizeof(amq_jf_build_state));
	List *private = cscan->custom_private;
	ListCell *lc = list_head(private);
	int nfilters = 0;

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &amq_jf_build_exec_methods;
	state->filters = palloc0(sizeof(amq_jf_filter) * list_length(private));
	while (lc != NULL) {
		amq_jf_filter *f = &state->filters[nfilters++];

		f->id = next_int(private, &lc);
		f->capacity = (uint64)next_int(private, &lc);
		f->nkeys = next_int(private, &lc);
		f->keys = palloc0(sizeof(amq_jf_key) * f->nkeys);
		f->key_exprs = palloc0(sizeof(ExprState *) * f->nkeys);
		for (int k = 0; k < f->nkeys; k++) {
			Oid proc = (Oid)next_int(private, &lc);
			amq_jf_key_form form = (amq_jf_key_form)next_int(private, &lc);

			amq_jf_key_init(&f->keys[k], form, proc, (Oid)next_int(private, &lc));
		}
		f->owner = state;
	}
	state->nfilters = nfilters;
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
	for (int i = 0; i < state->nfilters; i++)
		for (int k = 0; k < state->filters[i].nkeys; k++) {
			state->filters[i].key_exprs[k] =
			    ExecInitExpr((Expr *)lfirst(lc), &node->ss.ps);
			lc = lnext(cscan->custom_exprs, lc);
		}
}

/* Drops the filters' memory and marks them unpublished. */
static void build_reset(amq_jf_build_state *state)
{
	amq_allocator alloc = amq_pg_allocator(state->css.ss.ps.state->es_query_cxt);

	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		f->published = false;
		if (f->bloom.bytes != NULL)
			amq_filter_free(&f->bloom, &alloc);
		f->bloom.bytes = NULL;
	}
	state->started = false;
	state->finished = false;
}

/* Creates the empty filters a build fills. */
static void build_start(amq_jf_build_state *state)
{
	amq_allocator alloc = amq_pg_allocator(state->css.ss.ps.state->es_query_cxt);
	amq_error err;

	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		amq_pg_check(amq_bloom_create(&f->bloom, f->capacity, AMQ_JF_FPR,
					      AMQ_LAYOUT_BLOCKED, AMQ_DEFAULT_SEED, &alloc, &err),
			     &err);
		f->contains = amq_bloom_probe_for(&f->bloom);
	}
}

/* Publishes the filters of a finished build, unless one came out too full
 * to be worth probing (the inner side held far more keys than planned). */
static void build_publish(amq_jf_build_state *state)
{
	for (int i = 0; i < state->nfilters; i++) {
		amq_jf_filter *f = &state->filters[i];

		f->overfull = amq_bloom_expected_fpr(&f->bloom) > AMQ_JF_MAX_BUILT_FPR;
		f->published = !f->overfull;
	}
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
		if (!state->finished)
			build_publish(state);
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

		for (int k = 0; k < f->nkeys && !any_null; k++)
			values[k] = ExecEvalExpr(f->key_exprs[k], econtext, &any_null);
		/* Hash operators are strict: a row with a NULL key matches nothing. */
		if (any_null)
			continue;
		amq_bloom_add(&f->bloom, amq_jf_hash_keys(f->keys, f->nkeys, values));
		f->keys_added++;
	}
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
		}
	}
}
