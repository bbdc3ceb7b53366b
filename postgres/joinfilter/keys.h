/*
 * joinfilter/keys.h - how a join key becomes the 64-bit input of a filter,
 * with its join operator's hash support (joinfilter/hash.c): what the planner
 * chooses and both the builder and the probes compute.
 *
 * Include after postgres.h.
 */
#ifndef AMQ_JF_KEYS_H
#define AMQ_JF_KEYS_H

#include "fmgr.h"
#include "nodes/pg_list.h"

/* ---- hashing a key with its join operator's hash support (joinfilter/hash.c) ---- */

/*
 * The 64-bit extended hash functions (HASHEXTENDED_PROC) of hash operator
 * opno's hash opfamily for its left and right input types. False when the
 * operator has no hash opfamily or the opfamily lacks either function.
 */
bool amq_jf_hash_procs(Oid opno, Oid *left_proc, Oid *right_proc);

/*
 * How a key column becomes its 64-bit part of a filter's input. Integer keys
 * (int2, int4, int8, and types hashed as those: date, xid, cid, xid8) are
 * taken as their value, widened to 64 bits, when the hash procs of both sides
 * are integer ones: the operator then means equal values, so this is as exact
 * as the extended hash and saves a function call per row. Every other key goes
 * through its type's extended hash function.
 */
typedef enum amq_jf_key_form {
	AMQ_JF_KEY_EXTENDED_HASH,
	AMQ_JF_KEY_INT2,
	AMQ_JF_KEY_INT4,
	AMQ_JF_KEY_INT8,
} amq_jf_key_form;

/* How one key column is hashed: its form, its extended hash function (for
 * AMQ_JF_KEY_EXTENDED_HASH) and the hash clause's collation. */
typedef struct amq_jf_key {
	amq_jf_key_form form;
	FmgrInfo hash_fn;
	Oid collation;
} amq_jf_key;

/* The form of a key whose side hashes with proc and whose other side with
 * other_proc (both from amq_jf_hash_procs). */
amq_jf_key_form amq_jf_key_form_of(Oid proc, Oid other_proc);

/* Sets key up to hash in form with proc under collation. */
void amq_jf_key_init(amq_jf_key *key, amq_jf_key_form form, Oid proc, Oid collation);

/* Whether hashing any of keys may allocate (it calls a hash function), so that
 * the caller must reset its per-row memory. */
bool amq_jf_keys_allocate(const amq_jf_key *keys, int nkeys);

/* splitmix64's finalizer: integer keys are raw values, and some types'
 * extended hashes are weak in places. */
static inline uint64 amq_jf_mix64(uint64 h)
{
	h ^= h >> 30;
	h *= UINT64CONST(0xbf58476d1ce4e5b9);
	h ^= h >> 27;
	h *= UINT64CONST(0x94d049bb133111eb);
	h ^= h >> 31;
	return h;
}

/* The 64 bits a key contributes for value. */
static inline uint64 amq_jf_key_bits(const amq_jf_key *key, Datum value)
{
	switch (key->form) {
	case AMQ_JF_KEY_INT2:
		return (uint64)(int64)DatumGetInt16(value);
	case AMQ_JF_KEY_INT4:
		return (uint64)(int64)DatumGetInt32(value);
	case AMQ_JF_KEY_INT8:
		return (uint64)DatumGetInt64(value);
	case AMQ_JF_KEY_EXTENDED_HASH:
		return DatumGetUInt64(FunctionCall2Coll((FmgrInfo *)&key->hash_fn, key->collation,
							value, Int64GetDatum(0)));
	}
	pg_unreachable();
}

/*
 * The Bloom input of one row's non-NULL keys: each taken in its form, mixed so
 * that every bit depends on every key, and combined in key order. Builder and
 * probe hash the same keys in the same order, so equal keys give equal inputs.
 * Inline: the probe runs it for every row of the scan.
 */
static inline uint64 amq_jf_hash_keys(const amq_jf_key *keys, int nkeys, const Datum *values)
{
	uint64 h = 0;

	for (int i = 0; i < nkeys; i++)
		h = amq_jf_mix64(h ^ amq_jf_key_bits(&keys[i], values[i]) ^ (uint64)i);
	return h;
}

/* EXPLAIN's text for a filter's keys in a deparse context: "f.a", or
 * "(f.a, f.b)" for a combined filter. */
char *amq_jf_deparse_keys(List *keys, List *context);

#endif
