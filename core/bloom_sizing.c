/*
 * bloom_sizing.c - how many bits and hashes a Bloom filter needs.
 *
 * Classic uses the textbook formulas: m = ceil(-n ln p / (ln 2)^2) and
 * k = round((m / n) ln 2), clamped to [1, 30]. A blocked filter needs more
 * bits for the same rate, because items fall unevenly into blocks: its rate is
 * the Poisson mixture over block loads of the rate inside one 512-bit block,
 * and we search for the fewest blocks (and the best k for them) whose rate
 * meets the request. docs/FORMAT.md shows the resulting bits per item.
 */
#include "internal.h"

#include <math.h>

#define BLOCK_BITS 512.0
#define MAX_BLOCKS (((uint64_t)AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES) / 64)

double amq_blocked_fpr(double bits_per_item, uint32_t k)
{
	/* Items per block ~ Poisson(lambda); a block holding i items has each
	 * bit clear with probability (1 - k/B)^i, and a query needs k set bits. */
	double lambda = BLOCK_BITS / bits_per_item;
	double clear_one = 1.0 - k / BLOCK_BITS;
	double spread = 12.0 * sqrt(lambda) + 12.0;
	uint64_t lo = lambda > spread ? (uint64_t)(lambda - spread) : 0;
	uint64_t hi = (uint64_t)(lambda + spread);
	double fpr = 0.0;
	for (uint64_t i = lo; i <= hi; i++) {
		double log_pmf = -lambda + (double)i * log(lambda) - lgamma((double)i + 1.0);
		double set = 1.0 - pow(clear_one, (double)i);
		fpr += exp(log_pmf) * pow(set, (double)k);
	}
	return fpr;
}

/* The best rate over k for a blocked filter of `blocks` blocks holding n items. */
static double blocked_best(uint64_t n, uint64_t blocks, uint32_t *best_k)
{
	double bits_per_item = (double)blocks * BLOCK_BITS / (double)n;
	double best = 2.0;
	for (uint32_t k = 1; k <= AMQ_BLOOM_MAX_HASHES; k++) {
		double fpr = amq_blocked_fpr(bits_per_item, k);
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

amq_status amq_bloom_size(uint64_t capacity, double fpr, amq_layout layout, uint64_t *bits,
                          uint32_t *hashes, amq_error *err)
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
	if (layout == AMQ_LAYOUT_CLASSIC)
		return AMQ_OK;

	/* Blocked: at least the classic bits; double until the rate is met,
	 * then bisect for the fewest blocks. */
	uint64_t lo = (*bits + 511) / 512, hi = lo;
	uint32_t k_hi = 1, k_mid = 1;
	while (blocked_best(capacity, hi, &k_hi) > fpr) {
		if (hi >= MAX_BLOCKS)
			return too_large((double)hi * 2.0 * 64.0 + AMQ_HEADER_BYTES, err);
		lo = hi;
		hi = hi * 2 > MAX_BLOCKS ? MAX_BLOCKS : hi * 2;
	}
	/* Invariant: hi meets the rate; lo does not, unless lo == hi. */
	while (lo + 1 < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (blocked_best(capacity, mid, &k_mid) <= fpr) {
			hi = mid;
			k_hi = k_mid;
		} else {
			lo = mid;
		}
	}
	*bits = hi * 512;
	*hashes = k_hi;
	return AMQ_OK;
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

amq_status amq_bloom_create_exact(amq_filter *f, amq_layout layout, uint64_t bits, uint32_t hashes,
                                  uint64_t seed, const amq_allocator *a, amq_error *err)
{
	if (layout != AMQ_LAYOUT_CLASSIC && layout != AMQ_LAYOUT_BLOCKED)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "use 'classic' or 'blocked'",
		                "unknown bloom layout %d", (int)layout);
	if (hashes < 1 || hashes > AMQ_BLOOM_MAX_HASHES || bits < hashes)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "use 1 to 30 hashes and at least as many bits",
		                "cannot build a bloom filter of %llu bits with %u hashes",
		                (unsigned long long)bits, hashes);
	if (layout == AMQ_LAYOUT_BLOCKED && bits % 512 != 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT, "use a multiple of 512 bits",
		                "a blocked bloom filter cannot have %llu bits",
		                (unsigned long long)bits);
	return amq_filter_allocate(f, AMQ_KIND_BLOOM, layout, hashes, seed, bits, a, err);
}
