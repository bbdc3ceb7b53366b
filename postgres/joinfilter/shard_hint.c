/*
 * joinfilter/shard_hint.c - what a query hears when a remote server's amq is
 * older than the probe shipped to it. A scan's Remote SQL may call
 * amq_join_filter_probe (remote.c), which shards have from amq 0.5.0 on; an
 * older shard fails the statement's parse with its own "function
 * S.amq_join_filter_probe(S.bloom, bigint) does not exist", which
 * postgres_fdw raises here with the shard's SQLSTATE (42883). While a
 * statement runs, an error context callback replaces that error's hint with
 * what to do: update amq on the shard, or tell the coordinator the shards'
 * version (amq.join_filter_remote_shard_version). A fuse filter
 * (amq.join_filter_remote_filter) needs the fuse type, from 0.6.0: an older
 * shard says "type S.fuse does not exist" (42704), and the hint says the
 * same. Only for those SQLSTATEs, and only when a foreign scan of the
 * statement ships the probe; the callback
 * runs on errors only and walks the executor tree then, so the hook costs
 * a query nothing else.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/nodeFuncs.h"

#include "joinfilter/joinfilter.h"

static ExecutorRun_hook_type prev_executor_run;

/* What the shipped probes of a statement need of the shards. */
typedef struct shipped {
	bool probe; /* a Remote SQL calls the probe */
	bool fuse;  /* ... of a binary fuse filter */
} shipped;

/* Notes in *arg (a shipped) what the foreign scans under ps ship: whether a
 * Remote SQL (postgres_fdw's first fdw_private item) calls the probe, and
 * of a fuse filter. */
static bool find_probes(PlanState *ps, void *arg)
{
	shipped *found = arg;

	if (ps == NULL)
		return false;
	if (IsA(ps, ForeignScanState)) {
		List *private = ((ForeignScan *)ps->plan)->fdw_private;
		const char *sql = private != NIL && IsA(linitial(private), String)
				      ? strVal(linitial(private))
				      : "";
		const char *call = strstr(sql, "." AMQ_JF_SHARD_PROBE "(");

		if (call != NULL) {
			found->probe = true;
			found->fuse |= strstr(call, "::pg_catalog.bytea::") != NULL &&
				       strstr(call, ".fuse, ") != NULL;
		}
	}
	return planstate_tree_walker(ps, find_probes, arg);
}

/* The error context callback: the hint of an undefined-function error in a
 * statement that ships the probe, and of an undefined-object error (the
 * fuse type) in one that ships a fuse filter. */
static void hint_behind_shard(void *arg)
{
	QueryDesc *queryDesc = arg;
	shipped found = {false, false};
	int code = geterrcode();

	if ((code != ERRCODE_UNDEFINED_FUNCTION && code != ERRCODE_UNDEFINED_OBJECT) ||
	    queryDesc->planstate == NULL)
		return;
	find_probes(queryDesc->planstate, &found);
	if (found.fuse)
		errhint("amq join filters ship binary fuse filters "
			"(amq.join_filter_remote_filter), which remote servers read from "
			"amq " AMQ_JF_FUSE_SINCE
			": run ALTER EXTENSION amq UPDATE on each remote server, or "
			"SET amq.join_filter_remote_filter = 'bloom'.");
	else if (found.probe && code == ERRCODE_UNDEFINED_FUNCTION)
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
