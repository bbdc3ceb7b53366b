/*
 * joinfilter/hash.c - the hash a join filter stores for a row's keys: the join
 * operator's own 64-bit extended hash function, from the hash opfamily the
 * hash join uses, so that keys the operator calls equal (int4 = int8, numeric
 * scales, text under any collation) always hash alike. The filter never
 * leaves the query, so it needs no portable hash; for the same reason integer
 * keys may skip the hash function and be taken as they are. Also how EXPLAIN
 * names a filter's keys.
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "joinfilter/keys.h"

/* See joinfilter/keys.h. */
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

/* Whether proc is the extended hash of integer_ops (or of a type hashed as
 * one of its integers), and which width it reads. */
static amq_jf_key_form integer_form(Oid proc)
{
	switch (proc) {
	case F_HASHINT2EXTENDED:
		return AMQ_JF_KEY_INT2;
	case F_HASHINT4EXTENDED:
		return AMQ_JF_KEY_INT4;
	case F_HASHINT8EXTENDED:
		return AMQ_JF_KEY_INT8;
	default:
		return AMQ_JF_KEY_EXTENDED_HASH;
	}
}

/* See joinfilter/keys.h. */
amq_jf_key_form amq_jf_key_form_of(Oid proc, Oid other_proc)
{
	if (integer_form(other_proc) == AMQ_JF_KEY_EXTENDED_HASH)
		return AMQ_JF_KEY_EXTENDED_HASH;
	return integer_form(proc);
}

/* See joinfilter/keys.h. */
void amq_jf_key_init(amq_jf_key *key, amq_jf_key_form form, Oid proc, Oid collation)
{
	key->form = form;
	key->collation = collation;
	if (form == AMQ_JF_KEY_EXTENDED_HASH)
		fmgr_info(proc, &key->hash_fn);
}

/* See joinfilter/keys.h. */
bool amq_jf_keys_allocate(const amq_jf_key *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		if (keys[i].form == AMQ_JF_KEY_EXTENDED_HASH)
			return true;
	return false;
}

/* See joinfilter/keys.h. */
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
