/*
 * cuckoo.c - cuckoo filters by partial-key cuckoo hashing (Fan et al.,
 * "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014).
 *
 * The rules this file enforces, which are part of the portable format:
 * - A filter has nb = f->cells buckets (any nb >= 1) of AMQ_CUCKOO_SLOTS = 4
 *   slots; each slot holds an fp_bits-bit fingerprint (fp_bits = f->hashes,
 *   4..32). Fingerprint 0 is reserved: it marks an empty slot.
 * - Slot j of bucket i occupies payload bits [(4i + j) * fp_bits, (4i + j + 1)
 *   * fp_bits), bit n being bit n % 8 of byte n / 8. The payload ends with a
 *   spare zero word so any slot can be read with one unaligned 64-bit load.
 * - From a value hash h: primary bucket i1 = reduce(h, nb); fingerprint from the
 *   low 32 bits of h, mapped onto [1, 2^fp_bits - 1]; alternate bucket
 *   alt(i, fp) = (reduce(mix64(fp), nb) - i) mod nb, which is its own inverse,
 *   so a stored fingerprint can always find its other bucket without h.
 * - An add takes the first free slot of i1, then of i2; otherwise it kicks
 *   fingerprints along a random walk chosen by a PRNG seeded from h (never from
 *   global state, so the same adds give the same bytes everywhere) for at most
 *   MAX_KICKS steps. A walk that finds no free slot is undone step by step, so
 *   a failed add leaves the filter byte for byte as it was.
 * - Delete removes one copy. Deleting a value that was never added can remove
 *   another value's matching fingerprint: delete only what you added.
 */
#include "variant.h"

#include <math.h>
#include <stdio.h>

/*
 * Longest kick chain an add tries, from measurement (docs/CUCKOO.md): in
 * filters sized for 1M items the first failed add came at load >= 0.9695 over
 * 200 seeds with 2000 kicks, against 0.9618 with 1000 and 0.9491 with 500, the
 * paper's bound. A full filter still rejects an add in about 50 us.
 */
#define MAX_KICKS 2000

/* AMQ_CUCKOO_SLOTS * AMQ_CUCKOO_TARGET_LOAD = 4 * 0.95 = 19 / 5 slots filled per
 * bucket, as an exact fraction so bucket counts never depend on rounding. */
#define LOAD_NUM 19
#define LOAD_DEN 5

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

/* The fingerprint in slot `slot` (bucket * 4 + index) of payload p. */
static inline uint32_t slot_get(const uint8_t *p, uint64_t slot, uint32_t bits)
{
	uint64_t bit = slot * bits;
	uint64_t word = amq_load64le(p + (bit >> 3)) >> (bit & 7);
	return (uint32_t)(word & ((1ULL << bits) - 1));
}

/* Stores fp in slot `slot`, leaving every other bit of the word as it was. */
static inline void slot_set(uint8_t *p, uint64_t slot, uint32_t bits, uint32_t fp)
{
	uint64_t bit = slot * bits;
	uint64_t mask = ((1ULL << bits) - 1) << (bit & 7);
	uint64_t word = amq_load64le(p + (bit >> 3));
	amq_store64le(p + (bit >> 3), (word & ~mask) | (uint64_t)fp << (bit & 7));
}

/* Index (0..3) of the first slot of bucket i holding fp, or -1. With fp == 0
 * this finds the first free slot. */
static inline int bucket_find(const uint8_t *p, uint64_t i, uint32_t bits, uint32_t fp)
{
	uint64_t slot = i * AMQ_CUCKOO_SLOTS;
	for (int j = 0; j < AMQ_CUCKOO_SLOTS; j++)
		if (slot_get(p, slot + j, bits) == fp)
			return j;
	return -1;
}

/* Number of slots of bucket i holding fp. */
static inline uint32_t bucket_count(const uint8_t *p, uint64_t i, uint32_t bits, uint32_t fp)
{
	uint64_t slot = i * AMQ_CUCKOO_SLOTS;
	uint32_t n = 0;
	for (int j = 0; j < AMQ_CUCKOO_SLOTS; j++)
		n += slot_get(p, slot + j, bits) == fp;
	return n;
}

/* Puts fp in the first free slot of bucket i; false when the bucket is full. */
static inline bool bucket_insert(uint8_t *p, uint64_t i, uint32_t bits, uint32_t fp)
{
	int j = bucket_find(p, i, bits, 0);
	if (j < 0)
		return false;
	slot_set(p, i * AMQ_CUCKOO_SLOTS + (uint64_t)j, bits, fp);
	return true;
}

/* Writes fp into slot `slot` and returns what was there. */
static inline uint32_t slot_swap(uint8_t *p, uint64_t slot, uint32_t bits, uint32_t fp)
{
	uint32_t old = slot_get(p, slot, bits);
	slot_set(p, slot, bits, fp);
	return old;
}

/* splitmix64: the walk's random choices, a pure function of the add's hash. */
static inline uint64_t walk_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return amq_mix64(*state);
}

uint32_t amq_cuckoo_fingerprint_bits(double fpr)
{
	/* The smallest bits with 2b / 2^bits <= fpr, i.e. ceil(log2(2b / fpr)),
	 * computed with exact powers of two so no rounding can shift it. */
	for (uint32_t bits = AMQ_CUCKOO_MIN_FINGERPRINT; bits < AMQ_CUCKOO_MAX_FINGERPRINT; bits++)
		if (ldexp(2.0 * AMQ_CUCKOO_SLOTS, -(int)bits) <= fpr)
			return bits;
	return AMQ_CUCKOO_MAX_FINGERPRINT;
}

/* ceil(sqrt(n)) in integers, so sizing never depends on a libm. */
static uint64_t ceil_sqrt(uint64_t n)
{
	uint64_t r = 0;
	for (uint64_t bit = (uint64_t)1 << 31; bit != 0; bit >>= 1)
		if ((r + bit) * (r + bit) <= n)
			r += bit;
	return r * r < n ? r + 1 : r;
}

amq_status amq_cuckoo_size(uint64_t capacity, double fpr, uint64_t *buckets,
			   uint32_t *fingerprint_bits, amq_error *err)
{
	amq_status status = amq_check_fpr(fpr, err);
	if (status != AMQ_OK)
		return status;
	if (capacity == 0)
		return amq_check_capacity(0, err);
	/* ceil(capacity * 5 / 19) without overflow: capacity = 19q + r. */
	uint64_t q = capacity / LOAD_NUM, r = capacity % LOAD_NUM;
	uint64_t b = q * LOAD_DEN + (r * LOAD_DEN + LOAD_NUM - 1) / LOAD_NUM;
	/* Small tables fill unevenly: at 95% a filter for 10 items refused one of
	 * its 10 adds in 2% of trials, one for 100 in 0.7%. ceil(sqrt(buckets))
	 * spare buckets made that 0 in 2000 trials at every size from 1 to 5000,
	 * and cost 0.2% at a million items. */
	*buckets = b + ceil_sqrt(b);
	*fingerprint_bits = amq_cuckoo_fingerprint_bits(fpr);
	uint64_t payload;
	return amq_check_size(AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, *fingerprint_bits, *buckets,
			      &payload, err);
}

amq_status amq_cuckoo_create(amq_filter *f, uint64_t capacity, double fpr, uint64_t seed,
			     const amq_allocator *a, amq_error *err)
{
	uint64_t buckets;
	uint32_t bits;
	amq_status status = amq_cuckoo_size(capacity, fpr, &buckets, &bits, err);
	if (status != AMQ_OK)
		return status;
	return amq_cuckoo_create_exact(f, buckets, bits, seed, a, err);
}

amq_status amq_cuckoo_create_exact(amq_filter *f, uint64_t buckets, uint32_t fingerprint_bits,
				   uint64_t seed, const amq_allocator *a, amq_error *err)
{
	if (buckets == 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"a cuckoo filter needs at least 1 bucket");
	if (fingerprint_bits < AMQ_CUCKOO_MIN_FINGERPRINT ||
	    fingerprint_bits > AMQ_CUCKOO_MAX_FINGERPRINT)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "",
				"cuckoo fingerprint bits must be between %d and %d, got %u",
				AMQ_CUCKOO_MIN_FINGERPRINT, AMQ_CUCKOO_MAX_FINGERPRINT,
				fingerprint_bits);
	return amq_filter_allocate(f, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, fingerprint_bits, seed,
				   buckets, a, err);
}

amq_status amq_cuckoo_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	uint8_t *p = f->payload;
	uint32_t bits = f->hashes;
	uint64_t nb = f->cells;
	uint32_t fp = fingerprint(hash, bits);
	uint64_t i1 = amq_reduce(hash, nb);
	uint64_t i2 = alternate(i1, fp, nb);

	if (bucket_insert(p, i1, bits, fp) || bucket_insert(p, i2, bits, fp)) {
		f->items++;
		return AMQ_OK;
	}

	/* Random walk: swap the carried fingerprint into a random slot and carry
	 * the victim to its other bucket. log[k] is the slot of swap k, which is
	 * all an undo needs: swapping the same slots back in reverse order hands
	 * every fingerprint back to where it was. */
	uint64_t log[MAX_KICKS];
	uint64_t rng = hash;
	uint32_t carried = fp;
	uint64_t bucket = walk_next(&rng) >> 63 ? i2 : i1;
	for (int k = 0; k < MAX_KICKS; k++) {
		log[k] = bucket * AMQ_CUCKOO_SLOTS + (walk_next(&rng) >> 62);
		carried = slot_swap(p, log[k], bits, carried);
		bucket = alternate(bucket, carried, nb);
		if (bucket_insert(p, bucket, bits, carried)) {
			f->items++;
			return AMQ_OK;
		}
	}
	for (int k = MAX_KICKS - 1; k >= 0; k--)
		carried = slot_swap(p, log[k], bits, carried);

	return amq_fail(err, AMQ_FILTER_FULL, "rebuild with cuckoo_agg or a larger capacity",
			"cuckoo filter is full (%llu items, load %.1f%%)",
			(unsigned long long)f->items, 100.0 * amq_cuckoo_load(f));
}

bool amq_cuckoo_contains(const amq_filter *f, uint64_t hash)
{
	uint32_t bits = f->hashes;
	uint64_t nb = f->cells;
	uint32_t fp = fingerprint(hash, bits);
	uint64_t i1 = amq_reduce(hash, nb);
	if (bucket_find(f->payload, i1, bits, fp) >= 0)
		return true;
	return bucket_find(f->payload, alternate(i1, fp, nb), bits, fp) >= 0;
}

bool amq_cuckoo_delete(amq_filter *f, uint64_t hash)
{
	uint32_t bits = f->hashes;
	uint64_t nb = f->cells;
	uint32_t fp = fingerprint(hash, bits);
	uint64_t i = amq_reduce(hash, nb);
	int j = bucket_find(f->payload, i, bits, fp);
	if (j < 0) {
		i = alternate(i, fp, nb);
		j = bucket_find(f->payload, i, bits, fp);
		if (j < 0)
			return false;
	}
	slot_set(f->payload, i * AMQ_CUCKOO_SLOTS + (uint64_t)j, bits, 0);
	f->items--;
	return true;
}

uint32_t amq_cuckoo_count(const amq_filter *f, uint64_t hash)
{
	uint32_t bits = f->hashes;
	uint64_t nb = f->cells;
	uint32_t fp = fingerprint(hash, bits);
	uint64_t i1 = amq_reduce(hash, nb);
	uint64_t i2 = alternate(i1, fp, nb);
	uint32_t n = bucket_count(f->payload, i1, bits, fp);
	if (i2 != i1)
		n += bucket_count(f->payload, i2, bits, fp);
	return n;
}

double amq_cuckoo_load(const amq_filter *f)
{
	return (double)f->items / ((double)f->cells * AMQ_CUCKOO_SLOTS);
}

double amq_cuckoo_expected_fpr(const amq_filter *f)
{
	/* 1 - (1 - 1/(2^f - 1))^(2b * load), via log1p/expm1 so that 32-bit
	 * fingerprints do not round the rate to zero. */
	double per_slot = 1.0 / (ldexp(1.0, (int)f->hashes) - 1.0);
	double probes = 2.0 * AMQ_CUCKOO_SLOTS * amq_cuckoo_load(f);
	return -expm1(probes * log1p(-per_slot));
}

/* ---- the b4 row of the variant table ---- */

static double slot_bits_per_bucket(uint32_t hashes)
{
	return (double)AMQ_CUCKOO_SLOTS * hashes;
}

static uint64_t b4_payload_size(uint32_t hashes, uint64_t cells)
{
	uint64_t slot_bits = cells * AMQ_CUCKOO_SLOTS * hashes;
	/* One spare word lets every slot be read with one 64-bit load. */
	return 8 * ((slot_bits + 63) / 64 + 1);
}

static amq_status b4_check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->hashes < AMQ_CUCKOO_MIN_FINGERPRINT || f->hashes > AMQ_CUCKOO_MAX_FINGERPRINT)
		return amq_fail(err, AMQ_INVALID_FILTER, AMQ_NOT_A_FILTER_HINT,
				"%s%u-bit fingerprints", prefix, f->hashes);
	if (f->cells <= ((uint64_t)1 << 36) && f->items > f->cells * AMQ_CUCKOO_SLOTS)
		return amq_fail(err, AMQ_INVALID_FILTER, AMQ_NOT_A_FILTER_HINT,
				"%s%llu items in %llu slots", prefix, (unsigned long long)f->items,
				(unsigned long long)(f->cells * AMQ_CUCKOO_SLOTS));
	return AMQ_OK;
}

/* Zero bits past the last slot, and as many occupied slots as items. */
static amq_status b4_verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	uint64_t slots = f->cells * AMQ_CUCKOO_SLOTS, occupied = 0;
	if (!amq_tail_is_zero(f, slots * f->hashes))
		return amq_fail(err, AMQ_INVALID_FILTER, AMQ_NOT_A_FILTER_HINT,
				"%sbits set past the last cuckoo slot", prefix);
	for (uint64_t s = 0; s < slots; s++)
		occupied += slot_get(f->payload, s, f->hashes) != 0;
	if (occupied != f->items)
		return amq_fail(err, AMQ_INVALID_FILTER, AMQ_NOT_A_FILTER_HINT,
				"%sheader counts %llu items, slots hold %llu", prefix,
				(unsigned long long)f->items, (unsigned long long)occupied);
	return AMQ_OK;
}

static amq_status b4_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
			  amq_error *err)
{
	return amq_cuckoo_size(capacity, fpr, cells, hashes, err);
}

static amq_probe b4_probe_for(const amq_filter *f)
{
	(void)f;
	return amq_cuckoo_contains;
}

static uint64_t b4_frequency(const amq_filter *f, uint64_t hash)
{
	return amq_cuckoo_count(f, hash);
}

static double b4_estimate_items(const amq_filter *f)
{
	return (double)f->items;
}

static int b4_info(const amq_filter *f, char *out, size_t cap)
{
	return snprintf(
	    out, cap,
	    "{\"kind\":\"cuckoo\",\"buckets\":%llu,\"slots\":%d,\"fingerprint_bits\":%u,"
	    "\"total_slots\":%llu,\"items\":%llu,\"load_factor\":%.6g,\"bytes\":%zu,"
	    "\"expected_fpr\":%.6g,\"seed\":%llu,\"format_version\":%u}",
	    (unsigned long long)f->cells, AMQ_CUCKOO_SLOTS, f->hashes,
	    (unsigned long long)(f->cells * AMQ_CUCKOO_SLOTS), (unsigned long long)f->items,
	    amq_cuckoo_load(f), f->size, amq_cuckoo_expected_fpr(f), (unsigned long long)f->seed,
	    amq_variant_cuckoo_b4.format_version);
}

const amq_variant amq_variant_cuckoo_b4 = {
    .kind = AMQ_KIND_CUCKOO,
    .layout = AMQ_LAYOUT_CLASSIC,
    .kind_name = "cuckoo",
    .layout_name = "b4",
    .format_version = 1,
    .slots = AMQ_CUCKOO_SLOTS,
    .cell_name = "buckets",
    .order_free = false,
    .cell_bits = slot_bits_per_bucket,
    .payload_size = b4_payload_size,
    .check_header = b4_check_header,
    .verify = b4_verify,
    .size = b4_size,
    .add = amq_cuckoo_add,
    .contains = amq_cuckoo_contains,
    .probe_for = b4_probe_for,
    .remove = amq_cuckoo_delete,
    .frequency = b4_frequency,
    .expected_fpr = amq_cuckoo_expected_fpr,
    .estimate_items = b4_estimate_items,
    .info = b4_info,
};
