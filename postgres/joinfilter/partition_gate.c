/*
 * joinfilter/partition_gate.c - whether a partition can hold any key of a
 * finished build (joinfilter/nodes.h: amq_jf_partition_gate). The planner
 * gives the partition's constraint on the join key (plan.c's
 * partition_qual: its bounds and its ancestors', over the key's column), and
 * a key of the build stands for the outer values it matches. A build that
 * kept its distinct keys tests each against the compiled constraint; one
 * that kept only their range asks the planner's own prover
 * (predicate_refuted_by, as partition pruning by quals does) whether
 * "key >= lo AND key <= hi" refutes it. Two users: a probe above a local or
 * synchronous foreign partition, whose scan then never starts (probe.c), and
 * a filter shipped to an asynchronous foreign partition, whose remote query
 * then scans nothing (ship.c).
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "joinfilter/nodes.h"

/* The key's column in the constraint (it reads no other). */
static Var *key_var(Node *qual)
{
	return linitial(pull_var_clause(qual, PVC_RECURSE_PLACEHOLDERS));
}

/* See joinfilter/nodes.h. The slot is a virtual tuple as wide as the key's
 * column in the partition (the columns before it stand as NULL int4). */
void amq_jf_partition_gate_init(amq_jf_partition_gate *gate, Node *qual, EState *estate)
{
	Var *var = key_var(qual);
	TupleDesc desc = CreateTemplateTupleDesc(var->varattno);

	for (AttrNumber a = 1; a < var->varattno; a++)
		TupleDescInitEntry(desc, a, NULL, INT4OID, -1, 0);
	TupleDescInitEntry(desc, var->varattno, NULL, var->vartype, var->vartypmod, 0);
	TupleDescInitEntryCollation(desc, var->varattno, var->varcollid);
	gate->qual = qual;
	gate->key_slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	gate->check = ExecInitQual(make_ands_implicit((Expr *)qual), NULL);
	gate->econtext = CreateExprContext(estate);
}

/* Whether key meets the partition's constraint. */
static bool key_in_partition(amq_jf_partition_gate *gate, Datum key)
{
	TupleTableSlot *slot = gate->key_slot;
	AttrNumber attno = slot->tts_tupleDescriptor->natts;
	bool in;

	ExecClearTuple(slot);
	for (AttrNumber a = 1; a < attno; a++)
		slot->tts_isnull[a - 1] = true;
	slot->tts_values[attno - 1] = key;
	slot->tts_isnull[attno - 1] = false;
	ExecStoreVirtualTuple(slot);
	gate->econtext->ecxt_scantuple = slot;
	in = ExecQual(gate->check, gate->econtext);
	ResetExprContext(gate->econtext);
	return in;
}

/* Whether the range [lo, hi] of the build's keys refutes the partition's
 * constraint: the key's btree operators over constants of its type. */
static bool range_refutes(amq_jf_partition_gate *gate, const amq_jf_key_set *keys)
{
	Var *var = key_var(gate->qual);
	TypeCacheEntry *entry = lookup_type_cache(var->vartype, TYPECACHE_BTREE_OPFAMILY);
	Oid ge, le;
	List *range;

	if (!OidIsValid(entry->btree_opf))
		return false;
	ge = get_opfamily_member(entry->btree_opf, var->vartype, var->vartype,
				 BTGreaterEqualStrategyNumber);
	le = get_opfamily_member(entry->btree_opf, var->vartype, var->vartype,
				 BTLessEqualStrategyNumber);
	if (!OidIsValid(ge) || !OidIsValid(le))
		return false;
	range = list_make2(
	    make_opclause(ge, BOOLOID, false, (Expr *)copyObject(var),
			  (Expr *)makeConst(var->vartype, var->vartypmod, var->varcollid,
					    keys->typlen, keys->lo, false, keys->typbyval),
			  InvalidOid, var->varcollid),
	    make_opclause(le, BOOLOID, false, (Expr *)copyObject(var),
			  (Expr *)makeConst(var->vartype, var->vartypmod, var->varcollid,
					    keys->typlen, keys->hi, false, keys->typbyval),
			  InvalidOid, var->varcollid));
	set_opfuncid((OpExpr *)linitial(range));
	set_opfuncid((OpExpr *)lsecond(range));
	return predicate_refuted_by(make_ands_implicit((Expr *)gate->qual), range, false);
}

/* See joinfilter/nodes.h. */
bool amq_jf_partition_gate_refutes(amq_jf_partition_gate *gate, amq_jf_key_set *keys)
{
	if (amq_jf_key_set_seal(keys)) {
		for (int i = 0; i < keys->count; i++)
			if (key_in_partition(gate, keys->keys[i]))
				return false;
		return true;
	}
	return keys->ranged && range_refutes(gate, keys);
}
