/*
 * bloom_sizing.c - how many bits and hashes a Bloom filter needs.
 *
 * Classic uses the textbook formulas: m = ceil(-n ln p / (ln 2)^2) and
 * k = round((m / n) ln 2), clamped to [1, 30]. A blocked filter needs more
 * bits for the same rate, because items fall unevenly into blocks: its rate
 * is computed exactly for Poisson arrivals (amq_blocked_fpr), and we search
 * for the fewest blocks, with the best k, whose rate meets the request.
 * docs/FORMAT.md shows the resulting bits per item.
 */
#include "bloom/bloom_internal.h"

#include <math.h>

#define MAX_BLOCKS (((uint64_t)AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES) / AMQ_BLOCK_BYTES)

/*
 * Items reaching one block are Poisson(lambda); with the block's eight words
 * each item's start word w is uniform, so the items starting at offset d from
 * the query's start word are independent Poisson(lambda/8). An item starting
 * at d sets one random bit (chance 1/64 to be the query's) in query word t
 * iff (t - d) mod 8 < k. By inclusion-exclusion over the set S of query bits
 * required clear:
 *   fpr = sum_S (-1)^|S| prod_d exp(-(lambda/8)(1 - (63/64)^c_d(S)))
 *       = sum_S (-1)^|S| exp(-(lambda/8) e(S)),  e(S) = sum_d 1 - (63/64)^c_d(S)
 * where c_d(S) counts the words of S an item starting at d touches. e(S)
 * does not depend on lambda: blocked_exponents computes it for every S once,
 * and the sizing search, which evaluates the rate for many loads, reuses it.
 */

/* e(S) for each of the 2^k sets S of k query bits, into exponents: c_d(S)
 * is the count of S's words among those an item starting at d reaches. */
static void blocked_exponents(uint32_t k, double *exponents)
{
	double miss[AMQ_BLOOM_BLOCKED_MAX_HASHES + 1]; /* (63/64)^c */
	unsigned reach[8]; /* query words t with (t - d) mod 8 < k, as bits */
	for (unsigned c = 0; c <= k; c++)
		miss[c] = pow(63.0 / 64.0, (double)c);
	for (unsigned d = 0; d < 8; d++) {
		reach[d] = 0;
		for (unsigned t = 0; t < k; t++)
			reach[d] |= (unsigned)(((t - d) & 7) < k) << t;
	}
	for (unsigned set = 0; set < (1u << k); set++) {
		double exponent = 0.0;
		for (unsigned d = 0; d < 8; d++)
			exponent += 1.0 - miss[__builtin_popcount(set & reach[d])];
		exponents[set] = exponent;
	}
}

/* The rate for bits_per_item and k hashes, given k's exponents. */
static double blocked_fpr_with(double bits_per_item, uint32_t k, const double *exponents)
{
	double lambda = AMQ_BLOCK_BITS / bits_per_item;
	double fpr = 0.0;
	for (unsigned set = 0; set < (1u << k); set++) {
		double term = exp(-lambda / 8.0 * exponents[set]);
		fpr += __builtin_popcount(set) % 2 ? -term : term;
	}
	return fpr;
}

double amq_blocked_fpr(double bits_per_item, uint32_t k)
{
	double exponents[1u << AMQ_BLOOM_BLOCKED_MAX_HASHES];
	blocked_exponents(k, exponents);
	return blocked_fpr_with(bits_per_item, k, exponents);
}

/* The exponents of every k from 1 to AMQ_BLOOM_BLOCKED_MAX_HASHES: k's
 * 2^k sets start at offset 2^k - 2. */
typedef struct blocked_table {
	double exponents[(2u << AMQ_BLOOM_BLOCKED_MAX_HASHES) - 2];
} blocked_table;

static void blocked_table_init(blocked_table *table)
{
	for (uint32_t k = 1; k <= AMQ_BLOOM_BLOCKED_MAX_HASHES; k++)
		blocked_exponents(k, table->exponents + (1u << k) - 2);
}

/* The best rate over k for a blocked filter of `blocks` blocks holding n items. */
static double blocked_best(const blocked_table *table, uint64_t n, uint64_t blocks,
			   uint32_t *best_k)
{
	double bits_per_item = (double)blocks * AMQ_BLOCK_BITS / (double)n;
	double best = 2.0;
	for (uint32_t k = 1; k <= AMQ_BLOOM_BLOCKED_MAX_HASHES; k++) {
		double fpr = blocked_fpr_with(bits_per_item, k, table->exponents + (1u << k) - 2);
		if (fpr < best) {
			best = fpr;
			*best_k = k;
		}
	}
	return best;
}

/* The same words amq_check_size uses, for sizes past what it can compute. */
static amq_status too_large(double bytes, amq_error *err)
{
	return amq_fail(err, AMQ_TOO_LARGE, "lower the capacity or raise the fpr",
			"bloom filter would need %.0f bytes, more than the 1 GiB limit", bytes);
}

amq_status amq_classic_size(uint64_t capacity, double fpr, uint64_t *bits, uint32_t *hashes,
			    amq_error *err)
{
	amq_status st = amq_check_fpr(fpr, err);
	if (st == AMQ_OK)
		st = amq_check_capacity(capacity > INT64_MAX ? -1 : (int64_t)capacity, err);
	if (st != AMQ_OK)
		return st;

	double n = (double)capacity;
	double m = ceil(-n * log(fpr) / (M_LN2 * M_LN2));
	if (m / 8.0 > (double)(AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES))
		return too_large(ceil(m / 64.0) * 8.0 + AMQ_HEADER_BYTES, err);
	double k = round(m / n * M_LN2);
	*bits = (uint64_t)m;
	*hashes = k < 1 ? 1 : k > AMQ_BLOOM_MAX_HASHES ? AMQ_BLOOM_MAX_HASHES : (uint32_t)k;
	return AMQ_OK;
}

amq_status amq_blocked_size(uint64_t capacity, double fpr, uint64_t *bits, uint32_t *hashes,
			    amq_error *err)
{
	amq_status st = amq_classic_size(capacity, fpr, bits, hashes, err);
	if (st != AMQ_OK)
		return st;

	/* At least the classic bits; double until the rate is met, then
	 * bisect for the fewest blocks. */
	uint64_t lo = (*bits + AMQ_BLOCK_BITS - 1) / AMQ_BLOCK_BITS, hi = lo;
	uint32_t k_hi = 1, k_mid = 1;
	blocked_table table;
	blocked_table_init(&table);
	while (blocked_best(&table, capacity, hi, &k_hi) > fpr) {
		if (hi >= MAX_BLOCKS)
			return too_large((double)hi * 2.0 * 64.0 + AMQ_HEADER_BYTES, err);
		lo = hi;
		hi = hi * 2 > MAX_BLOCKS ? MAX_BLOCKS : hi * 2;
	}
	/* Invariant: hi meets the rate; lo does not, unless lo == hi. */
	while (lo + 1 < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (blocked_best(&table, capacity, mid, &k_mid) <= fpr) {
			hi = mid;
			k_hi = k_mid;
		} else {
			lo = mid;
		}
	}
	*bits = hi * AMQ_BLOCK_BITS;
	*hashes = k_hi;
	return AMQ_OK;
}

/* The sizing of the layout's row (its shape); a layout no Bloom row has is
 * sized as classic, and amq_bloom_create_exact then refuses it. A row without
 * a bit array (dleft) gives its own cells and hashes (its size). */
amq_status amq_bloom_size(uint64_t capacity, double fpr, amq_layout layout, uint64_t *bits,
			  uint32_t *hashes, amq_error *err)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_BLOOM, layout);
	if (v == NULL)
		return amq_classic_size(capacity, fpr, bits, hashes, err);
	if (v->shape == NULL)
		return v->size(capacity, fpr, hashes, bits, err);
	const amq_bloom_shape *shape = v->shape;
	return shape->size_bits(capacity, fpr, bits, hashes, err);
}

amq_status amq_bloom_create(amq_filter *f, uint64_t capacity, double fpr, amq_layout layout,
			    uint64_t seed, const amq_allocator *a, amq_error *err)
{
	uint64_t bits;
	uint32_t hashes;
	amq_status st = amq_bloom_size(capacity, fpr, layout, &bits, &hashes, err);
	if (st != AMQ_OK)
		return st;
	return amq_bloom_create_exact(f, layout, bits, hashes, seed, a, err);
}

/* Whether a Bloom filter of layout with exactly bits and hashes can be built
 * by amq_bloom_create_exact (the header rules of the layout decide). */
static amq_status check_exact(amq_layout layout, uint64_t bits, uint32_t hashes, amq_error *err)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_BLOOM, layout);
	if (v == NULL || v->create != NULL)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "use 'classic', 'blocked' or 'counting'",
				"unknown bloom layout %d", (int)layout);
	amq_filter h = {.kind = AMQ_KIND_BLOOM, .layout = layout, .hashes = hashes, .cells = bits};
	if (v->check_header(&h, "", NULL) != AMQ_OK ||
	    amq_payload_size(AMQ_KIND_BLOOM, layout, hashes, bits) == 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"use 1 to 30 hashes (8 when blocked), at least as many bits, and a "
				"multiple of 512 bits when blocked",
				"cannot build a %s bloom filter of %llu bits with %u hashes",
				v->layout_name, (unsigned long long)bits, hashes);
	return AMQ_OK;
}

amq_status amq_bloom_create_exact(amq_filter *f, amq_layout layout, uint64_t bits, uint32_t hashes,
				  uint64_t seed, const amq_allocator *a, amq_error *err)
{
	amq_status st = check_exact(layout, bits, hashes, err);
	if (st != AMQ_OK)
		return st;
	return amq_filter_allocate(f, AMQ_KIND_BLOOM, layout, hashes, seed, bits, a, err);
}
