/*
 * joinfilter/key_set.c - the exact set and the range of a build's keys,
 * while they are few (joinfilter/nodes.h: amq_jf_key_set): what a remote filter
 * sends beside its Bloom filter, so that a shard's planner can use an index
 * (col = ANY($set), col >= $lo AND col <= $hi) and an empty inner side
 * fetches nothing; and what a probe above a partition's scan tests the
 * partition's constraint on, to skip the scan (joinfilter/probe.c).
 *
 * Keys are copied as they come, up to twice the set's limit; then they are
 * sorted by hash and deduplicated (equal hash and equal bytes), and a set
 * still past its limit, or past its bytes, is given up for this build. The
 * range goes on whatever the set does; the coordinator's statistics of a
 * table's key column tell what share of its rows the range holds.
 */
#include "postgres.h"

#include "catalog/pg_statistic.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "joinfilter/nodes.h"

void amq_jf_key_set_init(amq_jf_key_set *set, Oid type, bool ordered, bool local,
			 MemoryContext parent)
{
	memset(set, 0, sizeof(*set));
	set->type = type;
	set->local = local;
	get_typlenbyvalalign(type, &set->typlen, &set->typbyval, &set->typalign);
	if (ordered) {
		TypeCacheEntry *entry = lookup_type_cache(type, TYPECACHE_CMP_PROC_FINFO);

		if (OidIsValid(entry->cmp_proc_finfo.fn_oid))
			set->cmp = &entry->cmp_proc_finfo;
	}
	set->values =
	    AllocSetContextCreate(parent, "amq join filter key set", ALLOCSET_DEFAULT_SIZES);
	amq_jf_key_set_clear(set);
}

void amq_jf_key_set_clear(amq_jf_key_set *set)
{
	MemoryContextReset(set->values);
	set->keys = NULL;
	set->hashes = NULL;
	set->count = set->capacity = 0;
	set->bytes = 0;
	set->max_keys = set->local ? AMQ_JF_LOCAL_SET_KEYS : amq_jf_remote_max_set_keys;
	set->sealed = false;
	/* Values the join's own hash table holds too: within its memory. */
	set->max_bytes =
	    Min((uint64)amq_jf_remote_max_kb * 1024, (uint64)get_hash_memory_limit() / 2);
	set->gave_up = set->max_keys == 0;
	if (set->ranged && !set->typbyval) {
		pfree(DatumGetPointer(set->lo));
		pfree(DatumGetPointer(set->hi));
	}
	set->ranged = false;
}

/* Gives the set up for this build: its keys and their memory go. */
static void give_up(amq_jf_key_set *set)
{
	MemoryContextReset(set->values);
	set->keys = NULL;
	set->hashes = NULL;
	set->count = set->capacity = 0;
	set->gave_up = true;
}

/* The order of two keys by hash, for deduplication. */
static int by_hash(const void *a, const void *b, void *arg)
{
	const amq_jf_key_set *set = arg;
	uint64 ha = set->hashes[*(const int *)a], hb = set->hashes[*(const int *)b];

	return ha < hb ? -1 : ha > hb;
}

/* Sorts the keys by hash and keeps one of each run of equal hash and bytes;
 * gives the set up when it still passes its limit. */
static void compact(amq_jf_key_set *set)
{
	MemoryContext old = MemoryContextSwitchTo(set->values);
	int *order = palloc(sizeof(int) * set->count);
	Datum *keys = palloc(sizeof(Datum) * set->capacity);
	uint64 *hashes = palloc(sizeof(uint64) * set->capacity);
	int kept = 0;

	for (int i = 0; i < set->count; i++)
		order[i] = i;
	qsort_arg(order, set->count, sizeof(int), by_hash, set);
	for (int i = 0; i < set->count; i++) {
		int at = order[i];
		bool seen = false;

		/* Any key of the same hash kept so far (a run, almost always 1). */
		for (int j = kept - 1; j >= 0 && hashes[j] == set->hashes[at] && !seen; j--)
			seen = datumIsEqual(keys[j], set->keys[at], set->typbyval, set->typlen);
		if (seen)
			continue;
		keys[kept] = set->keys[at];
		hashes[kept++] = set->hashes[at];
	}
	pfree(order);
	pfree(set->keys);
	pfree(set->hashes);
	set->keys = keys;
	set->hashes = hashes;
	set->count = kept;
	MemoryContextSwitchTo(old);
	if (set->count > set->max_keys)
		give_up(set);
}

/* Adds value to the set, unless it gave up. */
static void add_to_set(amq_jf_key_set *set, Datum value, uint64 hash)
{
	MemoryContext old;

	set->sealed = false;
	if (set->gave_up)
		return;
	/* A compressed or out-of-line key is kept whole: its bytes count, and
	 * equal keys compare equal. */
	if (set->typlen == -1)
		value = PointerGetDatum(PG_DETOAST_DATUM_PACKED(value));
	if (set->count == set->capacity) {
		if (set->capacity >= 2 * set->max_keys)
			compact(set);
		if (set->gave_up)
			return;
		if (set->count == set->capacity) {
			int capacity = Max(16, 2 * set->capacity);

			old = MemoryContextSwitchTo(set->values);
			set->keys = set->keys == NULL
					? palloc(sizeof(Datum) * capacity)
					: repalloc(set->keys, sizeof(Datum) * capacity);
			set->hashes = set->hashes == NULL
					  ? palloc(sizeof(uint64) * capacity)
					  : repalloc(set->hashes, sizeof(uint64) * capacity);
			MemoryContextSwitchTo(old);
			set->capacity = capacity;
		}
	}
	set->bytes += set->typbyval ? sizeof(Datum) : datumGetSize(value, false, set->typlen);
	if (set->bytes > set->max_bytes) {
		give_up(set);
		return;
	}
	old = MemoryContextSwitchTo(set->values);
	set->keys[set->count] = datumCopy(value, set->typbyval, set->typlen);
	MemoryContextSwitchTo(old);
	set->hashes[set->count++] = hash;
}

/* Replaces *bound with a copy of value (in the set's parent's memory). */
static void set_bound(amq_jf_key_set *set, Datum *bound, Datum value)
{
	MemoryContext old = MemoryContextSwitchTo(MemoryContextGetParent(set->values));

	if (!set->typbyval && set->ranged)
		pfree(DatumGetPointer(*bound));
	*bound = datumCopy(value, set->typbyval, set->typlen);
	MemoryContextSwitchTo(old);
}

void amq_jf_key_set_add(amq_jf_key_set *set, Datum value, uint64 hash)
{
	/* amq.join_filter_remote_max_set_keys = 0: no key values at all. */
	if (set->max_keys == 0)
		return;
	add_to_set(set, value, hash);
	if (set->cmp == NULL)
		return;
	if (!set->ranged) {
		MemoryContext old = MemoryContextSwitchTo(MemoryContextGetParent(set->values));

		set->lo = datumCopy(value, set->typbyval, set->typlen);
		set->hi = datumCopy(value, set->typbyval, set->typlen);
		MemoryContextSwitchTo(old);
		set->ranged = true;
		return;
	}
	if (DatumGetInt32(FunctionCall2Coll(set->cmp, InvalidOid, value, set->lo)) < 0)
		set_bound(set, &set->lo, value);
	else if (DatumGetInt32(FunctionCall2Coll(set->cmp, InvalidOid, value, set->hi)) > 0)
		set_bound(set, &set->hi, value);
}

bool amq_jf_key_set_seal(amq_jf_key_set *set)
{
	if (!set->sealed && !set->gave_up && set->count > 0)
		compact(set);
	set->sealed = true;
	return !set->gave_up;
}

ArrayType *amq_jf_key_set_array(amq_jf_key_set *set)
{
	MemoryContext old;
	ArrayType *array;

	if (!amq_jf_key_set_seal(set))
		return NULL;
	old = MemoryContextSwitchTo(set->values);
	array = construct_array(set->keys, set->count, set->type, set->typlen, set->typbyval,
				set->typalign);
	MemoryContextSwitchTo(old);
	return array;
}

/* Whether value lies in set's range. */
static bool in_range(const amq_jf_key_set *set, Datum value)
{
	return DatumGetInt32(FunctionCall2Coll(set->cmp, InvalidOid, value, set->lo)) >= 0 &&
	       DatumGetInt32(FunctionCall2Coll(set->cmp, InvalidOid, value, set->hi)) <= 0;
}

double amq_jf_key_set_range_share(const amq_jf_key_set *set, Oid relid, AttrNumber column)
{
	HeapTuple tuple;
	AttStatsSlot mcv, histogram;
	double share = 0.0, rest;

	if (!set->ranged || set->cmp == NULL ||
	    getBaseType(get_atttype(relid, column)) != set->type)
		return -1.0;
	tuple = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid), Int16GetDatum(column),
				BoolGetDatum(false));
	if (!HeapTupleIsValid(tuple))
		return -1.0;
	rest = 1.0 - ((Form_pg_statistic)GETSTRUCT(tuple))->stanullfrac;
	if (get_attstatsslot(&mcv, tuple, STATISTIC_KIND_MCV, InvalidOid,
			     ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS)) {
		for (int i = 0; i < mcv.nvalues && i < mcv.nnumbers; i++) {
			if (in_range(set, mcv.values[i]))
				share += mcv.numbers[i];
			rest -= mcv.numbers[i];
		}
		free_attstatsslot(&mcv);
	}
	/* The histogram's bounds divide the other rows into equal shares. */
	if (get_attstatsslot(&histogram, tuple, STATISTIC_KIND_HISTOGRAM, InvalidOid,
			     ATTSTATSSLOT_VALUES)) {
		int inside = 0;

		for (int i = 0; i < histogram.nvalues; i++)
			inside += in_range(set, histogram.values[i]);
		if (histogram.nvalues > 0)
			share += Max(rest, 0.0) * inside / histogram.nvalues;
		free_attstatsslot(&histogram);
	}
	ReleaseSysCache(tuple);
	return share;
}
