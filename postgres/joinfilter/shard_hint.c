/*
 * joinfilter/shard_hint.c - what a query hears when a remote server's amq is
 * older than the probe shipped to it. A scan's Remote SQL may call
 * amq_join_filter_probe (remote.c), which shards have from amq 0.5.0 on; an
 * older shard fails the statement's parse with its own "function
 * S.amq_join_filter_probe(S.bloom, bigint) does not exist", which
 * postgres_fdw raises here with the shard's SQLSTATE (42883). While a
 * statement runs, an error context callback replaces that error's hint with
 * what to do: update amq on the shard, or tell the coordinator the shards'
 * version (amq.join_filter_remote_shard_version). Only for that SQLSTATE, and
 * only when a foreign scan of the statement ships the probe; the callback
 * runs on errors only and walks the executor tree then, so the hook costs
 * a query nothing else.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/nodeFuncs.h"

#include "joinfilter/joinfilter.h"

static ExecutorRun_hook_type prev_executor_run;

/* Whether the executor tree under ps has a foreign scan whose Remote SQL
 * (postgres_fdw's first fdw_private item) calls the probe. */
static bool ships_probe(PlanState *ps, void *arg)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, ForeignScanState)) {
		List *private = ((ForeignScan *)ps->plan)->fdw_private;

		if (private != NIL && IsA(linitial(private), String) &&
		    strstr(strVal(linitial(private)), "." AMQ_JF_SHARD_PROBE "(") != NULL)
			return true;
	}
	return planstate_tree_walker(ps, ships_probe, arg);
}

/* The error context callback: the hint of an undefined-function error in a
 * statement that ships the probe. */
static void hint_behind_shard(void *arg)
{
	QueryDesc *queryDesc = arg;

	if (geterrcode() != ERRCODE_UNDEFINED_FUNCTION || queryDesc->planstate == NULL ||
	    !ships_probe(queryDesc->planstate, NULL))
		return;
	errhint("amq join filters ship " AMQ_JF_SHARD_PROBE
		", which remote servers have from amq " AMQ_JF_SHARD_PROBE_SINCE
		": run ALTER EXTENSION amq UPDATE on each remote server, or "
		"SET amq.join_filter_remote_shard_version to their amq version.");
}

/* Runs the executor with the callback on the error context stack, in a
 * backend that has planned join filters (see amq_jf_planned_any). */
static void hint_executor_run(QueryDesc *queryDesc, ScanDirection direction,
			      uint64 count AMQ_EXECUTOR_RUN_MORE_PARAMS)
{
	ErrorContextCallback callback;
	bool hints = amq_jf_planned_any;

	if (hints) {
		callback.callback = hint_behind_shard;
		callback.arg = queryDesc;
		callback.previous = error_context_stack;
		error_context_stack = &callback;
	}
	if (prev_executor_run)
		prev_executor_run(queryDesc, direction, count AMQ_EXECUTOR_RUN_MORE_ARGS);
	else
		standard_ExecutorRun(queryDesc, direction, count AMQ_EXECUTOR_RUN_MORE_ARGS);
	if (hints)
		error_context_stack = callback.previous;
}

/* Chains our ExecutorRun hook in front of any set before (see header). */
void amq_jf_install_run_hook(void)
{
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = hint_executor_run;
}
