/*
 * pg_join_filter_probe.c - the probe node: a custom scan directly above a
 * scan on the outer side of a hash join that passes on only the rows whose
 * join key its Bloom filter may hold. It lets every row pass while the filter
 * is not usable (not linked, not built yet: ExecHashJoin may fetch the first
 * outer row before it builds; or its hash join is about to rebuild), and for
 * good once the first AMQ_JF_CHECK_ROWS probes show it drops too few rows.
 *
 * Plan form: lefttree = the scan; targetlist and custom_scan_tlist as the
 * builder's (the node returns the scan's own slots); custom_exprs = the keys,
 * Var(OUTER_VAR, attno), for EXPLAIN; custom_private = filter id, the
 * planner's expected pass rate, the number of keys, then per key its column,
 * extended hash function, amq_jf_key_form and collation.
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pg_join_filter.h"

static Node *probe_create_state(CustomScan *cscan);
static void probe_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *probe_exec(CustomScanState *node);
static void probe_end(CustomScanState *node);
static void probe_rescan(CustomScanState *node);
static void probe_explain(CustomScanState *node, List *ancestors, ExplainState *es);

const CustomScanMethods amq_jf_probe_methods = {
    .CustomName = AMQ_JF_PROBE_NAME,
    .CreateCustomScanState = probe_create_state,
};

const CustomExecMethods amq_jf_probe_exec_methods = {
    .CustomName = AMQ_JF_PROBE_NAME,
    .BeginCustomScan = probe_begin,
    .ExecCustomScan = probe_exec,
    .EndCustomScan = probe_end,
    .ReScanCustomScan = probe_rescan,
    .ExplainCustomScan = probe_explain,
};

/* The state of one probe node, described by custom_private. */
static Node *probe_create_state(CustomScan *cscan)
{
	amq_jf_probe_state *state = palloc0(sizeof(amq_jf_probe_state));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &amq_jf_probe_exec_methods;
	List *private = cscan->custom_private;

	state->filter_id = intVal(linitial(private));
	state->nkeys = intVal(lthird(private));
	state->attnos = palloc(sizeof(AttrNumber) * state->nkeys);
	state->keys = palloc0(sizeof(amq_jf_key) * state->nkeys);
	for (int k = 0; k < state->nkeys; k++) {
		int at = 3 + 4 * k;

		state->attnos[k] = (AttrNumber)intVal(list_nth(private, at));
		amq_jf_key_init(&state->keys[k], (amq_jf_key_form)intVal(list_nth(private, at + 2)),
				(Oid)intVal(list_nth(private, at + 1)),
				(Oid)intVal(list_nth(private, at + 3)));
	}
	state->keys_allocate = amq_jf_keys_allocate(state->keys, state->nkeys);
	return (Node *)state;
}

/* Starts the scan below; the result slot is the scan's. */
static void probe_begin(CustomScanState *node, EState *estate, int eflags)
{
	PlanState *input = ExecInitNode(outerPlan(node->ss.ps.plan), estate, eflags);

	outerPlanState(node) = input;
	node->ss.ps.resultops = ExecGetResultSlotOps(input, &node->ss.ps.resultopsfixed);
}

/* A switched-off probe's node: its input's next row, with nothing in between
 * but this call. */
static TupleTableSlot *pass_through(PlanState *node)
{
	return ExecProcNode(outerPlanState(node));
}

/* Stops probing for the rest of the query: from the next row on, the executor
 * calls pass_through() instead of the custom scan's machinery. */
static void switch_off(amq_jf_probe_state *state)
{
	state->switched_off = true;
	ExecSetExecProcNode(&state->css.ss.ps, pass_through);
}

/* True when the row in slot may have a match: its key is not NULL and may be
 * in the filter. Counts the probe and switches the filter off when it does
 * not pay. */
static bool probe_row(amq_jf_probe_state *state, TupleTableSlot *slot)
{
	const amq_jf_filter *f = state->filter;
	Datum values[INDEX_MAX_KEYS];
	bool isnull = false;
	bool pass;

	state->probed++;
	for (int k = 0; k < state->nkeys && !isnull; k++)
		values[k] = slot_getattr(slot, state->attnos[k], &isnull);
	if (isnull) {
		pass = false; /* hash operators are strict: NULL matches nothing */
	} else if (state->keys_allocate) {
		ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
		MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		uint64 h = amq_jf_hash_keys(state->keys, state->nkeys, values);

		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
		pass = f->contains(&f->bloom, h);
	} else {
		pass = f->contains(&f->bloom, amq_jf_hash_keys(state->keys, state->nkeys, values));
	}
	if (!pass)
		state->removed++;
	if (state->probed == AMQ_JF_CHECK_ROWS &&
	    (double)(state->probed - state->removed) > AMQ_JF_MAX_RUNTIME_PASS * state->probed)
		switch_off(state);
	return pass;
}

/* The next row of the scan that may find a match. */
static TupleTableSlot *probe_exec(CustomScanState *node)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	PlanState *input = outerPlanState(node);

	for (;;) {
		TupleTableSlot *slot = ExecProcNode(input);

		if (TupIsNull(slot))
			return slot;
		if (state->switched_off)
			return slot;
		if (!state->ready) {
			if (state->filter == NULL || !amq_jf_filter_usable(state->filter)) {
				state->unchecked++;
				return slot;
			}
			state->ready = true;
		}
		if (probe_row(state, slot))
			return slot;
		CHECK_FOR_INTERRUPTS();
	}
}

/* Ends the scan below. */
static void probe_end(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

/* A rescan makes the probe look at its filter again before using it: the
 * hash join is rescanned with its whole outer side, us included, whenever it
 * may rebuild its table and filter (or, for a parallel plan, have them
 * cleared). */
static void probe_rescan(CustomScanState *node)
{
	PlanState *input = outerPlanState(node);

	((amq_jf_probe_state *)node)->ready = false;
	if (input->chgParam == NULL)
		ExecReScan(input);
}

/* EXPLAIN: the filter applied and, under ANALYZE, what it did. */
static void probe_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	CustomScan *cscan = (CustomScan *)node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);

	ExplainPropertyText(psprintf("Applies Bloom Filter %d", state->filter_id),
			    amq_jf_deparse_keys(cscan->custom_exprs, context), es);
	if (es->analyze) {
		ExplainPropertyInteger("Rows Removed by Bloom Filter", NULL, (int64)state->removed,
				       es);
		ExplainPropertyInteger("Rows Probed", NULL, (int64)state->probed, es);
		if (state->unchecked > 0)
			ExplainPropertyInteger("Rows Passed Before Filter Was Ready", NULL,
					       (int64)state->unchecked, es);
		ExplainPropertyBool("Switched Off", state->switched_off, es);
	}
}
