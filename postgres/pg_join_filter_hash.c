/*
 * pg_join_filter_hash.c - the hash a join filter stores for a row's keys: the join
 * operator's own 64-bit extended hash function, from the hash opfamily the
 * hash join uses, so that keys the operator calls equal (int4 = int8, numeric
 * scales, text under any collation) always hash alike. The filter never
 * leaves the query, so it needs no portable hash. Also how EXPLAIN names a
 * filter's keys.
 */
#include "postgres.h"

#include "access/hash.h"
#include "catalog/pg_amop.h"
#include "utils/catcache.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "pg_join_filter.h"

/* See pg_join_filter.h. */
bool amq_jf_hash_procs(Oid opno, Oid *left_proc, Oid *right_proc)
{
	CatCList *list = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(opno));
	bool found = false;

	/* The same search get_op_hash_functions() makes, for HASHEXTENDED_PROC. */
	for (int i = 0; i < list->n_members && !found; i++) {
		HeapTuple tuple = &list->members[i]->tuple;
		Form_pg_amop amop = (Form_pg_amop)GETSTRUCT(tuple);

		if (amop->amopmethod != HASH_AM_OID || amop->amopstrategy != HTEqualStrategyNumber)
			continue;
		*left_proc = get_opfamily_proc(amop->amopfamily, amop->amoplefttype,
					       amop->amoplefttype, HASHEXTENDED_PROC);
		*right_proc = get_opfamily_proc(amop->amopfamily, amop->amoprighttype,
						amop->amoprighttype, HASHEXTENDED_PROC);
		found = OidIsValid(*left_proc) && OidIsValid(*right_proc);
	}
	ReleaseSysCacheList(list);
	return found;
}

/* splitmix64's finalizer: some types' extended hashes are weak in places. */
static uint64 mix64(uint64 h)
{
	h ^= h >> 30;
	h *= UINT64CONST(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64CONST(0x94d049bb133111eb);
	h ^= h >> 31;
	return h;
}

/* See pg_join_filter.h. */
uint64 amq_jf_hash_keys(const amq_jf_key *keys, int nkeys, const Datum *values)
{
	uint64 h = 0;

	for (int i = 0; i < nkeys; i++) {
		FmgrInfo *fn = (FmgrInfo *)&keys[i].hash_fn;
		uint64 k = DatumGetUInt64(
		    FunctionCall2Coll(fn, keys[i].collation, values[i], Int64GetDatum(0)));

		h = mix64(h ^ k ^ (uint64)i);
	}
	return h;
}

/* See pg_join_filter.h. */
char *amq_jf_deparse_keys(List *keys, List *context)
{
	StringInfoData buf;
	ListCell *lc;

	initStringInfo(&buf);
	foreach (lc, keys) {
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, deparse_expression(lfirst(lc), context, true, false));
	}
	if (list_length(keys) == 1)
		return buf.data;
	return psprintf("(%s)", buf.data);
}
