/*
 * bloom.c - the Bloom layouts of one bit per cell, classic and blocked (the
 * counting layout is in bloom_counting.c, scalable chains in
 * bloom_scalable.c), and the public amq_bloom_* calls of every layout.
 *
 * Classic: the k bit positions of an item come from its one 64-bit hash by
 * enhanced double hashing (Dillinger & Manolios 2004, after Kirsch &
 * Mitzenmacher): x = h1 mod m, y = h2 mod m, then x += y, y += i for each
 * further position. Positions are 64-bit, so filters past 2^32 bits use every
 * bit. A position equal to an earlier one of the same item moves on to the
 * next bit, so every item sets exactly k distinct bits (the sizing formulas
 * assume it). Blocked filters place their bits in bloom_blocked.c; union,
 * intersection, counts and estimates below serve classic and blocked, whose
 * rows end the file. The public amq_bloom_* calls of any layout dispatch
 * through the filter's row.
 */
#include "bloom/bloom_internal.h"

#include <math.h>
#include <stdio.h>

static inline bool bit_test(const uint8_t *bits, uint64_t p)
{
	return (bits[p >> 3] >> (p & 7)) & 1;
}

static inline void bit_set(uint8_t *bits, uint64_t p)
{
	bits[p >> 3] |= (uint8_t)(1u << (p & 7));
}

/* True when p is one of the first n positions already chosen. */
static inline bool already_chosen(const uint64_t *chosen, uint32_t n, uint64_t p)
{
	for (uint32_t j = 0; j < n; j++)
		if (chosen[j] == p)
			return true;
	return false;
}

/* Position x, or the next bit after it (wrapping at m) when one of the
 * first i positions chosen took it. */
static inline uint64_t distinct_position(const uint64_t *chosen, uint32_t i, uint64_t x, uint64_t m)
{
	while (already_chosen(chosen, i, x))
		x = x + 1 == m ? 0 : x + 1;
	return x;
}

/* The raw walk's x and y for the position after the i-th. */
static inline void classic_step(uint64_t *x, uint64_t *y, uint32_t i, uint64_t m)
{
	*x += *y;
	if (*x >= m)
		*x -= m;
	*y += i + 1;
	if (*y >= m)
		*y %= m;
}

/*
 * Walks the k distinct positions of an item in a classic filter of m bits.
 * With `set` it sets them all and returns true; otherwise it returns whether
 * all are set, stopping at the first clear one.
 */
static inline bool walk_classic(uint8_t *bits, uint64_t m, uint32_t k, uint64_t x, uint64_t y,
				bool set)
{
	uint64_t chosen[AMQ_BLOOM_MAX_HASHES];
	for (uint32_t i = 0; i < k; i++) {
		uint64_t p = chosen[i] = distinct_position(chosen, i, x, m);
		if (set)
			bit_set(bits, p);
		else if (!bit_test(bits, p))
			return false;
		classic_step(&x, &y, i, m);
	}
	return true;
}

/* Sets the positions of hash in a classic filter. */
static inline void add_classic(amq_filter *f, uint64_t hash)
{
	walk_classic(f->payload, f->cells, f->hashes, amq_reduce(hash, f->cells),
		     amq_reduce(amq_mix64(hash), f->cells), true);
}

/*
 * The classic membership test. Every raw position x_i of the walk is one of
 * the item's k distinct positions (a repeat of an earlier one stands for a
 * bit already chosen), so one clear bit among them answers "absent" exactly
 * as walk_classic would, without its duplicate checks. In a filter filled to
 * its capacity about half the bits are set, so whether the next bit is clear
 * is a coin toss, and a branch on it is mispredicted every other probe:
 * testing the bits in pairs and branching once per pair costs the fewest
 * cycles (2.5 pairs is about 12 ns per absent value on the machine of
 * docs/BENCHMARKS.md, against 20 ns bit by bit and 21 ns for all k with no
 * branch). A value whose raw bits are all set is present unless two raw
 * positions coincide; only then does it take the exact walk.
 */
static bool classic_contains(const amq_filter *f, uint64_t hash)
{
	const uint8_t *bits = f->payload;
	uint64_t m = f->cells;
	uint32_t k = f->hashes;
	uint64_t x = amq_reduce(hash, m), y = amq_reduce(amq_mix64(hash), m);
	uint64_t x0 = x, y0 = y, raw[AMQ_BLOOM_MAX_HASHES];
	unsigned all = 1;
	for (uint32_t i = 0; i < k; i++) {
		raw[i] = x;
		all &= bit_test(bits, x);
		if ((i & 1) == 1 && !all)
			return false;
		x += y;
		x -= x >= m ? m : 0;
		y += i + 1;
		if (y >= m)
			y %= m;
	}
	if (!all)
		return false;
	/* Distinct raw positions are the walk's positions, all set. */
	for (uint32_t i = 1; i < k; i++)
		if (already_chosen(raw, i, raw[i]))
			return walk_classic(f->payload, m, k, x0, y0, false);
	return true;
}

/* Through the row's add, which never grows the filter: a scalable chain's
 * stores past its capacity. A layout without single adds keeps none. */
void amq_bloom_add(amq_filter *f, uint64_t hash)
{
	const amq_variant *v = amq_variant_of(f);
	if (v->add != NULL)
		v->add(f, hash, NULL);
}

amq_status amq_bloom_check_compatible(const amq_filter *a, const amq_filter *b, amq_error *err)
{
	if (a->kind != AMQ_KIND_BLOOM || b->kind != AMQ_KIND_BLOOM)
		return amq_filter_expect(a->kind != AMQ_KIND_BLOOM ? a : b, AMQ_KIND_BLOOM, err);
	if (a->layout != b->layout || a->cells != b->cells || a->hashes != b->hashes ||
	    a->seed != b->seed)
		return amq_fail(err, AMQ_INCOMPATIBLE,
				"build both filters with the same capacity, fpr and layout",
				"cannot combine bloom filters with different parameters "
				"(%s %llu bits, %u hashes, seed %llu vs %s %llu bits, %u hashes, "
				"seed %llu)",
				amq_filter_layout_name(a), (unsigned long long)a->cells, a->hashes,
				(unsigned long long)a->seed, amq_filter_layout_name(b),
				(unsigned long long)b->cells, b->hashes,
				(unsigned long long)b->seed);
	return AMQ_OK;
}

amq_status amq_bloom_merge(amq_filter *dst, const amq_filter *src, bool intersect,
			   amq_bloom_merge_cells merge_cells, amq_error *err)
{
	amq_status st = amq_bloom_check_compatible(dst, src, err);
	if (st != AMQ_OK)
		return st;
	merge_cells(dst, src, intersect);
	dst->items = amq_bloom_merged_items(dst->items, src->items, intersect);
	return AMQ_OK;
}

/* dst &= src or dst |= src for the classic and blocked rows. */
static void bits_merge_cells(amq_filter *dst, const amq_filter *src, bool intersect)
{
	if (intersect)
		for (uint64_t i = 0; i < dst->payload_size; i++)
			dst->payload[i] &= src->payload[i];
	else
		for (uint64_t i = 0; i < dst->payload_size; i++)
			dst->payload[i] |= src->payload[i];
}

static amq_status bits_union(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return amq_bloom_merge(dst, src, false, bits_merge_cells, err);
}

static amq_status bits_intersect(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return amq_bloom_merge(dst, src, true, bits_merge_cells, err);
}

/* Set bits among payload bytes [from, from + len); len is a multiple of 8. */
static uint64_t popcount_range(const uint8_t *p, uint64_t len)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < len; i += 8)
		n += (uint64_t)__builtin_popcountll(amq_load64le(p + i));
	return n;
}

uint64_t amq_bloom_bits_set(const amq_filter *f)
{
	return popcount_range(f->payload, f->payload_size);
}

double amq_bits_estimate_items(const amq_filter *f)
{
	double m = (double)f->cells, x = (double)amq_bloom_bits_set(f);
	if (x >= m) /* saturated: report the largest finite estimate */
		x = m - 0.5;
	return -(m / f->hashes) * log1p(-x / m);
}

double amq_all_set_chance(double set, double space, uint32_t k)
{
	double p = 1.0;
	for (uint32_t j = 0; j < k; j++)
		p *= set > j ? (set - j) / (space - j) : 0.0;
	return p;
}

/* The classic rate: k distinct bits out of m all among the set ones. */
static double classic_expected_fpr(const amq_filter *f)
{
	return amq_all_set_chance((double)amq_bloom_bits_set(f), (double)f->cells, f->hashes);
}

double amq_blocked_expected_fpr(const amq_filter *f)
{
	uint64_t blocks = f->cells / AMQ_BLOCK_BITS;
	double sum = 0.0;
	for (uint64_t b = 0; b < blocks; b++) {
		uint64_t set = popcount_range(f->payload + b * AMQ_BLOCK_BYTES, AMQ_BLOCK_BYTES);
		sum += amq_all_set_chance((double)set, AMQ_BLOCK_BITS, f->hashes);
	}
	return sum / (double)blocks;
}

void amq_classic_positions(const amq_filter *f, uint64_t hash, uint64_t *out)
{
	uint64_t m = f->cells, x = amq_reduce(hash, m), y = amq_reduce(amq_mix64(hash), m);
	for (uint32_t i = 0; i < f->hashes; i++) {
		out[i] = distinct_position(out, i, x, m);
		classic_step(&x, &y, i, m);
	}
}

/* ---- the classic and blocked rows of the variant registry ---- */

static double one_bit_per_cell(uint32_t hashes)
{
	(void)hashes;
	return 1.0;
}

static uint64_t classic_payload_size(uint32_t hashes, uint64_t cells)
{
	(void)hashes;
	return (cells + 63) / 64 * 8;
}

static uint64_t blocked_payload_size(uint32_t hashes, uint64_t cells)
{
	(void)hashes;
	return cells % AMQ_BLOCK_BITS == 0 ? cells / 8 : 0;
}

amq_status amq_bloom_check_hashes(const amq_filter *f, uint32_t max_hashes, const char *prefix,
				  amq_error *err)
{
	if (f->hashes < 1 || f->hashes > max_hashes || f->hashes > f->cells)
		return amq_not_a_filter(err, "%s%u hash functions for %llu bits", prefix, f->hashes,
					(unsigned long long)f->cells);
	return AMQ_OK;
}

amq_status amq_classic_check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	return amq_bloom_check_hashes(f, AMQ_BLOOM_MAX_HASHES, prefix, err);
}

static amq_status blocked_check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	return amq_bloom_check_hashes(f, AMQ_BLOOM_BLOCKED_MAX_HASHES, prefix, err);
}

/* Bits past the last of the m bits must be zero. */
static amq_status bits_verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (!amq_tail_is_zero(f, f->cells))
		return amq_not_a_filter(err, "%sbits set past the end of the filter", prefix);
	return AMQ_OK;
}

amq_status amq_classic_row_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
				amq_error *err)
{
	return amq_classic_size(capacity, fpr, cells, hashes, err);
}

static amq_status blocked_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
			       amq_error *err)
{
	return amq_blocked_size(capacity, fpr, cells, hashes, err);
}

static const amq_bloom_shape classic_shape = {.size_bits = amq_classic_size};
static const amq_bloom_shape blocked_shape = {.size_bits = amq_blocked_size};

/* Blocked is the default Bloom layout at every fpr: one cache line per probe. */
static double always_default(double fpr)
{
	(void)fpr;
	return 0.0;
}

static amq_status classic_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	(void)err;
	add_classic(f, hash);
	f->items++;
	return AMQ_OK;
}

static amq_status blocked_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	(void)err;
	amq_blocked_add(f, hash);
	f->items++;
	return AMQ_OK;
}

static amq_probe classic_probe_for(const amq_filter *f)
{
	(void)f;
	return classic_contains;
}

static amq_probe blocked_probe_for(const amq_filter *f)
{
	(void)f;
	return amq_blocked_probe();
}

/* The blocked test through the fastest probe, for the row's contains. */
static bool blocked_contains(const amq_filter *f, uint64_t hash)
{
	return amq_blocked_probe()(f, hash);
}

static int bits_info(const amq_filter *f, char *out, size_t cap)
{
	return snprintf(out, cap,
			"{\"kind\":\"bloom\",\"layout\":\"%s\",\"bits\":%llu,\"hashes\":%u,"
			"\"items\":%llu,\"bytes\":%zu,\"bits_set\":%llu,\"estimated_items\":%.0f,"
			"\"expected_fpr\":%.6g,\"seed\":%llu,\"format_version\":%u}",
			amq_filter_layout_name(f), (unsigned long long)f->cells, f->hashes,
			(unsigned long long)f->items, f->size,
			(unsigned long long)amq_bloom_bits_set(f), amq_bits_estimate_items(f),
			amq_filter_expected_fpr(f), (unsigned long long)f->seed,
			amq_filter_format_version(f));
}

/* What the classic and blocked rows share: one bit per cell, checked,
 * combined and described alike. */
#define BITS_ROW_COMMON                                                                            \
	.format_version = 1, .cell_name = "bits", .order_free = true,                              \
	.cell_bits = one_bit_per_cell, .verify = bits_verify, .union_into = bits_union,            \
	.intersect_into = bits_intersect, .estimate_items = amq_bits_estimate_items,               \
	.info = bits_info

AMQ_VARIANT_ROW(amq_variant_bloom_classic) =
    AMQ_BLOOM_ROW(AMQ_LAYOUT_CLASSIC, "classic", BITS_ROW_COMMON, .shape = &classic_shape,
		  .payload_size = classic_payload_size, .check_header = amq_classic_check_header,
		  .size = amq_classic_row_size, .add = classic_add, .contains = classic_contains,
		  .probe_for = classic_probe_for, .expected_fpr = classic_expected_fpr);

AMQ_VARIANT_ROW(amq_variant_bloom_blocked) = AMQ_BLOOM_ROW(
    AMQ_LAYOUT_BLOCKED, "blocked", BITS_ROW_COMMON, .default_cost = always_default,
    .shape = &blocked_shape, .payload_size = blocked_payload_size,
    .check_header = blocked_check_header, .size = blocked_size, .add = blocked_add,
    .contains = blocked_contains, .probe_for = blocked_probe_for,
    .contains_many = amq_blocked_contains_many, .expected_fpr = amq_blocked_expected_fpr);
