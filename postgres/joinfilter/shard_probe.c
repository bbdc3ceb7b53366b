/*
 * joinfilter/shard_probe.c - amq_join_filter_probe(filter, value), the probe
 * a hash join ships into a postgres_fdw scan's Remote SQL (remote.c), run on
 * the remote server: bloom_contains (fuse_contains), judged. A filter that passes nearly
 * every row (every row has a match, which the coordinator cannot foresee
 * without statistics on the foreign table) costs the shard a probe per row
 * and saves nothing, so the call site counts its passes over windows and
 * switches itself off as a local probe does (judge.h): switched off, it
 * answers true unprobed. It never answers false for a value the filter
 * holds, so the join's answer is the same either way.
 *
 * The judge lives beside the call site's cached filter (fn_extra), so each
 * scan's condition judges its own rows. Its answers depend on the rows
 * before: the function is VOLATILE, and bloom_contains, which is
 * IMMUTABLE, stays what indexes and constraints use.
 */
#include "postgres.h"

#include "filter/filter.h"
#include "joinfilter/judge.h"
#include "joinfilter/settings.h"

/* amq_join_filter_probe(filter, value) of call's kind: true unprobed while
 * this call site's judge is off, else the filter's answer, counted in the
 * judge's window. */
static Datum judged_probe(FunctionCallInfo fcinfo, amq_pg_call *call)
{
	typedef struct judged {
		bool ready;
		amq_jf_judge judge;
	} judged;
	judged *state = amq_pg_probe_caller_state(fcinfo, sizeof(judged));
	const amq_filter *f;
	amq_probe probe;
	uint64 hash;
	bool passed;

	if (!state->ready) {
		call->kind = amq_kind_named(call->kind_name);
		amq_jf_judge_init(&state->judge);
		state->ready = true;
	}
	if (!amq_jf_judge_on(&state->judge)) {
		amq_jf_judge_pass_unprobed(&state->judge);
		PG_RETURN_BOOL(true);
	}
	f = amq_pg_probe(fcinfo, 0, 1, call, &probe, &hash);
	passed = probe(f, hash);
	amq_jf_judge_count(&state->judge, 1, passed);
	PG_RETURN_BOOL(passed);
}

/* amq_join_filter_probe(bloom, value), amq 0.5.0's. */
AMQ_PG_FUNCTION(amq_pg_join_filter_probe);
Datum amq_pg_join_filter_probe(PG_FUNCTION_ARGS)
{
	static amq_pg_call call = {0, AMQ_JF_SHARD_PROBE, AMQ_SQL_CONTAINS, "bloom"};

	return judged_probe(fcinfo, &call);
}

/* amq_join_filter_probe(fuse, value), from amq 0.6.0: the probe of a binary
 * fuse filter (amq.join_filter_remote_filter). */
AMQ_PG_FUNCTION(amq_pg_join_filter_probe_fuse);
Datum amq_pg_join_filter_probe_fuse(PG_FUNCTION_ARGS)
{
	static amq_pg_call call = {0, AMQ_JF_SHARD_PROBE, AMQ_SQL_CONTAINS, "fuse"};

	return judged_probe(fcinfo, &call);
}
