/*
 * joinfilter/ship.c - the builder's remote filters: the Bloom filters (or,
 * planned so, binary fuse filters) it ships, as an executor parameter, to
 * the postgres_fdw scans of the hash join's outer side (joinfilter/remote.c
 * put the parameter in their Remote SQL). Each is built from the same inner
 * rows as the local filters, with amq's portable hashing so that the
 * shard's probe agrees: the builder collects the hashes and sizes the filter
 * for the distinct ones, as bloom_agg(key, fpr) (fuse_agg(key, fpr)) does,
 * which makes it the filter that aggregate would build, fpr the lowest of
 * ship_fprs whose filter of the build's rows fits
 * amq.join_filter_remote_max_memory.
 *
 * The parameter is NULL until a build completes, and NULL again from a
 * rebuild's start; a filter larger than amq.join_filter_remote_max_memory,
 * or whose keys do not fit in work_mem times hash_mem_multiplier while they
 * are collected, is sent as NULL (the shard then filters nothing).
 * Publishing marks the parameter changed on every linked scan, so that its
 * next row starts with ExecReScan and postgres_fdw closes any cursor it kept
 * (one opened with the last build's filter) and opens a new one with this
 * value. The scans are
 * never mid-way then: the join builds before it reads any outer row
 * (joinfilter/plan.c turns its prefetch off), and a rebuild comes after
 * ExecReScanHashJoin has rescanned the outer side. A join that keeps its
 * table does not rescan the builder, publishes nothing, and its scans keep
 * filtering with the filter that is still current.
 *
 * Plan form: the builder's amq_jf_remote_plans (joinfilter/plan_data.c);
 * each one's inner key follows the local filters' keys in custom_exprs.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "joinfilter/remote.h"

/* See joinfilter/remote.h. */
void amq_jf_ship_create(amq_jf_build_state *state, List *remote)
{
	ListCell *lc;

	state->remote = palloc0(sizeof(amq_jf_remote) * (list_length(remote) + 1));
	foreach (lc, remote) {
		const amq_jf_remote_plan *plan = lfirst(lc);
		amq_jf_remote *r = &state->remote[state->nremote++];

		r->id = plan->id;
		r->params = plan->params;
		r->nscans = plan->nscans;
		r->scan_ids = plan->scan_ids;
		r->relids = plan->relids;
		r->columns = plan->columns;
		r->scans = palloc0(sizeof(PlanState *) * r->nscans);
		r->skip_params = plan->skip_params;
		r->gates = palloc0(sizeof(amq_jf_partition_gate *) * r->nscans);
		for (int i = 0; i < r->nscans; i++) {
			r->labels = lappend(r->labels, makeString(plan->labels[i]));
			if (plan->partition_quals[i] != NULL) {
				r->gates[i] = palloc0(sizeof(amq_jf_partition_gate));
				r->gates[i]->qual = plan->partition_quals[i];
			}
		}
	}
}

/* Executor parameter paramid. */
static ParamExecData *ship_param(amq_jf_build_state *state, int paramid)
{
	return &state->css.ss.ps.state->es_param_exec_vals[paramid];
}

/* Sets r's parameter paramid to value (NULL when isnull). */
static void set_param(amq_jf_build_state *state, int paramid, Datum value, bool isnull)
{
	ship_param(state, paramid)->value = isnull ? (Datum)0 : value;
	ship_param(state, paramid)->isnull = isnull;
}

/* Sets r's parameters (those it has, its scans' skip parameters too) to
 * NULL. */
static void clear_params(amq_jf_build_state *state, amq_jf_remote *r)
{
	int ids[] = {r->params.bloom, r->params.set, r->params.lo, r->params.hi};

	for (size_t i = 0; i < lengthof(ids); i++)
		if (ids[i] >= 0)
			set_param(state, ids[i], (Datum)0, true);
	for (int s = 0; s < r->nscans; s++)
		if (r->skip_params[s] >= 0)
			set_param(state, r->skip_params[s], (Datum)0, true);
}

/* See joinfilter/remote.h. exprs: the first remote key in custom_exprs. */
void amq_jf_ship_begin(amq_jf_build_state *state, ListCell *exprs, List *list)
{
	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];
		Expr *key = lfirst(exprs);

		r->key_expr = ExecInitExpr(key, &state->css.ss.ps);
		/* NULL until a build completes, even in a tree the ExecutorStart
		 * hook never links (a zeroed parameter would read as a value). */
		clear_params(state, r);
		if (!amq_pg_hasher_for_type(&r->hasher, exprType((Node *)key)))
			elog(ERROR, "remote join filter on a key of type %s",
			     format_type_be(exprType((Node *)key)));
		amq_jf_key_set_init(&r->set, r->params.key_type, r->params.lo >= 0, false,
				    state->css.ss.ps.state->es_query_cxt);
		for (int s = 0; s < r->nscans; s++)
			if (r->gates[s] != NULL)
				amq_jf_partition_gate_init(r->gates[s], r->gates[s]->qual,
							   state->css.ss.ps.state);
		exprs = lnext(list, exprs);
	}
}

/* See joinfilter/remote.h. */
void amq_jf_ship_link(amq_jf_build_state *state, List *scans)
{
	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];
		ListCell *lc;

		for (int s = 0; s < r->nscans; s++)
			foreach (lc, scans)
				if (((PlanState *)lfirst(lc))->plan->plan_node_id == r->scan_ids[s])
					r->scans[s] = lfirst(lc);
	}
}

/*
 * The rates a remote filter may have, lowest first. Every false positive
 * costs a shard row sent, converted and probed again here: a microsecond or
 * more, where the filter's bytes cost nanoseconds each, once per scan. So a
 * build takes the lowest rate whose filter of its rows fits
 * amq.join_filter_remote_max_memory (10,000 keys: 12 KB at 1%, 29 KB at
 * 0.01%; a fuse filter has 16-bit fingerprints at the first two, 0.0015%,
 * and 8-bit at the last, 0.39%); the last, the aggregates' default, bounds
 * how many keys a build collects.
 */
static const double ship_fprs[] = {0.0001, 0.001, AMQ_SQL_DEFAULT_FPR};

/* The kind of r's filter, as planned. */
static amq_kind ship_kind(const amq_jf_remote *r)
{
	return r->params.fuse ? amq_kind_named("fuse") : AMQ_KIND_BLOOM;
}

/* How a remote filter of kind is sized while it collects: as bloom_agg(key)
 * (fuse_agg(key)) sizes its filter; ship_finish may lower the rate. */
static amq_sql_sizing ship_sizing(amq_kind kind)
{
	amq_sql_sizing sizing;

	amq_sql_sizing_init(&sizing, kind);
	return sizing;
}

/* Lowers the rate of r's finished build to the lowest of ship_fprs whose
 * filter of every row the build added (an upper bound of its distinct keys)
 * fits amq.join_filter_remote_max_memory. */
static void lower_rate(amq_jf_remote *r)
{
	amq_sql_sizing sizing = ship_sizing(ship_kind(r));
	uint64 rows = Max(r->builder.rows, 1);
	amq_error err;

	for (size_t i = 0; i + 1 < lengthof(ship_fprs); i++) {
		size_t bytes;

		if (amq_filter_bytes(sizing.kind, amq_sql_layout(&sizing), rows, ship_fprs[i],
				     &bytes, &err) == AMQ_OK &&
		    bytes <= (size_t)amq_jf_remote_max_kb * 1024) {
			amq_pg_check(amq_builder_set_fpr(&r->builder, ship_fprs[i], &err), &err);
			return;
		}
	}
}

/* The bytes a key takes in a filter of r's kind sized as ship_sizing sizes
 * it, from a filter of a million keys; 0 if it cannot be sized. The sizing
 * never changes, and it searches the blocked layout's block counts (tens of
 * microseconds, more than a small build takes), so a backend computes it
 * once per kind. */
static double bytes_per_key(const amq_jf_remote *r)
{
	static double per_key[2] = {-1, -1};
	int k = r->params.fuse ? 1 : 0;

	if (per_key[k] < 0) {
		const uint64 probe = 1000000;
		amq_sql_sizing sizing = ship_sizing(ship_kind(r));
		size_t bytes;
		amq_error err;

		per_key[k] = amq_filter_bytes(sizing.kind, amq_sql_layout(&sizing), probe,
					      sizing.fpr, &bytes, &err) == AMQ_OK
				 ? (double)bytes / (double)probe
				 : 0;
	}
	return per_key[k];
}

/* Sets the most distinct keys r's build collects, and the setting that
 * limits it: those a filter within amq.join_filter_remote_max_memory holds,
 * and no more than fit in the memory the join's own hash table may use
 * (work_mem times hash_mem_multiplier), at the collection's peak of
 * AMQ_HASHSET_PEAK_BYTES per hash and with twice the limit the builder
 * holds before it counts them exactly (amq_builder_exceeds): no setting lets
 * the build hold more than PostgreSQL lets the join. A build past it gives
 * up, and the scans get every row. */
static void set_max_keys(amq_jf_remote *r)
{
	uint64 by_memory = (uint64)get_hash_memory_limit() / (2 * AMQ_HASHSET_PEAK_BYTES);
	double per_key = bytes_per_key(r);

	r->max_keys = 0;
	r->limit = "amq.join_filter_remote_max_memory";
	if (per_key <= 0)
		return;
	r->max_keys = (uint64)((double)amq_jf_remote_max_kb * 1024.0 / per_key);
	if (by_memory < r->max_keys) {
		r->max_keys = by_memory;
		r->limit = "work_mem";
	}
}

/* Starts a build's collection of hashes in r: the builder bloom_agg(key)
 * (fuse_agg(key)) uses, which sizes the filter for the distinct keys at the
 * end. */
static void ship_start(amq_jf_build_state *state, amq_jf_remote *r)
{
	amq_allocator alloc = amq_pg_allocator(state->css.ss.ps.state->es_query_cxt);
	amq_sql_sizing sizing = ship_sizing(ship_kind(r));
	amq_error err;

	amq_pg_check(amq_sql_builder_init(&r->builder, &sizing, &alloc, &err), &err);
	set_max_keys(r);
	r->building = true;
	r->too_large = false;
}

/* Gives up a build whose distinct keys already exceed the cap: its filter
 * would not be sent, so its hashes need no memory. */
static void ship_check_size(amq_jf_remote *r)
{
	bool exceeds;
	amq_error err;

	amq_pg_check(amq_builder_exceeds(&r->builder, r->max_keys, &exceeds, &err), &err);
	if (exceeds) {
		amq_builder_free(&r->builder);
		r->building = false;
		r->too_large = true;
	}
}

/* See joinfilter/remote.h. The econtext's outer tuple is the row. */
void amq_jf_ship_add(amq_jf_build_state *state, ExprContext *econtext)
{
	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];
		bool isnull;
		Datum value;
		uint64 hash;
		amq_error err;

		value = ExecEvalExpr(r->key_expr, econtext, &isnull);
		/* The join's operator is strict: a NULL key matches nothing. */
		if (isnull)
			continue;
		r->keys_added++;
		hash = amq_pg_hash_value(&r->hasher, value, AMQ_DEFAULT_SEED);
		/* The set and range (when planned) go on past the filter's cap. */
		if (r->params.set >= 0)
			amq_jf_key_set_add(&r->set, value, hash);
		if (r->too_large)
			continue;
		if (!r->building)
			ship_start(state, r);
		amq_pg_check(amq_builder_add(&r->builder, hash, &err), &err);
		ship_check_size(r);
	}
}

/* See joinfilter/remote.h. */
void amq_jf_ship_reset(amq_jf_build_state *state)
{
	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];

		if (r->building)
			amq_builder_free(&r->builder);
		r->building = false;
		r->too_large = false;
		if (r->value != NULL)
			pfree(r->value);
		r->value = NULL;
		amq_jf_key_set_clear(&r->set);
		clear_params(state, r);
	}
}

/* The filter of r's finished build as a bloom (fuse) datum in the query's memory,
 * or NULL when it exceeds the cap. */
static struct varlena *ship_finish(amq_jf_build_state *state, amq_jf_remote *r)
{
	MemoryContext cxt = state->css.ss.ps.state->es_query_cxt;
	amq_allocator alloc = amq_pg_allocator(cxt);
	struct varlena *value = NULL;
	amq_filter f;
	amq_error err;

	if (r->too_large)
		return NULL;
	if (!r->building)
		ship_start(state, r); /* an empty input */
	lower_rate(r);
	amq_pg_check(amq_builder_finish(&r->builder, &f, &err), &err);
	amq_builder_free(&r->builder);
	r->building = false;
	/* Shards may run any amq release: a Bloom filter goes in format
	 * version 1, which every release reads (a fuse filter in its version 5,
	 * planned only for shards that read it), with no families (the shard's
	 * probe is no user's call and must never raise the family check). */
	f.families = AMQ_FAMILIES_UNKNOWN;
	amq_filter_seal(&f);
	if (f.size <= (size_t)amq_jf_remote_max_kb * 1024) {
		MemoryContext old = MemoryContextSwitchTo(cxt);

		value = amq_pg_filter_to_varlena(&f);
		MemoryContextSwitchTo(old);
		r->size = f.size;
	} else {
		r->too_large = true;
		r->limit = "amq.join_filter_remote_max_memory";
	}
	amq_filter_free(&f, &alloc);
	return value;
}

/*
 * Whether r's range is worth sending: a range the coordinator's statistics
 * expect to hold more than AMQ_JF_MAX_RUNTIME_PASS of the rows of every one
 * of r's tables lets no shard skip much, and would cost each shard two
 * comparisons a row on a sequential scan. Without statistics of one of them,
 * it is sent: where it is narrow, an index or the partitions there can
 * serve it.
 */
static bool range_worth_sending(const amq_jf_remote *r)
{
	for (int s = 0; s < r->nscans; s++) {
		double share = amq_jf_key_set_range_share(&r->set, r->relids[s], r->columns[s]);

		if (share < 0.0 || share <= AMQ_JF_MAX_RUNTIME_PASS)
			return true;
	}
	return false;
}

/*
 * Sets r's parameters for its finished build: the exact set of its keys when
 * it has at most amq.join_filter_remote_max_set_keys of them (an empty one
 * for an empty inner side: the scans fetch nothing), which needs no Bloom
 * filter on top; otherwise the range of its keys (an ordered type, where it
 * is worth sending) and the Bloom filter, each when it has one.
 */
static void publish_one(amq_jf_build_state *state, amq_jf_remote *r)
{
	MemoryContext cxt = state->css.ss.ps.state->es_query_cxt;
	ArrayType *set = r->params.set >= 0 ? amq_jf_key_set_array(&r->set) : NULL;
	bool ranged;

	clear_params(state, r);
	if (set != NULL) {
		if (r->building)
			amq_builder_free(&r->builder);
		r->building = false;
		r->value = NULL;
		r->size = 0;
		set_param(state, r->params.set, PointerGetDatum(set), false);
		r->sent = MemoryContextStrdup(
		    cxt,
		    psprintf("exact set of %d keys", ArrayGetNItems(ARR_NDIM(set), ARR_DIMS(set))));
		return;
	}
	r->value = ship_finish(state, r);
	if (r->too_large)
		r->size = 0;
	set_param(state, r->params.bloom, PointerGetDatum(r->value), r->value == NULL);
	ranged = r->params.lo >= 0 && r->set.ranged && range_worth_sending(r);
	if (ranged) {
		set_param(state, r->params.lo, r->set.lo, false);
		set_param(state, r->params.hi, r->set.hi, false);
	}
	r->sent = ranged ? (r->value == NULL ? "range"
			    : r->params.fuse ? "range, binary fuse filter"
					     : "range, Bloom filter")
			 : (r->value == NULL ? "nothing"
			    : r->params.fuse ? "binary fuse filter"
					     : "Bloom filter");
}

/* Sets the skip parameter of each of r's asynchronous partitions: true
 * where no key of the finished build can lie in the partition (its remote
 * query then scans nothing), false elsewhere and where the build kept
 * neither its keys nor their range. */
static void publish_skips(amq_jf_build_state *state, amq_jf_remote *r)
{
	for (int s = 0; s < r->nscans; s++) {
		bool skip;

		if (r->gates[s] == NULL)
			continue;
		skip = amq_jf_partition_gate_refutes(r->gates[s], &r->set);
		set_param(state, r->skip_params[s], BoolGetDatum(skip), false);
		if (skip)
			r->partitions_skipped++;
	}
}

/* See joinfilter/remote.h. */
void amq_jf_ship_publish(amq_jf_build_state *state)
{
	MemoryContext cxt = state->css.ss.ps.state->es_query_cxt;

	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];
		int ids[] = {r->params.bloom, r->params.set, r->params.lo, r->params.hi};

		publish_one(state, r);
		publish_skips(state, r);
		for (int s = 0; s < r->nscans; s++) {
			PlanState *scan = r->scans[s];
			MemoryContext old;

			if (scan == NULL)
				continue;
			old = MemoryContextSwitchTo(cxt);
			for (size_t p = 0; p < lengthof(ids); p++)
				if (ids[p] >= 0)
					scan->chgParam = bms_add_member(scan->chgParam, ids[p]);
			if (r->skip_params[s] >= 0)
				scan->chgParam = bms_add_member(scan->chgParam, r->skip_params[s]);
			MemoryContextSwitchTo(old);
		}
	}
}

/* See joinfilter/remote.h. */
void amq_jf_ship_explain(amq_jf_build_state *state, ListCell *exprs, List *list, List *context,
			 ExplainState *es)
{
	for (int i = 0; i < state->nremote; i++) {
		amq_jf_remote *r = &state->remote[i];
		StringInfoData scans;
		ListCell *lc;
		char *prefix = psprintf("Filter %d ", r->id);

		ExplainPropertyText(psprintf(r->params.fuse ? "Ships Binary Fuse Filter %d"
							    : "Ships Bloom Filter %d",
					     r->id),
				    amq_jf_deparse_keys(list_make1(lfirst(exprs)), context), es);
		exprs = lnext(list, exprs);
		initStringInfo(&scans);
		foreach (lc, r->labels) {
			if (foreach_current_index(lc) > 0)
				appendStringInfoString(&scans, ", ");
			appendStringInfoString(&scans, strVal(lfirst(lc)));
		}
		ExplainPropertyText(psprintf("%sSent To", prefix), scans.data, es);
		if (!es->analyze)
			continue;
		ExplainPropertyInteger(psprintf("%sKeys Added", prefix), NULL, (int64)r->keys_added,
				       es);
		if (r->sent != NULL)
			ExplainPropertyText(psprintf("%sSent", prefix), r->sent, es);
		if (r->size > 0)
			ExplainPropertyInteger(psprintf("%sSize", prefix), "bytes", (int64)r->size,
					       es);
		if (r->too_large)
			ExplainPropertyText(psprintf("%sState", prefix),
					    psprintf("not sent: larger than %s allows", r->limit),
					    es);
		for (int s = 0; s < r->nscans; s++)
			if (r->gates[s] != NULL) {
				ExplainPropertyInteger(
				    psprintf("%sPartitions Skipped by Join Filter", prefix), NULL,
				    (int64)r->partitions_skipped, es);
				break;
			}
	}
}
