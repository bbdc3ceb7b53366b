/*
 * test_bloom.c - Bloom filters, both layouts: measured false-positive rates
 * against the request, the textbook FPR table, sizing, distinct bit
 * positions, set operations, estimates, and filters past 2^32 bits.
 */
#include "amq.h"
#include "bloom/bloom_internal.h"
#include "cuckoo/cuckoo_table.h"
#include "check.h"
#include "format/variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef AMQ_SANITIZED
#define SCALE 10 /* sanitizer builds run the same checks on 1/10 the items */
#else
#define SCALE 1
#endif

static const amq_allocator *A = &amq_malloc_allocator;

/* Adds n values, probes n others; returns the measured FPR (and counts misses). */
static double measure(amq_filter *f, uint64_t n, uint64_t *false_negatives)
{
	for (uint64_t i = 0; i < n; i++)
		amq_bloom_add(f, amq_hash_int((int64_t)i, f->seed));
	*false_negatives = 0;
	for (uint64_t i = 0; i < n; i++)
		*false_negatives += !amq_filter_contains(f, amq_hash_int((int64_t)i, f->seed));
	uint64_t fp = 0;
	for (uint64_t i = n; i < 2 * n; i++)
		fp += amq_filter_contains(f, amq_hash_int((int64_t)i, f->seed));
	return (double)fp / (double)n;
}

static void measured_fpr(amq_layout layout, const char *name)
{
	const double rates[] = {0.1, 0.01, 0.001};
	uint64_t n = 1000000 / SCALE;
	for (int r = 0; r < 3; r++) {
		amq_filter f;
		amq_error err;
		CHECK(amq_bloom_create(&f, n, rates[r], layout, 0, A, &err) == AMQ_OK, "%s",
		      err.message);
		uint64_t misses;
		double fpr = measure(&f, n, &misses);
		double bpi = (double)f.cells / (double)n;
		printf("%s p=%g: measured fpr %.5f (%.3f x p), %.2f bits/item, k=%u\n", name,
		       rates[r], fpr, fpr / rates[r], bpi, f.hashes);
		CHECK(misses == 0, "%s p=%g: %llu false negatives", name, rates[r],
		      (unsigned long long)misses);
		CHECK(fpr <= 1.15 * rates[r], "%s p=%g: measured %.5f", name, rates[r], fpr);
		if (layout == AMQ_LAYOUT_CLASSIC) {
			double theory = 1.44 * log2(1.0 / rates[r]);
			CHECK(fabs(bpi / theory - 1.0) < 0.02, "classic bits/item %.3f vs %.3f",
			      bpi, theory);
		}
		double expected = amq_filter_expected_fpr(&f);
		CHECK(fabs(expected / fpr - 1.0) < 0.25, "%s expected_fpr %.5f vs measured %.5f",
		      name, expected, fpr);
		double est = amq_filter_estimate_items(&f);
		CHECK(fabs(est / (double)n - 1.0) < 0.05, "%s estimate %.0f for %llu", name, est,
		      (unsigned long long)n);
		amq_filter_free(&f, A);
	}
}

/* The classic table of (1 - e^{-kn/m})^k, reproduced within 10%. */
static void seed_table(void)
{
	const struct {
		unsigned bits_per_item, k;
		double fpr;
	} table[] = {{4, 3, 0.147},    {6, 4, 0.0561},	 {8, 6, 0.0216},
		     {10, 7, 0.00819}, {12, 8, 0.00314}, {16, 11, 0.000458}};
	uint64_t n = 1000000 / SCALE;
	for (int t = 0; t < 6; t++) {
		amq_filter f;
		amq_error err;
		CHECK(amq_bloom_create_exact(&f, AMQ_LAYOUT_CLASSIC, n * table[t].bits_per_item,
					     table[t].k, 0, A, &err) == AMQ_OK,
		      "%s", err.message);
		uint64_t misses;
		double fpr = measure(&f, n, &misses);
		printf("table m/n=%u k=%u: measured %.5f, table %.5f\n", table[t].bits_per_item,
		       table[t].k, fpr, table[t].fpr);
		CHECK(misses == 0, "table row %d false negatives", t);
		double tolerance = SCALE == 1 ? 0.10 : 0.25;
		CHECK(fabs(fpr / table[t].fpr - 1.0) <= tolerance, "m/n=%u k=%u: %.5f vs %.5f",
		      table[t].bits_per_item, table[t].k, fpr, table[t].fpr);
		amq_filter_free(&f, A);
	}
}

static void sizing(void)
{
	uint64_t bits;
	uint32_t k;
	amq_error err;
	CHECK(amq_bloom_size(1000, 0.01, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) == AMQ_OK, "size");
	CHECK(bits == 9586 && k == 7, "n=1000 p=0.01: %llu bits %u hashes",
	      (unsigned long long)bits, k);
	CHECK(amq_bloom_size(1000000, 0.001, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) == AMQ_OK,
	      "size");
	CHECK(bits == 14377588 && k == 10, "n=1M p=0.001: %llu bits %u hashes",
	      (unsigned long long)bits, k);
	CHECK(amq_bloom_size(1, 1e-300, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) == AMQ_OK && k == 30,
	      "k is clamped to 30 (got %u)", k);
	CHECK(amq_bloom_size(1000, 0.01, AMQ_LAYOUT_BLOCKED, &bits, &k, &err) == AMQ_OK &&
		  bits % 512 == 0 && bits > 9586,
	      "blocked needs more bits, in whole blocks (%llu)", (unsigned long long)bits);
	CHECK(amq_bloom_size(1000, 0.0, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) ==
		  AMQ_INVALID_ARGUMENT,
	      "fpr 0 rejected");
	CHECK(strcmp(err.message, "fpr must be between 0 and 1 (exclusive), got 0") == 0, "%s",
	      err.message);
	CHECK(amq_bloom_size(1000, NAN, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) ==
		  AMQ_INVALID_ARGUMENT,
	      "fpr NaN rejected");
	CHECK(amq_bloom_size(1000, 1.0, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) ==
		  AMQ_INVALID_ARGUMENT,
	      "fpr 1 rejected");
	CHECK(amq_bloom_size(0, 0.01, AMQ_LAYOUT_CLASSIC, &bits, &k, &err) == AMQ_INVALID_ARGUMENT,
	      "capacity 0 rejected");
	CHECK(strcmp(err.message, "capacity must be at least 1, got 0") == 0, "%s", err.message);
	amq_filter f;
	CHECK(amq_bloom_create(&f, 2000000000000ULL, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err) ==
		  AMQ_TOO_LARGE,
	      "a 2.4 TB filter is refused");
	CHECK(strcmp(err.message,
		     "bloom filter would need 2396264594408 bytes, more than the 1 GiB "
		     "limit") == 0,
	      "%s", err.message);
	CHECK(amq_bloom_create(&f, 880000000ULL, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err) ==
		  AMQ_TOO_LARGE,
	      "blocked too large refused: %s", err.message);
}

/* Every item sets exactly k distinct bits, even when positions collide. */
static void distinct_positions(void)
{
	const struct {
		amq_layout layout;
		uint64_t bits;
		uint32_t k;
	} cases[] = {{AMQ_LAYOUT_CLASSIC, 30, 30},
		     {AMQ_LAYOUT_CLASSIC, 64, 30},
		     {AMQ_LAYOUT_CLASSIC, 9586, 7},
		     {AMQ_LAYOUT_BLOCKED, 512, 8},
		     {AMQ_LAYOUT_BLOCKED, 5120, 8}};
	for (int c = 0; c < 5; c++) {
		int wrong = 0;
		for (int64_t v = 0; v < 2000; v++) {
			amq_filter f;
			amq_error err;
			if (amq_bloom_create_exact(&f, cases[c].layout, cases[c].bits, cases[c].k,
						   0, A, &err) != AMQ_OK)
				break;
			amq_bloom_add(&f, amq_hash_int(v, 0));
			wrong += amq_bloom_bits_set(&f) != cases[c].k;
			amq_filter_free(&f, A);
		}
		CHECK(wrong == 0, "case %d: %d items set fewer than k bits", c, wrong);
	}
}

static void set_operations(void)
{
	amq_filter a, b, c;
	amq_error err;
	amq_bloom_create(&a, 10000, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	amq_bloom_create(&b, 10000, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	for (int64_t i = 0; i < 6000; i++)
		amq_bloom_add(&a, amq_hash_int(i, 0));
	for (int64_t i = 4000; i < 10000; i++)
		amq_bloom_add(&b, amq_hash_int(i, 0));
	amq_filter_clone(&c, &a, A, &err);
	CHECK(amq_filter_union_into(&c, &b, &err) == AMQ_OK, "union");
	int missing = 0;
	for (int64_t i = 0; i < 10000; i++)
		missing += !amq_filter_contains(&c, amq_hash_int(i, 0));
	CHECK(missing == 0, "union lost %d items", missing);
	CHECK(c.items == 12000, "union items %llu", (unsigned long long)c.items);
	double est = amq_filter_estimate_items(&c);
	CHECK(fabs(est - 10000) < 300, "union estimate %.0f for 10000 distinct", est);
	amq_filter_free(&c, A);

	amq_filter_clone(&c, &a, A, &err);
	CHECK(amq_filter_intersect_into(&c, &b, &err) == AMQ_OK, "intersect");
	missing = 0;
	for (int64_t i = 4000; i < 6000; i++)
		missing += !amq_filter_contains(&c, amq_hash_int(i, 0));
	CHECK(missing == 0, "intersection lost %d common items", missing);
	int outside = 0;
	for (int64_t i = 100000; i < 200000; i++)
		outside += amq_filter_contains(&c, amq_hash_int(i, 0));
	CHECK(outside < 1000, "intersection answers %d of 100000 absent values", outside);
	CHECK(c.items == 6000, "intersection items %llu", (unsigned long long)c.items);
	amq_filter_free(&c, A);

	amq_filter other;
	amq_bloom_create(&other, 20000, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	CHECK(amq_filter_union_into(&a, &other, &err) == AMQ_INCOMPATIBLE, "mismatched m refused");
	CHECK(strcmp(err.message, "cannot combine bloom filters with different parameters (classic "
				  "95851 bits, 7 hashes, seed 0 vs classic 191702 bits, 7 hashes, "
				  "seed 0)") == 0,
	      "%s", err.message);
	CHECK(strcmp(err.hint, "build both filters with the same capacity, fpr and layout") == 0,
	      "%s", err.hint);
	amq_filter_free(&other, A);
	amq_bloom_create(&other, 10000, 0.01, AMQ_LAYOUT_CLASSIC, 5, A, &err);
	CHECK(amq_filter_intersect_into(&a, &other, &err) == AMQ_INCOMPATIBLE, "mismatched seed");
	amq_filter_free(&other, A);
	amq_filter cuckoo;
	amq_cuckoo_create(&cuckoo, AMQ_LAYOUT_CLASSIC, 100, 0.01, 0, A, &err);
	CHECK(amq_filter_union_into(&a, &cuckoo, &err) == AMQ_WRONG_KIND, "cuckoo refused");
	CHECK(strcmp(err.message, "expected a bloom filter, got a cuckoo filter") == 0, "%s",
	      err.message);
	amq_filter_free(&cuckoo, A);
	amq_filter_free(&a, A);
	amq_filter_free(&b, A);
}

/* Positions are 64-bit: a filter of more than 2^32 bits uses its upper half. */
static void beyond_32_bits(void)
{
#ifndef AMQ_SANITIZED
	amq_filter f;
	amq_error err;
	uint64_t bits = ((uint64_t)1 << 32) + 12345;
	CHECK(amq_bloom_create_exact(&f, AMQ_LAYOUT_CLASSIC, bits, 7, 0, A, &err) == AMQ_OK, "%s",
	      err.message);
	for (int64_t i = 0; i < 100000; i++)
		amq_bloom_add(&f, amq_hash_int(i, 0));
	uint64_t upper = 0;
	for (uint64_t byte = ((uint64_t)1 << 29); byte < f.payload_size; byte++)
		upper += (uint64_t)__builtin_popcount(f.payload[byte]);
	CHECK(upper > 0 && upper < 700000, "bits set above 2^32: %llu", (unsigned long long)upper);
	int missing = 0;
	for (int64_t i = 0; i < 100000; i++)
		missing += !amq_filter_contains(&f, amq_hash_int(i, 0));
	CHECK(missing == 0, "%d false negatives past 2^32", missing);
	amq_filter_free(&f, A);
#endif
}

/* amq_filter_bytes names the size amq_filter_create then makes, for every
 * row of the registry that does not grow, and refuses what it refuses. */
static void create_bytes_match(void)
{
	const uint64_t capacities[] = {1, 1000, 123457, 4000000};
	const double rates[] = {0.3, 0.01, 0.0001};
	amq_error err;
	size_t bytes;
	for (size_t v = 0; v < amq_variant_count(); v++) {
		const amq_variant *row = amq_variant_at(v);
		if (row->add_grow != NULL) {
			CHECK(amq_filter_bytes(row->kind, row->layout, 1000, 0.01, &bytes, &err) ==
				  AMQ_INVALID_ARGUMENT,
			      "%s: a growing layout has no fixed size: %s", row->layout_name,
			      err.message);
			continue;
		}
		for (int c = 0; c < 4; c++)
			for (int r = 0; r < 3; r++) {
				amq_filter f;
				amq_status named = amq_filter_bytes(
				    row->kind, row->layout, capacities[c], rates[r], &bytes, &err);
				amq_status made =
				    amq_filter_create(&f, row->kind, row->layout, capacities[c],
						      rates[r], 0, A, &err);
				CHECK(named == made && (made != AMQ_OK || f.size == bytes),
				      "%s %s, n %llu, p %g: %zu bytes named", row->layout_name,
				      row->kind_name, (unsigned long long)capacities[c], rates[r],
				      bytes);
				if (made == AMQ_OK)
					amq_filter_free(&f, A);
			}
	}
	CHECK(amq_filter_bytes(AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 2000000000000ULL, 0.01, &bytes,
			       &err) == AMQ_TOO_LARGE,
	      "a 2.4 TB filter is refused");
}

int main(void)
{
	sizing();
	create_bytes_match();
	distinct_positions();
	set_operations();
	seed_table();
	measured_fpr(AMQ_LAYOUT_CLASSIC, "classic");
	measured_fpr(AMQ_LAYOUT_BLOCKED, "blocked");
	beyond_32_bits();
	return check_summary();
}
