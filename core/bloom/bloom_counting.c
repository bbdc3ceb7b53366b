/*
 * bloom_counting.c - the counting Bloom filter (Fan et al., "Summary Cache",
 * 2000), with the spectral Bloom filter's frequency estimate (Cohen & Matias,
 * 2003): the 'counting' layout of kind bloom.
 *
 * It has the classic layout's m and k for the fpr asked and puts an item at
 * the same k distinct positions (amq_classic_positions), but keeps a 4-bit
 * counter at each position instead of a bit: 4m bits, four times the classic
 * filter. Counter i is the low nibble of payload byte i / 2 when i is even,
 * the high nibble when odd. An add increments the item's k counters, a delete
 * decrements them, a value is present when all k are non-zero, and the
 * smallest of them bounds how often it was added.
 *
 * Overflow: a counter that reaches 15 saturates and is sticky. It is never
 * incremented past 15 and never decremented again, since it may stand for
 * more adds than it can count; so an overflow can never turn into a false
 * negative, whatever the later deletes. The cost: a saturated counter stays
 * set for good, so a filter whose counters saturated keeps those positions
 * even after every value there was deleted (a slightly higher fpr), and a
 * frequency whose counters all saturated is only known to be at least 15:
 * it is then reported as the filter's item count (adds minus deletes), the
 * smallest bound that holds. With n items at the sized load a counter reaches
 * 15 by chance with probability about 1e-15 (Fan et al.), so in practice only
 * values added 15 or more times saturate.
 *
 * Deleting a value that was never added can zero counters other values need:
 * delete only what you added. A delete of a value whose counters are not all
 * non-zero (certainly absent) changes nothing.
 */
#include "bloom/bloom_internal.h"

#include <math.h>
#include <stdio.h>

/* Counter i of payload p. */
static inline unsigned counter_get(const uint8_t *p, uint64_t i)
{
	return (p[i >> 1] >> ((i & 1) * 4)) & 0xf;
}

/* Sets counter i of payload p to value (0 to 15). */
static inline void counter_set(uint8_t *p, uint64_t i, unsigned value)
{
	unsigned shift = (unsigned)(i & 1) * 4;
	p[i >> 1] = (uint8_t)((p[i >> 1] & ~(0xfu << shift)) | (value << shift));
}

/* Payload bits per counter, for the size a too-large request would need. */
static double four_bits_per_cell(uint32_t hashes)
{
	(void)hashes;
	return 4.0;
}

/* Bytes of cells 4-bit counters, in whole 64-bit words. */
static uint64_t counting_payload_size(uint32_t hashes, uint64_t cells)
{
	(void)hashes;
	return (cells * 4 + 63) / 64 * 8;
}

/* Bits past the last counter must be zero. */
static amq_status counting_verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (!amq_tail_is_zero(f, f->cells * 4))
		return amq_not_a_filter(err, "%sbits set past the last counter", prefix);
	return AMQ_OK;
}

/* amq_bloom_size of a counting filter: the classic bits, one counter each. */
static const amq_bloom_shape counting_shape = {.size_bits = amq_classic_size};

/* Increments the item's counters, leaving saturated ones at 15. */
static amq_status counting_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	(void)err;
	uint64_t pos[AMQ_BLOOM_MAX_HASHES];
	amq_classic_positions(f, hash, pos);
	for (uint32_t i = 0; i < f->hashes; i++) {
		unsigned c = counter_get(f->payload, pos[i]);
		if (c < AMQ_COUNTING_MAX)
			counter_set(f->payload, pos[i], c + 1);
	}
	f->items = f->items == UINT64_MAX ? UINT64_MAX : f->items + 1;
	return AMQ_OK;
}

/* The smallest of the item's counters (0: certainly absent). */
static unsigned smallest_counter(const amq_filter *f, uint64_t hash)
{
	uint64_t pos[AMQ_BLOOM_MAX_HASHES];
	unsigned smallest = AMQ_COUNTING_MAX;
	amq_classic_positions(f, hash, pos);
	for (uint32_t i = 0; i < f->hashes && smallest > 0; i++) {
		unsigned c = counter_get(f->payload, pos[i]);
		smallest = c < smallest ? c : smallest;
	}
	return smallest;
}

/* False when a counter of hash is zero: certainly never added. */
static bool counting_contains(const amq_filter *f, uint64_t hash)
{
	return smallest_counter(f, hash) > 0;
}

/* The probe: counting_contains on every CPU (no vector path). */
static amq_probe counting_probe_for(const amq_filter *f)
{
	(void)f;
	return counting_contains;
}

/* Decrements the item's counters, except saturated ones; nothing when one
 * of them is zero (the value is certainly absent). */
static bool counting_remove(amq_filter *f, uint64_t hash)
{
	uint64_t pos[AMQ_BLOOM_MAX_HASHES];
	amq_classic_positions(f, hash, pos);
	for (uint32_t i = 0; i < f->hashes; i++)
		if (counter_get(f->payload, pos[i]) == 0)
			return false;
	for (uint32_t i = 0; i < f->hashes; i++) {
		unsigned c = counter_get(f->payload, pos[i]);
		if (c < AMQ_COUNTING_MAX)
			counter_set(f->payload, pos[i], c - 1);
	}
	if (f->items > 0)
		f->items--;
	return true;
}

/* The smallest counter; when even that one saturated, the filter's item
 * count, which no value's count can exceed. */
static uint64_t counting_frequency(const amq_filter *f, uint64_t hash)
{
	unsigned smallest = smallest_counter(f, hash);
	if (smallest < AMQ_COUNTING_MAX)
		return smallest;
	return f->items > AMQ_COUNTING_MAX ? f->items : AMQ_COUNTING_MAX;
}

/* Counters added, saturating at 15 (a saturated counter stays one), or the
 * smaller of each pair. */
static void counting_merge_cells(amq_filter *dst, const amq_filter *src, bool intersect)
{
	for (uint64_t i = 0; i < dst->cells; i++) {
		unsigned a = counter_get(dst->payload, i), b = counter_get(src->payload, i);
		unsigned merged = intersect ? (a < b ? a : b) : a + b;
		counter_set(dst->payload, i, merged > AMQ_COUNTING_MAX ? AMQ_COUNTING_MAX : merged);
	}
}

static amq_status counting_union(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return amq_bloom_merge(dst, src, false, counting_merge_cells, err);
}

static amq_status counting_intersect(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return amq_bloom_merge(dst, src, true, counting_merge_cells, err);
}

/* Counters that are non-zero, and that saturated. */
static void census(const amq_filter *f, uint64_t *nonzero, uint64_t *saturated)
{
	*nonzero = *saturated = 0;
	for (uint64_t i = 0; i < f->cells; i++) {
		unsigned c = counter_get(f->payload, i);
		*nonzero += c != 0;
		*saturated += c == AMQ_COUNTING_MAX;
	}
}

/* As for classic, with the non-zero counters as the set bits. */
static double counting_expected_fpr(const amq_filter *f)
{
	uint64_t nonzero, saturated;
	census(f, &nonzero, &saturated);
	return amq_all_set_chance((double)nonzero, (double)f->cells, f->hashes);
}

/* Distinct items from the non-zero counters: -(m/k) ln(1 - X/m). */
static double counting_estimate_items(const amq_filter *f)
{
	uint64_t nonzero, saturated;
	census(f, &nonzero, &saturated);
	double m = (double)f->cells, x = (double)nonzero;
	if (x >= m)
		x = m - 0.5;
	return -(m / f->hashes) * log1p(-x / m);
}

/* The JSON of bloom_info: counters, how many are set and saturated, estimates. */
static int counting_info(const amq_filter *f, char *out, size_t cap)
{
	uint64_t nonzero, saturated;
	census(f, &nonzero, &saturated);
	return snprintf(out, cap,
			"{\"kind\":\"bloom\",\"layout\":\"counting\",\"counters\":%llu,"
			"\"counter_bits\":4,\"hashes\":%u,\"items\":%llu,\"bytes\":%zu,"
			"\"counters_set\":%llu,\"counters_saturated\":%llu,"
			"\"estimated_items\":%.0f,\"expected_fpr\":%.6g,\"seed\":%llu,"
			"\"format_version\":%u}",
			(unsigned long long)f->cells, f->hashes, (unsigned long long)f->items,
			f->size, (unsigned long long)nonzero, (unsigned long long)saturated,
			counting_estimate_items(f), counting_expected_fpr(f),
			(unsigned long long)f->seed, amq_filter_format_version(f));
}

AMQ_VARIANT_ROW(amq_variant_bloom_counting) =
    AMQ_BLOOM_ROW(AMQ_LAYOUT_COUNTING, "counting", .format_version = 2, .cell_name = "counters",
		  .order_free = true, .counts_duplicates = true, .shape = &counting_shape,
		  .cell_bits = four_bits_per_cell, .payload_size = counting_payload_size,
		  .check_header = amq_classic_check_header, .verify = counting_verify,
		  .size = amq_classic_row_size, .add = counting_add, .contains = counting_contains,
		  .probe_for = counting_probe_for, .remove = counting_remove,
		  .frequency = counting_frequency, .union_into = counting_union,
		  .intersect_into = counting_intersect, .expected_fpr = counting_expected_fpr,
		  .estimate_items = counting_estimate_items, .info = counting_info);
