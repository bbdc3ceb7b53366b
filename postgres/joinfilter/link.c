/*
 * joinfilter/link.c - ties the nodes of one executor tree together once
 * ExecutorStart has built it: each builder to the hash join above its Hash
 * node (whose hash table tells whether a published filter is current), and
 * each probe to the filter with its id. Plan nodes have no parent pointers and
 * the probe is initialised before its builder (ExecInitHashJoin starts the
 * outer side first), so this is done by one walk over the finished tree. A
 * tree started any other way (EvalPlanQual's copy) stays unlinked, and an
 * unlinked probe lets every row pass. A backend that has never planned a
 * filter skips the walk, so loading the library costs other queries nothing.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"

#include "joinfilter/joinfilter.h"

static ExecutorStart_hook_type prev_executor_start;

typedef struct link_walk {
	List *builders; /* amq_jf_build_state * */
	List *probes;	/* amq_jf_probe_state * */
	List *scans;	/* ForeignScanState *, which remote filters go to */
} link_walk;

/* Whether ps is a custom scan of the kind methods executes. */
static bool is_custom(PlanState *ps, const CustomExecMethods *methods)
{
	return ps != NULL && IsA(ps, CustomScanState) &&
	       ((CustomScanState *)ps)->methods == methods;
}

/* Collects builders and probes, linking builders to their hash joins. */
static bool collect(PlanState *ps, void *arg)
{
	link_walk *walk = arg;

	if (ps == NULL)
		return false;
	if (IsA(ps, HashJoinState) && innerPlanState(ps) != NULL &&
	    is_custom(outerPlanState(innerPlanState(ps)), &amq_jf_build_exec_methods)) {
		amq_jf_build_state *b = (amq_jf_build_state *)outerPlanState(innerPlanState(ps));

		b->join = (HashJoinState *)ps;
	}
	if (is_custom(ps, &amq_jf_build_exec_methods))
		walk->builders = lappend(walk->builders, ps);
	if (is_custom(ps, &amq_jf_probe_exec_methods))
		walk->probes = lappend(walk->probes, ps);
	if (IsA(ps, ForeignScanState))
		walk->scans = lappend(walk->scans, ps);
	return planstate_tree_walker(ps, collect, arg);
}

/* The filter with this id among the builders found, or NULL. */
static amq_jf_filter *find_filter(List *builders, int id)
{
	ListCell *lc;

	foreach (lc, builders) {
		amq_jf_build_state *b = lfirst(lc);

		for (int i = 0; i < b->nfilters; i++)
			if (b->filters[i].id == id)
				return &b->filters[i];
	}
	return NULL;
}

/* Starts the executor as usual, then links the tree it built when it may
 * hold join filters (see amq_jf_planned_any). */
static void link_executor_start(QueryDesc *queryDesc, int eflags)
{
	link_walk walk = {NIL, NIL, NIL};
	ListCell *lc;

	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
	if (!amq_jf_planned_any && !IsParallelWorker())
		return;
	collect(queryDesc->planstate, &walk);
	foreach (lc, walk.probes) {
		amq_jf_probe_state *p = lfirst(lc);

		p->filter = find_filter(walk.builders, p->filter_id);
		if (p->filter != NULL)
			p->judge = &p->filter->judge;
	}
	foreach (lc, walk.builders)
		amq_jf_ship_link(lfirst(lc), walk.scans);
	list_free(walk.builders);
	list_free(walk.probes);
	list_free(walk.scans);
}

/* Chains our ExecutorStart hook in front of any set before (see header). */
void amq_jf_install_executor_hook(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = link_executor_start;
}
