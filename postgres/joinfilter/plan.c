/*
 * joinfilter/plan.c - the planner hook: after standard_planner it walks
 * the finished plan (main tree and every subplan) and gives each hash join
 * that may drop outer rows, and is expected to drop enough of them, a builder
 * under its Hash node and probes above the outer side's scans (one combined
 * filter, or one per hash clause, see add_join_filters()), or, where the
 * key reaches a postgres_fdw scan, a remote filter in that scan's Remote SQL
 * (ship_clause(), joinfilter/remote.c). Both nodes are
 * made directly in the form set_plan_refs leaves a plan in, since setrefs has
 * already run.
 *
 * Invariants this relies on (PostgreSQL 15's createplan.c and setrefs.c, the
 * same in 18's):
 *   - a HashJoin's hashkeys are its outer keys and its Hash child's hashkeys
 *     the inner ones, in the same order as hashoperators and hashcollations,
 *     each operator written as (outer = inner);
 *   - after setrefs a join's targetlist refers to its children's outputs as
 *     Var(OUTER_VAR / INNER_VAR, position in that child's targetlist), and an
 *     Append's is Var(OUTER_VAR, i) for its i-th column, which every child
 *     returns at position i (set_dummy_tlist_references).
 * Which rows may be dropped and where the probe may go is explained at
 * join_may_filter() and descend().
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"

#include "joinfilter/joinfilter.h"

static planner_hook_type prev_planner;

bool amq_jf_planned_any = false;

/* What one walk over a PlannedStmt hands out. */
typedef struct plan_walk {
	int next_filter_id;
	int next_plan_node_id;
	int parallel_workers; /* of the nearest Gather above; 0 outside one */
	PlannedStmt *stmt;
	Oid bloom_type;	     /* remote filters' parameter type; InvalidOid: none */
	Oid fuse_type;	     /* the same for fuse filters (amq_jf_ship_fuse) */
	char *amq_schema;    /* bloom_type's schema, quoted */
	bool bloom_type_set; /* bloom_type and fuse_type were looked up */
} plan_walk;

typedef void (*child_fn)(Plan **slot, void *arg);

/* Calls fn on the address of every child of plan, so that fn may replace it. */
static void for_each_child(Plan *plan, child_fn fn, void *arg)
{
	ListCell *lc;
	List *children = NIL;

	if (plan->lefttree != NULL)
		fn(&plan->lefttree, arg);
	if (plan->righttree != NULL)
		fn(&plan->righttree, arg);
	switch (nodeTag(plan)) {
	case T_Append:
		children = ((Append *)plan)->appendplans;
		break;
	case T_MergeAppend:
		children = ((MergeAppend *)plan)->mergeplans;
		break;
	case T_BitmapAnd:
		children = ((BitmapAnd *)plan)->bitmapplans;
		break;
	case T_BitmapOr:
		children = ((BitmapOr *)plan)->bitmapplans;
		break;
	case T_CustomScan:
		children = ((CustomScan *)plan)->custom_plans;
		break;
	case T_SubqueryScan:
		fn(&((SubqueryScan *)plan)->subplan, arg);
		break;
	default:
		break;
	}
	foreach (lc, children)
		fn((Plan **)&lfirst(lc), arg);
}

/* Raises *(int *)arg to the largest plan_node_id in the tree at *slot. */
static void max_node_id(Plan **slot, void *arg)
{
	int *max = arg;

	*max = Max(*max, (*slot)->plan_node_id);
	for_each_child(*slot, max_node_id, arg);
}

/*
 * Whether a filter built from the inner keys may drop outer rows: only when
 * an outer row without a match produces no output. PostgreSQL's JOIN_RIGHT
 * preserves the inner (hashed) side, so it qualifies, and so do the hash
 * joins that return inner rows by whether an outer row matched them:
 * JOIN_RIGHT_ANTI (16 and later) and JOIN_RIGHT_SEMI (18 and later), where
 * an outer row without a match marks nothing. LEFT and FULL preserve the
 * outer side and ANTI keeps exactly the rows without a match. A Parallel
 * Hash join qualifies too: its builder is parallel-aware and fills one shared
 * filter from every participant (joinfilter/build.c).
 */
static bool join_may_filter(HashJoin *hj)
{
	Plan *hash = innerPlan(hj);

	if (hash == NULL || !IsA(hash, Hash) || hj->hashkeys == NIL)
		return false;
	switch (hj->join.jointype) {
	case JOIN_INNER:
	case JOIN_SEMI:
	case JOIN_RIGHT:
		AMQ_CASE_JOIN_RIGHT_ANTI
		AMQ_CASE_JOIN_RIGHT_SEMI
		return true;
	default:
		return false;
	}
}

/* The share of outer rows the planner expects to find a match: join rows /
 * outer rows, an upper bound when inner keys repeat. */
static double expected_pass_rate(HashJoin *hj)
{
	Plan *outer = outerPlan(hj);

	if (outer->plan_rows <= 0)
		return 1.0;
	return Min(1.0, hj->join.plan.plan_rows / outer->plan_rows);
}

/* The rows the planner expects the hash table to hold: for a Parallel Hash
 * node, those of all participants (its input's estimate is one's share), as
 * ExecHashTableCreate reads them. */
static double inner_rows(Hash *hash)
{
	return hash->plan.parallel_aware ? hash->rows_total : outerPlan(hash)->plan_rows;
}

/*
 * Whether the planner expects a filter to pay: the expected pass rate is at
 * most amq.join_filter_max_pass_rate, or the join is expected to run in
 * batches (sized as ExecHashTableCreate sizes it: a Parallel Hash table may
 * use the memory of every participant) and some rows can be dropped before
 * they are written to batch files.
 */
static bool join_worth_filtering(HashJoin *hj, double pass, const plan_walk *walk)
{
	Hash *hash = (Hash *)innerPlan(hj);
	bool shared = hash->plan.parallel_aware;
	size_t space;
	int buckets, batches, skew;

	if (pass <= amq_jf_max_pass_rate)
		return true;
	ExecChooseHashTableSize(inner_rows(hash), outerPlan(hash)->plan_width, false, shared,
				shared ? walk->parallel_workers : 0, &space, &buckets, &batches,
				&skew);
	return batches > 1 && pass <= AMQ_JF_MAX_RUNTIME_PASS;
}

/* The memory hash's table may use, as ExecChooseHashTableSize allows it:
 * work_mem times hash_mem_multiplier, times the participants (workers and
 * leader) for a Parallel Hash table, which they build and share together. */
static double hash_memory(Hash *hash, const plan_walk *walk)
{
	double limit = (double)get_hash_memory_limit();

	return hash->plan.parallel_aware ? limit * (walk->parallel_workers + 1) : limit;
}

/* Keys a filter for hash's inner side is sized for, or 0 when even the
 * smallest sensible filter would exceed amq.join_filter_max_memory or the
 * memory the hash table may use: a filter never takes more than the hash
 * table it shadows may. */
static uint64 filter_capacity(Hash *hash, const plan_walk *walk)
{
	double inner = inner_rows(hash);
	double max_bytes = Min((double)amq_jf_max_kb * 1024.0, hash_memory(hash, walk));
	double want = Min(Max(2.0 * inner, 1024.0), (double)PG_INT32_MAX);

	for (int attempt = 0; attempt < 2; attempt++) {
		size_t bytes;
		amq_error err;

		if (amq_filter_bytes(AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, (uint64)want, AMQ_JF_FPR,
				     &bytes, &err) == AMQ_OK &&
		    (double)bytes <= max_bytes)
			return (uint64)want;
		want = Max(inner, 1024.0);
	}
	return 0;
}

/* e without binary-compatible relabelings, which leave a datum unchanged. */
static Expr *strip_relabel(Expr *e)
{
	while (e != NULL && IsA(e, RelabelType))
		e = ((RelabelType *)e)->arg;
	return e;
}

/* The expected pass rate a probe was planned with. */
static double probe_pass_rate(Plan *probe)
{
	amq_jf_probe_plan plan;

	amq_jf_probe_plan_read(((CustomScan *)probe)->custom_private, &plan);
	return plan.pass;
}

/* Where one key's probe goes: a plan's slot and the key's column there. */
typedef struct key_place {
	Plan **slot;
	AttrNumber attno;
} key_place;

/* The plain Var that column attno of plan's output is, looking through
 * binary-compatible relabelings; NULL when it is computed. */
static Var *column_var(Plan *plan, AttrNumber attno)
{
	TargetEntry *tle = list_nth_node(TargetEntry, plan->targetlist, attno - 1);
	Var *var = (Var *)strip_relabel(tle->expr);

	return var != NULL && IsA(var, Var) ? var : NULL;
}

/*
 * One step of descend() below plan, whose output column *attno is the key:
 * the slot of the input that column comes from unchanged, with *attno set to
 * its column there; NULL when the probe goes right above plan. A walk for
 * remote filters passes every probe.
 */
static Plan **step_down(Plan *plan, AttrNumber *attno, double pass, bool remote)
{
	Var *var;
	Plan **next = NULL;

	if (nodeTag(plan) == T_CustomScan && ((CustomScan *)plan)->methods == &amq_jf_probe_methods)
		/* a probe mirrors its input column for column */
		return !remote && probe_pass_rate(plan) <= pass ? NULL : &plan->lefttree;
	var = column_var(plan, *attno);
	if (var == NULL)
		return NULL;
	switch (nodeTag(plan)) {
	case T_HashJoin:
	case T_MergeJoin:
	case T_Result:
		if (var->varno == OUTER_VAR && plan->lefttree != NULL)
			next = &plan->lefttree;
		break;
	case T_NestLoop:
		if (var->varno == OUTER_VAR)
			next = &plan->lefttree;
		else if (var->varno == INNER_VAR)
			next = &plan->righttree;
		break;
	default:
		break;
	}
	if (next != NULL)
		*attno = var->varattno;
	return next;
}

/*
 * The children of an Append whose output column attno is the key, each of
 * which returns its rows in the Append's column order (the partitions of a
 * partitioned table, the branches of a UNION ALL); NIL for any other plan,
 * and, for local probes, when a child runs asynchronously (a probe above it
 * would make the Append run it synchronously; a remote filter changes only
 * the scan's Remote SQL).
 */
static List *append_children(Plan *plan, AttrNumber attno, bool remote)
{
	List *children;
	Var *var;
	ListCell *lc;

	if (!IsA(plan, Append))
		return NIL;
	children = ((Append *)plan)->appendplans;
	var = column_var(plan, attno);
	if (var == NULL || var->varno != OUTER_VAR || var->varattno != attno)
		return NIL;
	foreach (lc, children)
		if (((Plan *)lfirst(lc))->async_capable && !remote)
			return NIL;
	return children;
}

/*
 * Follows the outer key, column attno of the plan at *slot, down to where
 * its probes go, and appends each such place to *places: one, or one per
 * child of an Append on the way.
 * Probes stack in order of their expected pass rate, the most selective one
 * nearest the scan (it runs first), so a new probe stops above the first
 * probe that passes fewer rows than its own pass rate.
 * Rows dropped anywhere on the way would have been dropped by the join
 * anyway: they carry the key unchanged, or NULL in rows another join NULL-
 * extended, and the join's strict hash operator matches no NULL. The walk
 * passes only through nodes that re-read their input on every rescan, so no
 * node below the join keeps rows chosen by an older filter:
 *   - any join's outer side (an intermediate hash join keeps its inner side
 *     across rescans, so that side is never entered), a nested loop's inner
 *     side (rescanned for every outer row);
 *   - a Result over one input, probes placed earlier, and every child of an
 *     Append.
 * It stops at anything else (scans, Sort, Material, Memoize, Agg, Limit,
 * Gather, MergeAppend, SubqueryScan, CTE scans, ...) and at a column that is
 * not a plain Var of the input, and the probe goes right above that node. A
 * place where the key is no column (a child returning fewer columns) gets no
 * probe: filtering only some children of an Append is still correct.
 * With remote set, the walk looks for postgres_fdw scans that may take a
 * remote filter instead: it passes every probe and asynchronous Appends.
 */
static void descend(Plan **slot, AttrNumber attno, double pass, bool remote, List **places)
{
	key_place *place;

	for (;;) {
		Plan **next;
		List *children;
		ListCell *lc;

		if (attno < 1 || attno > list_length((*slot)->targetlist))
			return;
		children = append_children(*slot, attno, remote);
		if (children != NIL) {
			foreach (lc, children)
				descend((Plan **)&lfirst(lc), attno, pass, remote, places);
			return;
		}
		next = step_down(*slot, &attno, pass, remote);
		if (next == NULL)
			break;
		slot = next;
	}
	place = palloc(sizeof(key_place));
	place->slot = slot;
	place->attno = attno;
	*places = lappend(*places, place);
}

/*
 * A custom scan that returns its input's tuples as they are, built in
 * post-setrefs form: targetlist Var(INDEX_VAR, i) over custom_scan_tlist
 * Var(OUTER_VAR, i), so the executor needs no projection and EXPLAIN
 * resolves each column through the input. Costs and rows are the input's
 * plus one operator per row.
 */
static CustomScan *make_passthrough(Plan *input, const CustomScanMethods *methods, plan_walk *walk)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan *plan = &cscan->scan.plan;
	ListCell *lc;
	AttrNumber i = 1;

	foreach (lc, input->targetlist) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Oid type = exprType((Node *)tle->expr);
		int32 typmod = exprTypmod((Node *)tle->expr);
		Oid coll = exprCollation((Node *)tle->expr);

		plan->targetlist =
		    lappend(plan->targetlist,
			    makeTargetEntry((Expr *)makeVar(INDEX_VAR, i, type, typmod, coll, 0), i,
					    tle->resname, tle->resjunk));
		cscan->custom_scan_tlist =
		    lappend(cscan->custom_scan_tlist,
			    makeTargetEntry((Expr *)makeVar(OUTER_VAR, i, type, typmod, coll, 0), i,
					    tle->resname, tle->resjunk));
		i++;
	}
	plan->startup_cost = input->startup_cost;
	plan->total_cost = input->total_cost + cpu_operator_cost * input->plan_rows;
	plan->plan_rows = input->plan_rows;
	plan->plan_width = input->plan_width;
	plan->parallel_aware = false;
	plan->parallel_safe = input->parallel_safe;
	plan->async_capable = false;
	plan->plan_node_id = walk->next_plan_node_id++;
	plan->lefttree = input;
	plan->extParam = bms_copy(input->extParam);
	plan->allParam = bms_copy(input->allParam);
	cscan->scan.scanrelid = 0;
	cscan->methods = methods;
	return cscan;
}

/* One hash clause whose outer key reached places for probes. */
typedef struct clause_key {
	int clause;	/* position in the join's hash clauses */
	List *places;	/* key_place *: where its probes go */
	Oid left_proc;	/* outer type's extended hash */
	Oid right_proc; /* inner type's extended hash */
	Oid collation;
	Oid inner_type; /* the inner key's type */
	Oid join_op;	/* the hash clause's operator */
} clause_key;

/* The key's column at its place'th place. */
static AttrNumber place_attno(const clause_key *key, int place)
{
	return ((key_place *)list_nth(key->places, place))->attno;
}

/* Whether every level of partitioning above partition relid partitions by
 * one column, with an operator family that holds the join's operator op:
 * its constraint then gives equal values (by op) the same answer. */
static bool partitioned_by_join_op(Oid relid, Oid op)
{
	ListCell *lc;
	List *ancestors = get_partition_ancestors(relid);

	foreach (lc, ancestors) {
		Relation rel = relation_open(lfirst_oid(lc), NoLock);
		PartitionKey key = RelationGetPartitionKey(rel);
		bool ok = key != NULL && key->partnatts == 1 && key->partattrs[0] != 0 &&
			  op_in_opfamily(op, key->partopfamily[0]);

		relation_close(rel, NoLock);
		if (!ok)
			return false;
	}
	return ancestors != NIL;
}

/*
 * The partition constraint of the table scan reads, when it lets a probe of
 * one key skip the whole scan (joinfilter/probe.c): scan reads a partition
 * of a table (a plain scan node of one relation), its output column attno
 * is the key, the constraint (get_partition_qual_relid: its ancestors'
 * bounds too, Var varno 1) reads that column only, and a key of the build
 * side stands for the outer values it matches: the same type, compared
 * bytewise (no collation, or a deterministic one), and every level
 * partitions by an operator family of the join's operator, so an outer row
 * of the partition matches a key only if the key itself meets the
 * constraint. NULL otherwise.
 */
static Node *partition_qual(Plan *scan, AttrNumber attno, const clause_key *key,
			    const plan_walk *walk)
{
	Var *var;
	RangeTblEntry *rte;
	Node *qual;
	List *vars;
	ListCell *lc;

	switch (nodeTag(scan)) {
	case T_SeqScan:
	case T_SampleScan:
	case T_IndexScan:
	case T_IndexOnlyScan:
	case T_BitmapHeapScan:
	case T_TidScan:
	case T_ForeignScan:
		break;
	default:
		return NULL;
	}
	var = column_var(scan, attno);
	if (((Scan *)scan)->scanrelid == 0 || var == NULL ||
	    var->varno != (int)((Scan *)scan)->scanrelid || var->varattno < 1 ||
	    var->vartype != key->inner_type)
		return NULL;
	if (type_is_collatable(var->vartype) &&
	    (!OidIsValid(key->collation) || !get_collation_isdeterministic(key->collation)))
		return NULL;
	rte = rt_fetch(((Scan *)scan)->scanrelid, walk->stmt->rtable);
	if (rte->rtekind != RTE_RELATION || !get_rel_relispartition(rte->relid) ||
	    !partitioned_by_join_op(rte->relid, key->join_op))
		return NULL;
	qual = (Node *)get_partition_qual_relid(rte->relid);
	if (qual == NULL)
		return NULL;
	fix_opfuncids(qual); /* the executor compiles it (probe.c) */
	vars = pull_var_clause(qual, PVC_RECURSE_PLACEHOLDERS);
	if (vars == NIL)
		return NULL;
	foreach (lc, vars) {
		Var *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != 1 || v->varattno != var->varattno ||
		    v->varlevelsup != 0)
			return NULL;
	}
	return qual;
}

/* Inserts a probe of filter id on the nkeys keys at their place'th place
 * (the same slot for all of them). Returns whether it may skip a partition
 * (partition_qual), which needs the build's keys. */
static bool insert_probe(const clause_key *keys, int nkeys, int place, int id, double pass,
			 plan_walk *walk)
{
	Plan **slot = ((key_place *)list_nth(keys[0].places, place))->slot;
	CustomScan *probe = make_passthrough(*slot, &amq_jf_probe_methods, walk);
	amq_jf_probe_plan plan = {id, pass, nkeys, palloc(sizeof(amq_jf_key_plan) * nkeys), NULL};

	for (int k = 0; k < nkeys; k++) {
		AttrNumber attno = place_attno(&keys[k], place);
		TargetEntry *tle = list_nth_node(TargetEntry, probe->custom_scan_tlist, attno - 1);

		probe->custom_exprs = lappend(probe->custom_exprs, copyObject(tle->expr));
		plan.keys[k] = (amq_jf_key_plan){
		    attno, keys[k].left_proc,
		    amq_jf_key_form_of(keys[k].left_proc, keys[k].right_proc), keys[k].collation};
	}
	if (nkeys == 1)
		plan.partition_qual =
		    partition_qual(*slot, place_attno(&keys[0], place), &keys[0], walk);
	probe->custom_private = amq_jf_probe_plan_write(&plan);
	*slot = &probe->scan.plan;
	return plan.partition_qual != NULL;
}

/* Adds a filter over the nkeys keys to the builder's lists (its inner keys
 * to exprs, its amq_jf_filter_plan to filters), and its probes at every place
 * the keys reached. */
static void add_filter(HashJoin *hj, const clause_key *keys, int nkeys, uint64 capacity,
		       double pass, List **exprs, List **filters, plan_walk *walk)
{
	Hash *hash = (Hash *)innerPlan(hj);
	amq_jf_filter_plan *f = palloc(sizeof(*f));

	*f = (amq_jf_filter_plan){walk->next_filter_id++, capacity, nkeys,
				  palloc(sizeof(amq_jf_key_plan) * nkeys), false};
	for (int place = 0; place < list_length(keys[0].places); place++)
		f->collect_keys |= insert_probe(keys, nkeys, place, f->id, pass, walk);
	for (int k = 0; k < nkeys; k++) {
		*exprs = lappend(*exprs, copyObject(list_nth(hash->hashkeys, keys[k].clause)));
		f->keys[k] = (amq_jf_key_plan){
		    InvalidAttrNumber, keys[k].right_proc,
		    amq_jf_key_form_of(keys[k].right_proc, keys[k].left_proc), keys[k].collation};
	}
	*filters = lappend(*filters, f);
}

/* Whether two keys' probes go to the same places, in the same order. */
static bool same_places(const clause_key *a, const clause_key *b)
{
	if (list_length(a->places) != list_length(b->places))
		return false;
	for (int i = 0; i < list_length(a->places); i++) {
		key_place *pa = list_nth(a->places, i), *pb = list_nth(b->places, i);

		if (pa->slot != pb->slot)
			return false;
	}
	return true;
}

/* Whether hj's hash clauses may get remote filters: amq.join_filter_remote is
 * on, amq is created in this database, and the Hash is not a Parallel Hash
 * (whose outer side cannot hold a postgres_fdw scan). Whether the join is
 * selective enough is decided per scan (amq_jf_remote_target). */
static bool remote_wanted(HashJoin *hj, plan_walk *walk)
{
	if (!amq_jf_remote_enabled || innerPlan(hj)->parallel_aware)
		return false;
	if (!walk->bloom_type_set) {
		walk->bloom_type = amq_jf_filter_type("bloom", &walk->amq_schema);
		walk->fuse_type = amq_jf_filter_type("fuse", &walk->amq_schema);
		walk->bloom_type_set = true;
	}
	return OidIsValid(walk->bloom_type);
}

/*
 * Ships a remote filter of hj's hash clause to every postgres_fdw scan its
 * outer key reaches that can take one (amq_jf_remote_target), all with one
 * new executor parameter, and adds the filter to the builder's lists (its
 * inner key to exprs, its amq_jf_remote_plan to remote). Returns those scans
 * (ForeignScan *), NIL for none.
 */
static List *ship_clause(HashJoin *hj, int clause, double pass, List **exprs, List **remote,
			 plan_walk *walk)
{
	Hash *hash = (Hash *)innerPlan(hj);
	Var *outer_key = (Var *)strip_relabel(list_nth(hj->hashkeys, clause));
	Expr *inner_key = list_nth(hash->hashkeys, clause);
	Oid key_type = getBaseType(exprType((Node *)inner_key));
	int first = list_length(walk->stmt->paramExecTypes);
	/* Key values (a set, a range) only when the setting allows them now. */
	bool values = amq_jf_remote_max_set_keys > 0;
	bool ordered = values && amq_jf_remote_key_ordered(key_type);
	/* A fuse filter where the setting asks for one and the shards and this
	 * database's amq have it. */
	bool fuse = amq_jf_ship_fuse() && OidIsValid(walk->fuse_type);
	Oid filter_type = fuse ? walk->fuse_type : walk->bloom_type;
	amq_jf_remote_params params = {first,
				       values ? first + 1 : -1,
				       ordered ? first + 2 : -1,
				       ordered ? first + 3 : -1,
				       key_type,
				       fuse};
	/* The clause as partition_qual reads it. */
	clause_key key = {.clause = clause,
			  .collation = list_nth_oid(hj->hashcollations, clause),
			  .inner_type = exprType((Node *)inner_key),
			  .join_op = list_nth_oid(hj->hashoperators, clause)};
	List *places = NIL;
	List *shipped = NIL;
	List *scan_ids = NIL;
	List *labels = NIL;
	List *relids = NIL;
	List *columns = NIL;
	List *quals = NIL;
	amq_jf_remote_plan *rf;
	ListCell *lc;

	if (outer_key == NULL || !IsA(outer_key, Var) || outer_key->varno != OUTER_VAR ||
	    !amq_jf_remote_key_types(exprType((Node *)outer_key), exprType((Node *)inner_key),
				     list_nth_oid(hj->hashcollations, clause)))
		return NIL;
	descend(&hj->join.plan.lefttree, outer_key->varattno, pass, true, &places);
	foreach (lc, places) {
		key_place *place = lfirst(lc);
		amq_jf_remote_scan target;
		int n;

		if (!IsA(*place->slot, ForeignScan) ||
		    !amq_jf_remote_target(walk->stmt, (ForeignScan *)*place->slot, place->attno,
					  pass <= amq_jf_max_pass_rate, &target))
			continue;
		n = amq_jf_remote_attach(walk->stmt, &target, &params, filter_type,
					 walk->amq_schema);
		shipped = lappend(shipped, target.scan);
		scan_ids = lappend_int(scan_ids, target.scan->scan.plan.plan_node_id);
		labels = lappend(labels, psprintf("%s as $%d", target.label, n));
		relids = lappend_oid(relids, target.relid);
		columns = lappend_int(columns, target.column);
		/* A synchronous partition gets a local probe that may skip it
		 * (drop_shipped); an asynchronous one, which no probe may sit
		 * above, a skip parameter, when key values are sent. */
		quals = lappend(quals, values && target.scan->scan.plan.async_capable
					   ? partition_qual(*place->slot, place->attno, &key, walk)
					   : NULL);
	}
	if (shipped == NIL)
		return NIL;
	/* In the order of params: the filter, the set and the range. */
	walk->stmt->paramExecTypes = lappend_oid(walk->stmt->paramExecTypes, filter_type);
	if (values)
		walk->stmt->paramExecTypes =
		    lappend_oid(walk->stmt->paramExecTypes, get_array_type(key_type));
	if (ordered)
		walk->stmt->paramExecTypes =
		    list_concat(walk->stmt->paramExecTypes, list_make2_oid(key_type, key_type));
	rf = palloc(sizeof(*rf));
	*rf = (amq_jf_remote_plan){walk->next_filter_id++,
				   params,
				   list_length(shipped),
				   palloc(sizeof(int) * list_length(shipped)),
				   palloc(sizeof(char *) * list_length(shipped)),
				   palloc(sizeof(Oid) * list_length(shipped)),
				   palloc(sizeof(AttrNumber) * list_length(shipped)),
				   palloc(sizeof(int) * list_length(shipped)),
				   palloc(sizeof(Node *) * list_length(shipped))};
	for (int i = 0; i < rf->nscans; i++) {
		rf->scan_ids[i] = list_nth_int(scan_ids, i);
		rf->labels[i] = list_nth(labels, i);
		rf->relids[i] = list_nth_oid(relids, i);
		rf->columns[i] = (AttrNumber)list_nth_int(columns, i);
		rf->partition_quals[i] = list_nth(quals, i);
		rf->skip_params[i] = -1;
		if (rf->partition_quals[i] != NULL) {
			rf->skip_params[i] = list_length(walk->stmt->paramExecTypes);
			walk->stmt->paramExecTypes =
			    lappend_oid(walk->stmt->paramExecTypes, BOOLOID);
			amq_jf_remote_attach_skip(list_nth(shipped, i), rf->skip_params[i]);
		}
	}
	*remote = lappend(*remote, rf);
	*exprs = lappend(*exprs, copyObject(inner_key));
	return shipped;
}

/* key's places without the scans in shipped: a scan whose shard filters the
 * rows needs no probe above it, unless it scans a partition that the probe
 * may skip, so that its remote query never starts. */
static void drop_shipped(clause_key *key, List *shipped, const plan_walk *walk)
{
	List *kept = NIL;
	ListCell *lc;

	foreach (lc, key->places) {
		key_place *place = lfirst(lc);

		if (!list_member_ptr(shipped, *place->slot) ||
		    partition_qual(*place->slot, place->attno, key, walk) != NULL)
			kept = lappend(kept, place);
	}
	key->places = kept;
}

/*
 * Makes hj build its hash table before it reads its first outer row, so that
 * no remote query of its outer side starts before the remote filter is
 * complete. ExecHashJoin (HJ_BUILD_HASHTABLE, the same in 15 to 18) never
 * reads ahead when the join fills its inner side (right, right anti, full);
 * otherwise it reads the first outer row before the build when it fills its
 * outer side (left, anti: these never get a filter) or when the outer plan's
 * startup cost is below the Hash node's total cost. That cost test is the
 * executor's only read of a plan cost, so raising the outer child's startup
 * cost to the Hash's total turns the read-ahead off; all it gave was
 * skipping the build when the outer side is empty. A node
 * that reads the outer side only once it is pulled itself (every node
 * descend() passes) then starts no query either, an asynchronous Append's
 * included: it sends its queries at its first call.
 */
static void forbid_prefetch(HashJoin *hj)
{
	Plan *outer = outerPlan(hj);
	Plan *hash = innerPlan(hj);

	switch (hj->join.jointype) {
	case JOIN_RIGHT:
	case JOIN_FULL:
		AMQ_CASE_JOIN_RIGHT_ANTI
		return;
	default:
		break;
	}
	if (outer->startup_cost < hash->total_cost) {
		outer->startup_cost = hash->total_cost;
		outer->total_cost = Max(outer->total_cost, outer->startup_cost);
	}
}

/* Whether a filter of filters (amq_jf_filter_plan *) may skip partitions:
 * its build must be complete before the first outer row is read. */
static bool any_collects_keys(List *filters)
{
	ListCell *lc;

	foreach (lc, filters)
		if (((amq_jf_filter_plan *)lfirst(lc))->collect_keys)
			return true;
	return false;
}

/*
 * Gives hj its filters when it may and should have them. First the remote
 * filters, one per hash clause whose key reaches postgres_fdw scans that can
 * take one. Then the local ones, for the places left: one combined filter
 * when the outer keys of all its usable hash clauses reach the same places
 * (more selective than each column alone; a row must match every clause),
 * otherwise one per usable clause (each a necessary condition).
 */
static void add_join_filters(HashJoin *hj, plan_walk *walk)
{
	Hash *hash = (Hash *)innerPlan(hj);
	int nclauses = list_length(hj->hashkeys);
	clause_key *keys;
	List **shipped;
	int nkeys = 0;
	bool same_place = true;
	uint64 capacity = 0;
	double pass;
	List *exprs = NIL;
	List *remote_exprs = NIL;
	amq_jf_build_plan plan = {NIL, NIL};
	CustomScan *builder;

	if (!join_may_filter(hj) || nclauses > INDEX_MAX_KEYS)
		return;
	pass = expected_pass_rate(hj);
	shipped = palloc0(sizeof(List *) * nclauses);
	if (remote_wanted(hj, walk))
		for (int i = 0; i < nclauses; i++)
			shipped[i] = ship_clause(hj, i, pass, &remote_exprs, &plan.remote, walk);
	if (join_worth_filtering(hj, pass, walk))
		capacity = filter_capacity(hash, walk);
	keys = palloc(sizeof(clause_key) * nclauses);
	for (int i = 0; i < nclauses && capacity > 0; i++) {
		Var *outer_key = (Var *)strip_relabel(list_nth(hj->hashkeys, i));
		clause_key *key = &keys[nkeys];

		if (outer_key == NULL || !IsA(outer_key, Var) || outer_key->varno != OUTER_VAR ||
		    !amq_jf_hash_procs(list_nth_oid(hj->hashoperators, i), &key->left_proc,
				       &key->right_proc))
			continue;
		key->clause = i;
		key->collation = list_nth_oid(hj->hashcollations, i);
		key->inner_type = exprType((Node *)list_nth(hash->hashkeys, i));
		key->join_op = list_nth_oid(hj->hashoperators, i);
		key->places = NIL;
		descend(&hj->join.plan.lefttree, outer_key->varattno, pass, false, &key->places);
		drop_shipped(key, shipped[i], walk);
		if (key->places == NIL)
			continue;
		same_place = same_place && same_places(key, &keys[0]);
		nkeys++;
	}
	if (nkeys > 0 && same_place)
		add_filter(hj, keys, nkeys, capacity, pass, &exprs, &plan.filters, walk);
	else
		for (int k = 0; k < nkeys; k++)
			add_filter(hj, &keys[k], 1, capacity, pass, &exprs, &plan.filters, walk);
	if (plan.filters == NIL && plan.remote == NIL)
		return;
	builder = make_passthrough(outerPlan(hash), &amq_jf_build_methods, walk);
	/* Under a Parallel Hash node: gets the shared memory its filters live in. */
	builder->scan.plan.parallel_aware = hash->plan.parallel_aware;
	builder->custom_exprs = list_concat(exprs, remote_exprs);
	builder->custom_private = amq_jf_build_plan_write(&plan);
	outerPlan(hash) = &builder->scan.plan;
	if (plan.remote != NIL || any_collects_keys(plan.filters))
		forbid_prefetch(hj);
}

/* Post-order: the joins below are done before the one above descends. */
static void add_filters(Plan **slot, void *arg)
{
	plan_walk *walk = arg;
	int workers_above = walk->parallel_workers;

	if (IsA(*slot, Gather))
		walk->parallel_workers = ((Gather *)*slot)->num_workers;
	else if (IsA(*slot, GatherMerge))
		walk->parallel_workers = ((GatherMerge *)*slot)->num_workers;
	for_each_child(*slot, add_filters, arg);
	walk->parallel_workers = workers_above;
	if (IsA(*slot, HashJoin))
		add_join_filters((HashJoin *)*slot, walk);
}

/* The planner hook: plans as usual, then adds filters when amq.join_filter is
 * on and the session chose the join filter (joinfilter/load.c).
 * New plan nodes get plan_node_ids above every existing one (parallel query
 * and EXPLAIN find nodes by that id). */
static PlannedStmt *join_filter_planner(Query *parse, const char *query_string, int cursor_options,
					ParamListInfo bound_params AMQ_PLANNER_MORE_PARAMS)
{
	PlannedStmt *stmt;
	plan_walk walk = {.next_filter_id = 1, .bloom_type = InvalidOid};
	ListCell *lc;

	if (prev_planner)
		stmt = prev_planner(parse, query_string, cursor_options,
				    bound_params AMQ_PLANNER_MORE_ARGS);
	else
		stmt = standard_planner(parse, query_string, cursor_options,
					bound_params AMQ_PLANNER_MORE_ARGS);
	if (!amq_jf_enabled || !amq_jf_chosen)
		return stmt;
	max_node_id(&stmt->planTree, &walk.next_plan_node_id);
	foreach (lc, stmt->subplans)
		if (lfirst(lc) != NULL)
			max_node_id((Plan **)&lfirst(lc), &walk.next_plan_node_id);
	walk.next_plan_node_id++;
	walk.stmt = stmt;
	add_filters(&stmt->planTree, &walk);
	foreach (lc, stmt->subplans)
		if (lfirst(lc) != NULL)
			add_filters((Plan **)&lfirst(lc), &walk);
	if (walk.next_filter_id > 1)
		amq_jf_planned_any = true;
	return stmt;
}

/* Chains our planner hook in front of any set before (see header). */
void amq_jf_install_planner_hook(void)
{
	prev_planner = planner_hook;
	planner_hook = join_filter_planner;
}
