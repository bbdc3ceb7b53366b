/*
 * pg_join_filter_hash.c - the hash a join filter stores for a key: the join
 * operator's own 64-bit extended hash function, from the hash opfamily the
 * hash join uses, so that keys the operator calls equal (int4 = int8, numeric
 * scales, text under any collation) always hash alike. The filter never
 * leaves the query, so it needs no portable hash.
 */
#include "postgres.h"

#include "access/hash.h"
#include "catalog/pg_amop.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
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

/* See pg_join_filter.h. */
uint64 amq_jf_hash_key(FmgrInfo *fn, Oid collation, Datum value)
{
	uint64 h = DatumGetUInt64(FunctionCall2Coll(fn, collation, value, Int64GetDatum(0)));

	/* splitmix64's finalizer: some types' extended hashes are weak in places. */
	h ^= h >> 30;
	h *= UINT64CONST(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64CONST(0x94d049bb133111eb);
	h ^= h >> 31;
	return h;
}
