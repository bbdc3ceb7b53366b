/*
 * cuckoo.c - cuckoo filters by partial-key cuckoo hashing (Fan et al.,
 * "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014), with buckets
 * of b = 2, 4 or 8 fingerprints, and b = 4 buckets stored semi-sorted
 * (cuckoo_semisorted.c).
 *
 * The rules this file enforces, which are part of the portable format:
 * - A filter has nb = f->cells buckets (any nb >= 1) of b slots; each slot
 *   holds an fp_bits-bit fingerprint (fp_bits = f->hashes, 4..32).
 *   Fingerprint 0 is reserved: it marks an empty slot.
 * - Plain buckets: slot j of bucket i occupies payload bits [(b i + j) *
 *   fp_bits, (b i + j + 1) * fp_bits), bit n being bit n % 8 of byte n / 8.
 *   The payload ends with a spare zero word so any slot can be read with one
 *   unaligned 64-bit load.
 * - From a value hash h: primary bucket i1 = reduce(h, nb); fingerprint from the
 *   low 32 bits of h, mapped onto [1, 2^fp_bits - 1]; alternate bucket
 *   alt(i, fp) = (reduce(mix64(fp), nb) - i) mod nb, which is its own inverse,
 *   so a stored fingerprint can always find its other bucket without h.
 * - An add takes the first free slot of i1, then of i2; when both hold
 *   nothing but its fingerprint (2b copies of the value) it fails at once;
 *   otherwise it kicks fingerprints along a random walk chosen by a PRNG
 *   seeded from h (never from global state, so the same adds give the same
 *   bytes everywhere) for at most MAX_KICKS steps. A walk that finds no free
 *   slot is undone step by step, so a failed add leaves the filter byte for
 *   byte as it was.
 * - Delete removes one copy. Deleting a value that was never added can remove
 *   another value's matching fingerprint: delete only what you added.
 */
#include "cuckoo/cuckoo_table.h"

#include <math.h>
#include <stdio.h>

/*
 * Longest kick chain an add tries, from measurement (docs/CUCKOO.md): in b = 4
 * filters sized for 1M items the first failed add came at load >= 0.9695 over
 * 200 seeds with 2000 kicks, against 0.9618 with 1000 and 0.9491 with 500, the
 * paper's bound. A full filter still rejects an add in about 50 us.
 */
#define MAX_KICKS 2000

/* The table of a semi-sorted filter: b = 4 buckets of 4f - 4 bits. */
static inline cuckoo_table semisorted_table(const amq_filter *f)
{
	return (cuckoo_table){.payload = f->payload,
			      .buckets = f->cells,
			      .bits = f->hashes,
			      .slots = 4,
			      .log2_slots = 2,
			      .semisorted = true};
}

cuckoo_table amq_cuckoo_table(const amq_filter *f)
{
	return amq_cuckoo_table_of(f, amq_cuckoo_shape(f->layout));
}

/* The fingerprint of h: its low 32 bits scaled onto [1, 2^bits - 1]. */
static inline uint32_t fingerprint(uint64_t h, uint32_t bits)
{
	return (uint32_t)(((uint64_t)(uint32_t)h * ((1ULL << bits) - 1)) >> 32) + 1;
}

/* The other bucket of fingerprint fp stored in bucket i; alt(alt(i)) == i. */
static inline uint64_t alternate(uint64_t i, uint32_t fp, uint64_t nb)
{
	uint64_t j = amq_reduce(amq_mix64(fp), nb) + nb - i;
	return j >= nb ? j - nb : j;
}

/* The fingerprint in plain slot `slot` (bucket * b + index). */
static inline uint32_t slot_get(const cuckoo_table *t, uint64_t slot)
{
	return (uint32_t)amq_field_get(t->payload, slot * t->bits, t->bits);
}

static inline void slot_set(const cuckoo_table *t, uint64_t slot, uint32_t fp)
{
	amq_field_set(t->payload, slot * t->bits, t->bits, fp);
}

/* ---- plain buckets read a word at a time: as many slots as one 64-bit load
 * reads whole are compared at once, as lanes of f bits ---- */

/* The most bits one unaligned 64-bit load reads whole at any bit offset. */
#define WORD_BITS 57

/* Slots compared per load: the most of a bucket's `slots`, halving, whose
 * bits fit in WORD_BITS. A whole b2 bucket up to f = 28, b4 up to 14, b8 up
 * to 7; half of one up to twice that; 1 past it. */
static inline uint32_t lanes_per_word(uint32_t bits, uint32_t slots)
{
	uint32_t lanes = slots;
	while (lanes > 1 && lanes * bits > WORD_BITS)
		lanes >>= 1;
	return lanes;
}

/* 1 in the lowest bit of each of `lanes` lanes of `bits` bits. */
static inline uint64_t lane_ones(uint32_t bits, uint32_t lanes)
{
	uint64_t ones = 0;
	for (uint32_t j = 0; j < lanes; j++)
		ones |= (uint64_t)1 << (j * bits);
	return ones;
}

/* The high bit of each zero lane of x (lanes of `bits` bits, `ones` from
 * lane_ones), and maybe of lanes above a zero one: x - ones borrows through a
 * zero lane only. So the result is nonzero exactly when a lane is zero, and
 * its lowest bit is the lowest zero lane's high bit. */
static inline uint64_t zero_lanes(uint64_t x, uint64_t ones, uint32_t bits)
{
	return (x - ones) & ~x & (ones << (bits - 1));
}

/* The byte where bucket i starts, for a prefetch. */
static inline const uint8_t *bucket_start(const cuckoo_table *t, uint64_t i)
{
	uint64_t bucket_bits =
	    t->semisorted ? amq_semisorted_bucket_bits(t->bits) : (uint64_t)t->slots * t->bits;
	return t->payload + ((i * bucket_bits) >> 3);
}

/* Puts fp in a free slot of bucket i (plain: the first); false when full. */
static bool bucket_insert(const cuckoo_table *t, uint64_t i, uint32_t fp)
{
	if (t->semisorted) {
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		if (fps[0] != 0) /* ascending: a free slot would come first */
			return false;
		fps[0] = fp;
		amq_semisorted_store(t, i, fps);
		return true;
	}
	/* The first free slot, found a word of slots at a time. */
	uint32_t lanes = lanes_per_word(t->bits, t->slots), width = lanes * t->bits;
	uint64_t ones = lane_ones(t->bits, lanes);
	for (uint64_t at = i * t->slots * t->bits, end = at + (uint64_t)t->slots * t->bits;
	     at < end; at += width) {
		uint64_t free = zero_lanes(amq_field_get(t->payload, at, width), ones, t->bits);
		if (free != 0) {
			amq_field_set(t->payload,
				      at + (uint64_t)__builtin_ctzll(free) - (t->bits - 1), t->bits,
				      fp);
			return true;
		}
	}
	return false;
}

/* Removes one copy of fp from bucket i; false when it holds none. */
static bool bucket_remove(const cuckoo_table *t, uint64_t i, uint32_t fp)
{
	if (t->semisorted) {
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		for (int j = 0; j < 4; j++)
			if (fps[j] == fp) {
				fps[j] = 0;
				amq_semisorted_store(t, i, fps);
				return true;
			}
		return false;
	}
	for (uint64_t s = i * t->slots, end = s + t->slots; s < end; s++)
		if (slot_get(t, s) == fp) {
			slot_set(t, s, 0);
			return true;
		}
	return false;
}

/* Copies of fp in bucket i. */
static uint32_t bucket_count(const cuckoo_table *t, uint64_t i, uint32_t fp)
{
	uint32_t n = 0;
	if (t->semisorted) {
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		for (int j = 0; j < 4; j++)
			n += fps[j] == fp;
		return n;
	}
	for (uint64_t s = i * t->slots, end = s + t->slots; s < end; s++)
		n += slot_get(t, s) == fp;
	return n;
}

/* A walk step: the slot-th fingerprint of full bucket i (plain: slot
 * `slot`; semi-sorted: the slot-th smallest) is replaced by fp and returned. */
static uint32_t bucket_swap(const cuckoo_table *t, uint64_t i, uint32_t slot, uint32_t fp)
{
	if (t->semisorted) {
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		uint32_t old = fps[slot];
		fps[slot] = fp;
		amq_semisorted_store(t, i, fps);
		return old;
	}
	uint32_t old = slot_get(t, i * t->slots + slot);
	slot_set(t, i * t->slots + slot, fp);
	return old;
}

/* Undoes bucket_swap(t, i, slot, in) that returned out: out goes back where
 * in went (semi-sorted: in place of a copy of in, which restores the same
 * multiset and so the same bytes), and in is returned. */
static uint32_t bucket_unswap(const cuckoo_table *t, uint64_t i, uint32_t slot, uint32_t in,
			      uint32_t out)
{
	if (t->semisorted) {
		uint32_t fps[4];
		amq_semisorted_load(t, i, fps);
		for (int j = 0; j < 4; j++)
			if (fps[j] == in) {
				fps[j] = out;
				break;
			}
		amq_semisorted_store(t, i, fps);
		return in;
	}
	slot_set(t, i * t->slots + slot, out);
	return in;
}

/* splitmix64: the walk's random choices, a pure function of the add's hash. */
static inline uint64_t walk_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return amq_mix64(*state);
}

/* One step of a walk, as its undo needs it. */
typedef struct kick {
	uint64_t bucket;
	uint32_t slot;
	uint32_t in; /* the fingerprint the step put in */
} kick;

amq_status amq_cuckoo_table_add(amq_filter *f, const cuckoo_table *t, uint64_t hash, amq_error *err)
{
	uint64_t nb = t->buckets;
	uint32_t fp = fingerprint(hash, t->bits);
	uint64_t i1 = amq_reduce(hash, nb);
	uint64_t i2 = alternate(i1, fp, nb);

	/* Out of cache, i2's line is on its way while i1 is read. */
	__builtin_prefetch(bucket_start(t, i2));
	if (bucket_insert(t, i1, fp) || bucket_insert(t, i2, fp)) {
		f->items++;
		return AMQ_OK;
	}

	/* Both buckets hold nothing but fp: the value is stored 2b times (b when
	 * its two buckets are one), the most a filter can, since every copy must
	 * sit in one of them. A walk would only carry fp between the two and
	 * fail after MAX_KICKS, and the advice to rebuild larger would be wrong.
	 * Nothing has been written yet. */
	uint32_t most = i1 == i2 ? t->slots : 2 * t->slots;
	if (amq_cuckoo_table_count(t, hash) == most)
		return amq_fail(err, AMQ_FILTER_FULL, AMQ_CUCKOO_COPIES_HINT,
				"cuckoo filter already holds this value %u times, the most a %s "
				"filter can%s",
				most, amq_variant_of(f)->layout_name,
				i1 == i2 ? " for a value whose two buckets are the same" : "");

	/* Random walk: swap the carried fingerprint into a random slot and carry
	 * the victim to its other bucket. Undoing the steps in reverse order
	 * hands every fingerprint back to where it was. */
	kick log[MAX_KICKS];
	uint64_t rng = hash;
	uint32_t carried = fp;
	uint64_t bucket = walk_next(&rng) >> 63 ? i2 : i1;
	for (int k = 0; k < MAX_KICKS; k++) {
		uint32_t slot = (uint32_t)(walk_next(&rng) >> (64 - t->log2_slots));
		log[k] = (kick){bucket, slot, carried};
		carried = bucket_swap(t, bucket, slot, carried);
		bucket = alternate(bucket, carried, nb);
		if (bucket_insert(t, bucket, carried)) {
			f->items++;
			return AMQ_OK;
		}
	}
	for (int k = MAX_KICKS - 1; k >= 0; k--)
		carried = bucket_unswap(t, log[k].bucket, log[k].slot, log[k].in, carried);

	return amq_fail(err, AMQ_FILTER_FULL, "rebuild with cuckoo_agg or a larger capacity",
			"cuckoo filter is full (%llu items, load %.1f%%)",
			(unsigned long long)f->items, 100.0 * amq_cuckoo_load(f));
}

amq_status amq_cuckoo_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	cuckoo_table t = amq_cuckoo_table(f);
	return amq_cuckoo_table_add(f, &t, hash, err);
}

/* Whether lanes of fp (pattern = fp * ones) appear in the `width` bits at
 * at1 or at at2. */
static inline uint64_t words_hold(const uint8_t *p, uint64_t at1, uint64_t at2, uint32_t width,
				  uint64_t ones, uint64_t pattern, uint32_t bits)
{
	return zero_lanes(amq_field_get(p, at1, width) ^ pattern, ones, bits) |
	       zero_lanes(amq_field_get(p, at2, width) ^ pattern, ones, bits);
}

/* The plain-bucket probe: both buckets are read, a word of slots at a time,
 * and compared without a branch, so that out of cache their two loads, and
 * those of the next probes, overlap instead of waiting on a mispredicted
 * early exit. slots is a constant at each call, so the usual case, whole
 * buckets, is straight-line code. */
static inline bool plain_contains(const amq_filter *f, uint64_t hash, uint32_t slots)
{
	uint32_t bits = f->hashes, width = slots * bits;
	uint64_t nb = f->cells;
	uint32_t fp = fingerprint(hash, bits);
	uint64_t i1 = amq_reduce(hash, nb);
	uint64_t i2 = alternate(i1, fp, nb);
	if (width <= WORD_BITS) {
		uint64_t ones = lane_ones(bits, slots);
		return words_hold(f->payload, i1 * width, i2 * width, width, ones, fp * ones,
				  bits) != 0;
	}
	uint32_t lanes = lanes_per_word(bits, slots);
	uint64_t ones = lane_ones(bits, lanes), found = 0;
	uint64_t at1 = i1 * width, at2 = i2 * width;
	for (uint32_t j = 0; j < slots; j += lanes, at1 += lanes * bits, at2 += lanes * bits)
		found |= words_hold(f->payload, at1, at2, lanes * bits, ones, fp * ones, bits);
	return found != 0;
}

bool amq_cuckoo_b2_contains(const amq_filter *f, uint64_t hash)
{
	return plain_contains(f, hash, 2);
}

bool amq_cuckoo_b4_contains(const amq_filter *f, uint64_t hash)
{
	return plain_contains(f, hash, 4);
}

bool amq_cuckoo_b8_contains(const amq_filter *f, uint64_t hash)
{
	return plain_contains(f, hash, 8);
}

/* The semi-sorted probe; its row already says the layout, so it skips
 * amq_cuckoo_table's lookup of the shape on every probe. */
bool amq_cuckoo_semisorted_contains(const amq_filter *f, uint64_t hash)
{
	cuckoo_table t = semisorted_table(f);
	uint32_t fp = fingerprint(hash, t.bits);
	uint64_t i1 = amq_reduce(hash, t.buckets);
	return amq_semisorted_has(&t, i1, fp) ||
	       amq_semisorted_has(&t, alternate(i1, fp, t.buckets), fp);
}

bool amq_cuckoo_table_delete(amq_filter *f, const cuckoo_table *t, uint64_t hash)
{
	uint32_t fp = fingerprint(hash, t->bits);
	uint64_t i1 = amq_reduce(hash, t->buckets);
	if (!bucket_remove(t, i1, fp) && !bucket_remove(t, alternate(i1, fp, t->buckets), fp))
		return false;
	f->items--;
	return true;
}

bool amq_cuckoo_delete(amq_filter *f, uint64_t hash)
{
	cuckoo_table t = amq_cuckoo_table(f);
	return amq_cuckoo_table_delete(f, &t, hash);
}

uint32_t amq_cuckoo_table_count(const cuckoo_table *t, uint64_t hash)
{
	uint32_t fp = fingerprint(hash, t->bits);
	uint64_t i1 = amq_reduce(hash, t->buckets);
	uint64_t i2 = alternate(i1, fp, t->buckets);
	uint32_t n = bucket_count(t, i1, fp);
	if (i2 != i1)
		n += bucket_count(t, i2, fp);
	return n;
}

uint32_t amq_cuckoo_count(const amq_filter *f, uint64_t hash)
{
	cuckoo_table t = amq_cuckoo_table(f);
	return amq_cuckoo_table_count(&t, hash);
}

uint32_t amq_cuckoo_bucket_size(const amq_filter *f)
{
	return amq_cuckoo_table(f).slots;
}

double amq_cuckoo_load(const amq_filter *f)
{
	return (double)f->items / ((double)f->cells * amq_cuckoo_bucket_size(f));
}

double amq_cuckoo_expected_fpr(const amq_filter *f)
{
	/* 1 - (1 - 1/(2^f - 1))^(2b * load), via log1p/expm1 so that 32-bit
	 * fingerprints do not round the rate to zero. */
	double per_slot = 1.0 / (ldexp(1.0, (int)f->hashes) - 1.0);
	double probes = 2.0 * amq_cuckoo_bucket_size(f) * amq_cuckoo_load(f);
	return -expm1(probes * log1p(-per_slot));
}
