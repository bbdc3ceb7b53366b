/*
 * joinfilter/probe.c - the probe node: a custom scan directly above a
 * scan on the outer side of a hash join that passes on only the rows whose
 * join key its Bloom filter may hold. It lets every row pass while the filter
 * is not usable (not linked, not built yet: ExecHashJoin may fetch the first
 * outer row before it builds; or its hash join is about to rebuild), and
 * while it is switched off: after a window of AMQ_JF_CHECK_ROWS probes that
 * dropped too few rows, for a stretch of rows that doubles each time, and
 * after a build that ended overfull, until the next rescan. A filter may have
 * several probes (one per partition of a partitioned table); they count
 * their windows together and switch off together (amq_jf_judge).
 *
 * A probe right above a sequential scan of a heap table, and the probes
 * stacked on it, drop rows inside the scan (joinfilter/sift.c).
 *
 * Plan form: lefttree = the scan; targetlist and custom_scan_tlist as the
 * builder's (the node returns its input's own slots); custom_exprs = the
 * keys, Var(OUTER_VAR, attno), for EXPLAIN; custom_private = its
 * amq_jf_probe_plan (joinfilter/plan_data.c).
 */
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "access/htup_details.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "joinfilter/nodes.h"

static Node *probe_create_state(CustomScan *cscan);
static void probe_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *probe_exec(CustomScanState *node);
static bool gate_skips(amq_jf_probe_state *state);
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

/* The state of one probe node, described by its plan. */
static Node *probe_create_state(CustomScan *cscan)
{
	amq_jf_probe_state *state = palloc0(sizeof(amq_jf_probe_state));
	amq_jf_probe_plan plan;

	amq_jf_probe_plan_read(cscan->custom_private, &plan);
	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &amq_jf_probe_exec_methods;
	state->filter_id = plan.filter_id;
	state->nkeys = plan.nkeys;
	state->attnos = palloc(sizeof(AttrNumber) * state->nkeys);
	state->keys = palloc0(sizeof(amq_jf_key) * state->nkeys);
	for (int k = 0; k < state->nkeys; k++) {
		state->attnos[k] = plan.keys[k].attno;
		amq_jf_key_init(&state->keys[k], plan.keys[k].form, plan.keys[k].hash_proc,
				plan.keys[k].collation);
	}
	state->keys_allocate = amq_jf_keys_allocate(state->keys, state->nkeys);
	state->partition_qual = plan.partition_qual;
	return (Node *)state;
}

/* Starts the scan below, whose slots the probe returns, and joins its sift. */
static void probe_begin(CustomScanState *node, EState *estate, int eflags)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	PlanState *input = ExecInitNode(outerPlan(node->ss.ps.plan), estate, eflags);

	outerPlanState(node) = input;
	node->ss.ps.resultops = ExecGetResultSlotOps(input, &node->ss.ps.resultopsfixed);
	amq_jf_sift_join(state, input);
	state->probe_proc = node->ss.ps.ExecProcNode;
	state->judge = palloc(sizeof(amq_jf_judge));
	amq_jf_judge_init(state->judge);
	if (state->partition_qual != NULL) {
		state->gate = palloc(sizeof(amq_jf_partition_gate));
		amq_jf_partition_gate_init(state->gate, state->partition_qual, estate);
	}
}

static TupleTableSlot *pass_through(PlanState *node);

/* Makes this probe pass rows on unprobed while its judge is off: the
 * executor calls pass_through() instead of the custom scan's machinery. */
static void stop_probing(amq_jf_probe_state *state)
{
	state->ever_off = true;
	ExecSetExecProcNode(&state->css.ss.ps, pass_through);
}

/* Makes this probe probe again once its judge is on. */
static void probe_if_on(amq_jf_probe_state *state)
{
	if (amq_jf_judge_on(state->judge))
		ExecSetExecProcNode(&state->css.ss.ps, state->probe_proc);
}

/* Whether the row a switched-off probe just passed was sifted by it before
 * it switched off: it tests a page's rows ahead of the scan, and those it
 * kept were counted as probed. Rows come in page and offset order, so after
 * the first one it did not sift, no later one was, and the check stops. */
static bool sifted_before_off(amq_jf_probe_state *state)
{
	if (state->sifted_through == InvalidOffsetNumber)
		return false;
	if (amq_jf_sift_row(state) == AMQ_JF_ROW_SIFTED)
		return true;
	state->sifted_through = InvalidOffsetNumber;
	return false;
}

/* A switched-off probe's node: its input's next row, with nothing in between
 * but this call and the count of the rows left before the probes probe
 * again, which leaves out rows it sifted. A probe whose judge another probe
 * of the filter switched on goes back to probing. */
static TupleTableSlot *pass_through(PlanState *node)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	amq_jf_judge *judge = state->judge;
	TupleTableSlot *slot = ExecProcNode(outerPlanState(node));

	if (!TupIsNull(slot) && !amq_jf_judge_on(judge) && !sifted_before_off(state))
		amq_jf_judge_pass_unprobed(judge);
	probe_if_on(state);
	return slot;
}

uint64 amq_jf_probe_hash_allocating(amq_jf_probe_state *state, const Datum *values)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	uint64 h;

	h = amq_jf_hash_keys(state->keys, state->nkeys, values);
	MemoryContextSwitchTo(old);
	ResetExprContext(econtext);
	return h;
}

/*
 * Key column attno of the row in slot. A row from a heap scan is read as
 * heap_getattr reads a tuple: straight at the column's cached offset when the
 * tuple has no NULLs, without deforming the columns before it into the slot.
 * Most rows are dropped, and a row that passes is deformed by the join above.
 */
static inline Datum key_column(TupleTableSlot *slot, AttrNumber attno, bool *isnull)
{
	if ((TTS_IS_BUFFERTUPLE(slot) || TTS_IS_HEAPTUPLE(slot)) && attno > slot->tts_nvalid)
		return heap_getattr(((HeapTupleTableSlot *)slot)->tuple, attno,
				    slot->tts_tupleDescriptor, isnull);
	return slot_getattr(slot, attno, isnull);
}

/* Whether the row in slot may find a match, probed by itself: its key is not
 * NULL (hash operators are strict: NULL matches nothing) and may be in the
 * filter. */
static bool row_may_match(amq_jf_probe_state *state, TupleTableSlot *slot)
{
	const amq_jf_filter *f = state->filter;
	Datum values[INDEX_MAX_KEYS];
	bool isnull = false;

	for (int k = 0; k < state->nkeys && !isnull; k++)
		values[k] = key_column(slot, state->attnos[k], &isnull);
	if (isnull)
		return false;
	return f->contains(&f->bloom, amq_jf_probe_hash(state, values));
}

void amq_jf_count_probes(amq_jf_probe_state *state, uint32 probed, uint32 passed)
{
	InstrCountTuples2(state, probed);
	InstrCountFiltered1(state, probed - passed);
	/* Off: this probe stops at once, the filter's others at their next row. */
	if (amq_jf_judge_count(state->judge, probed, passed))
		stop_probing(state);
}

/* True when the row in slot may have a match: it was sifted inside the scan
 * (and counted then), or it is probed by itself now and counted. The first
 * row of a page is counted before the rest of its page is sifted, so that
 * windows count rows in the scan's order. */
static bool probe_row(amq_jf_probe_state *state, TupleTableSlot *slot)
{
	amq_jf_sift_place place = AMQ_JF_ROW_UNSIFTED;
	bool pass;

	if (state->heap_attnos != NULL) {
		place = amq_jf_sift_row(state);
		if (place == AMQ_JF_ROW_SIFTED)
			return true;
	}
	pass = row_may_match(state, slot);
	amq_jf_count_probes(state, 1, pass);
	if (place == AMQ_JF_ROW_STARTS_PAGE)
		amq_jf_sift_rest(state->sift);
	return pass;
}

/* The next row of the scan that may find a match. */
static TupleTableSlot *probe_exec(CustomScanState *node)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	PlanState *input = outerPlanState(node);

	if (state->gate != NULL && !state->decided && gate_skips(state))
		return NULL;
	for (;;) {
		TupleTableSlot *slot;

		if (!amq_jf_judge_on(state->judge)) {
			/* a window just ended, here or at another probe of the filter */
			stop_probing(state);
			return pass_through(&node->ss.ps);
		}
		slot = ExecProcNode(input);
		if (TupIsNull(slot))
			return slot;
		if (!state->ready) {
			switch (state->filter != NULL ? amq_jf_filter_readiness(state->filter)
						      : AMQ_JF_NOT_BUILT) {
			case AMQ_JF_NOT_BUILT:
				InstrCountFiltered2(node, 1);
				return slot;
			case AMQ_JF_OVERFULL:
				amq_jf_judge_off_until_rescan(state->judge);
				stop_probing(state);
				return slot;
			case AMQ_JF_USABLE:
				state->ready = true;
				break;
			}
		}
		if (probe_row(state, slot))
			return slot;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Whether this scan of the partition may be skipped: the filter's build is
 * complete (private filters only: a shared one's keys are spread over the
 * participants), and no key of it meets the partition's constraint (all of
 * them tested when the build kept at most AMQ_JF_LOCAL_SET_KEYS), or their
 * range refutes it. An empty build skips every partition.
 */
static bool skip_partition(amq_jf_probe_state *state)
{
	amq_jf_filter *f = state->filter;

	if (f == NULL || f->shared || f->keys_seen == NULL ||
	    amq_jf_filter_readiness(f) == AMQ_JF_NOT_BUILT)
		return false;
	return amq_jf_partition_gate_refutes(state->gate, f->keys_seen);
}

/* A skipped partition's probe: no rows, its scan never called. */
static TupleTableSlot *skipped(PlanState *node)
{
	return NULL;
}

/* Decides, at the first call after a start or rescan of a probe above a
 * partition's scan, whether to skip the scan (which then never starts);
 * returns true when it does. */
static bool gate_skips(amq_jf_probe_state *state)
{
	amq_jf_filter *f = state->filter;
	bool built = f != NULL && amq_jf_filter_readiness(f) != AMQ_JF_NOT_BUILT;

	state->decided = true;
	/* A rescan that kept the hash table keeps the keys: the same answer,
	 * without testing every key again (a nested loop rescans per row). */
	if (!built || f->builds != state->decided_build) {
		state->skipped = built && skip_partition(state);
		state->decided_build = built ? f->builds : 0;
	}
	if (!state->skipped)
		return false;
	state->filter->partitions_skipped++;
	ExecSetExecProcNode(&state->css.ss.ps, skipped);
	return true;
}

/* The node's first call after a rescan of a probe above a partition's scan:
 * the gate, then the probe it is (on or switched off). */
static TupleTableSlot *partition_gate(PlanState *node)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;

	if (gate_skips(state))
		return NULL;
	if (!amq_jf_judge_on(state->judge)) {
		stop_probing(state);
		return pass_through(node);
	}
	ExecSetExecProcNode(node, state->probe_proc);
	return state->probe_proc(node);
}

/* Ends the scan below. */
static void probe_end(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

/* A rescan makes the probe look at its filter again before using it: the
 * hash join is rescanned with its whole outer side, us included, whenever it
 * may rebuild its table and filter (or, for a parallel plan, have them
 * cleared). Probes switched off for an overfull filter probe again. */
static void probe_rescan(CustomScanState *node)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	PlanState *input = outerPlanState(node);

	state->ready = false;
	if (state->sift != NULL) /* the scan starts again, and the filter may be rebuilt */
		amq_jf_sift_restart(state->sift);
	amq_jf_judge_rescan(state->judge);
	probe_if_on(state);
	if (state->gate != NULL) {
		state->decided = false;
		ExecSetExecProcNode(&state->css.ss.ps, partition_gate);
	}
	if (input->chgParam == NULL)
		ExecReScan(input);
}

/* EXPLAIN: the filter applied and, under ANALYZE, what it did in all
 * participants and loops. */
static void probe_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	amq_jf_probe_state *state = (amq_jf_probe_state *)node;
	CustomScan *cscan = (CustomScan *)node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	amq_node_instrumentation *instr = node->ss.ps.instrument;

	ExplainPropertyText(psprintf("Applies Bloom Filter %d", state->filter_id),
			    amq_jf_deparse_keys(cscan->custom_exprs, context), es);
	if (es->analyze && instr != NULL) {
		double removed = instr->nfiltered1, probed = instr->ntuples2;
		double unready = instr->nfiltered2;
		double off = instr->ntuples - (probed - removed) - unready;

		ExplainPropertyFloat("Rows Removed by Bloom Filter", NULL, removed, 0, es);
		ExplainPropertyFloat("Rows Probed", NULL, probed, 0, es);
		if (unready > 0)
			ExplainPropertyFloat("Rows Passed Before Filter Was Ready", NULL, unready,
					     0, es);
		if (off > 0)
			ExplainPropertyFloat("Rows Passed While Switched Off", NULL, off, 0, es);
		ExplainPropertyBool("Switched Off", state->ever_off || off > 0, es);
		if (state->gate != NULL && instr->nloops > 0)
			ExplainPropertyBool("Partition Skipped by Join Filter", state->skipped, es);
	}
}
