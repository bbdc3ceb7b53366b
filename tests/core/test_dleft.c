/*
 * test_dleft.c - the d-left counting Bloom filter (layout 'dleft'): its
 * sizing and bytes against the counting layout; the measured fpr at capacity
 * at 1% and 0.1%; long random sequences of adds and deletes of added values,
 * repeats and saturation included, with no false negative and no frequency
 * below the truth; the permutations (one fingerprint, d invertible maps, so
 * a delete never takes another value's cell); a full bucket refused with
 * every byte kept; the payload read again from docs/FORMAT.md's text (spec_*
 * below) agreeing with core; round trips, and damaged bytes refused.
 */
#include "amq.h"
#include "check.h"
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

static uint64_t h(int64_t i)
{
	return amq_hash_int(i, 0);
}

/* An empty dleft filter for capacity values at fpr. */
static void dleft(amq_filter *f, uint64_t capacity, double fpr)
{
	amq_error err;
	CHECK(amq_filter_create(f, AMQ_KIND_BLOOM, AMQ_LAYOUT_DLEFT, capacity, fpr, 0, A, &err) ==
		  AMQ_OK,
	      "create %llu at %g: %s", (unsigned long long)capacity, fpr, err.message);
}

/* xorshift64*: the same sequence on every platform. */
static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* ---- the layout as docs/FORMAT.md states it ---- */

#define SPEC_D 4
#define SPEC_CELLS 8
#define SPEC_GOLDEN 0x9e3779b97f4a7c15ULL

/* Bits [at, at + width) of the payload, byte by byte. */
static uint64_t spec_bits(const uint8_t *p, uint64_t at, unsigned width)
{
	uint64_t v = 0;
	for (unsigned j = 0; j < width; j++)
		v |= (uint64_t)((p[(at + j) / 8] >> ((at + j) % 8)) & 1) << j;
	return v;
}

static void spec_set_bits(uint8_t *p, uint64_t at, unsigned width, uint64_t v)
{
	for (unsigned j = 0; j < width; j++) {
		uint8_t bit = (uint8_t)(1u << ((at + j) % 8));
		p[(at + j) / 8] =
		    (uint8_t)((v >> j & 1) ? p[(at + j) / 8] | bit : p[(at + j) / 8] & ~bit);
	}
}

/* The first bit of cell k of bucket b of subtable i. */
static uint64_t spec_cell(const amq_filter *f, unsigned i, uint64_t b, unsigned k)
{
	return ((i * f->cells + b) * SPEC_CELLS + k) * (f->hashes + 4);
}

/* The true fingerprint of hash and its bucket and remainder in subtable i. */
static uint64_t spec_fingerprint_of(const amq_filter *f, uint64_t hash)
{
	return spec_reduce(hash, f->cells << f->hashes);
}

static void spec_place(const amq_filter *f, uint64_t fp, unsigned i, uint64_t *bucket,
		       uint64_t *rem)
{
	uint64_t mask = (1ULL << f->hashes) - 1, q = fp >> f->hashes;
	*rem = ((fp & mask) + (spec_mix64(q ^ (SPEC_GOLDEN * (2 * i + 1))) & mask)) & mask;
	*bucket =
	    (q + spec_reduce(spec_mix64(*rem ^ (SPEC_GOLDEN * (2 * i + 2))), f->cells)) % f->cells;
}

/* The counter of hash's cell (0: none), and where it is. */
static unsigned spec_counter(const amq_filter *f, uint64_t hash, uint64_t *where)
{
	uint64_t fp = spec_fingerprint_of(f, hash);
	for (unsigned i = 0; i < SPEC_D; i++) {
		uint64_t b, rem;
		spec_place(f, fp, i, &b, &rem);
		for (unsigned k = 0; k < SPEC_CELLS; k++) {
			uint64_t c = spec_bits(f->payload, spec_cell(f, i, b, k), f->hashes + 4);
			if ((c & 15) != 0 && c >> 4 == rem) {
				*where = spec_cell(f, i, b, k);
				return (unsigned)(c & 15);
			}
		}
	}
	return 0;
}

/* core's contains and frequency agree with the spec's reading for values
 * [from, to). */
static void agree_with_spec(const amq_filter *f, int64_t from, int64_t to, const char *what)
{
	uint64_t differ = 0, where;
	amq_error err;
	for (int64_t v = from; v < to; v++) {
		unsigned c = spec_counter(f, h(v), &where);
		uint64_t count;
		amq_filter_frequency(f, h(v), &count, &err);
		differ += amq_filter_contains(f, h(v)) != (c != 0) ||
			  (c < AMQ_COUNTING_MAX && count != c) ||
			  (c == AMQ_COUNTING_MAX && count < AMQ_COUNTING_MAX);
	}
	CHECK(differ == 0, "%s: core and the spec disagree on %llu values", what,
	      (unsigned long long)differ);
}

/* ---- the tests ---- */

/* r = ceil(log2(24 / p)), B = ceil(n / 24), 8 cells of r + 4 bits; at most
 * 0.6 of the counting layout's bytes at 1% and 0.1%. */
static void test_sizing(void)
{
	static const struct {
		double fpr;
		uint32_t bits;
	} cases[] = {{0.01, 12}, {0.001, 15}, {0.5, 6}, {0.99, 5}, {1e-8, 32}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		amq_filter f, counting;
		amq_error err;
		dleft(&f, 1000000, cases[c].fpr);
		CHECK(f.hashes == cases[c].bits && f.cells == 41667 &&
			  f.payload_size ==
			      ((41667ULL * 32 * (cases[c].bits + 4) + 63) / 64 + 1) * 8,
		      "fpr %g: %u remainder bits, %llu buckets, %llu bytes", cases[c].fpr, f.hashes,
		      (unsigned long long)f.cells, (unsigned long long)f.payload_size);
		CHECK(f.bytes[4] == 5 && f.bytes[5] == AMQ_KIND_BLOOM && f.bytes[6] == 7 &&
			  f.bytes[7] == cases[c].bits && f.bytes[40] == 8,
		      "header: version 5, kind 1, layout 7, remainder bits, 8 slots");
		if (cases[c].fpr >= 0.001 && cases[c].fpr <= 0.01) {
			amq_filter_create(&counting, AMQ_KIND_BLOOM, AMQ_LAYOUT_COUNTING, 1000000,
					  cases[c].fpr, 0, A, &err);
			double ratio = (double)f.size / (double)counting.size;
			printf("dleft p=%g: %zu bytes, %.2f bits per value, %.3f of counting\n",
			       cases[c].fpr, f.size, f.size * 8.0 / 1e6, ratio);
			CHECK(ratio <= 0.6, "fpr %g: %.3f of the counting layout's bytes",
			      cases[c].fpr, ratio);
			amq_filter_free(&counting, A);
		}
		amq_filter_free(&f, A);
	}
	amq_filter f;
	amq_error err;
	CHECK(amq_filter_create(&f, AMQ_KIND_BLOOM, AMQ_LAYOUT_DLEFT, 10, 1e-9, 0, A, &err) ==
		      AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message,
			 "a dleft bloom filter reaches fpr 5.59e-09 at the lowest, got 1e-09") ==
		      0 &&
		  strcmp(err.hint, "pass a larger fpr, or use layout 'counting' or 'blocked'") == 0,
	      "too low an fpr: %s (%s)", err.message, err.hint);
	CHECK(amq_filter_create(&f, AMQ_KIND_BLOOM, AMQ_LAYOUT_DLEFT, 1, 0.01, 0, A, &err) ==
		      AMQ_OK &&
		  f.cells == 1,
	      "one value: one bucket per subtable");
	amq_filter_free(&f, A);
}

/* n values at capacity: none missing, and a rate at most p over 2n probes
 * of absent values; the estimate and the expected rate close. */
static void test_fpr(double p)
{
	const int64_t n = 1000000;
	amq_filter f;
	amq_error err;
	dleft(&f, (uint64_t)n, p);
	for (int64_t i = 0; i < n; i++)
		CHECK(amq_filter_add(&f, h(i), &err) == AMQ_OK, "add %lld: %s", (long long)i,
		      err.message);
	uint64_t missing = 0, positives = 0;
	for (int64_t i = 0; i < n; i++)
		missing += !amq_filter_contains(&f, h(i));
	for (int64_t i = n; i < 3 * n; i++)
		positives += amq_filter_contains(&f, h(i));
	double fpr = (double)positives / (double)(2 * n);
	double estimate = amq_filter_estimate_items(&f), expected = amq_filter_expected_fpr(&f);
	printf("dleft p=%g n=1M: measured fpr %.5f (%.3fp), expected %.5f, estimate %.0f\n", p, fpr,
	       fpr / p, expected, estimate);
	CHECK(missing == 0, "p %g: %llu false negatives", p, (unsigned long long)missing);
	CHECK(fpr <= p, "p %g: measured fpr %.5f above it", p, fpr);
	CHECK(fpr < expected * 1.1 && fpr > expected * 0.9, "p %g: measured %.5f, expected %.5f", p,
	      fpr, expected);
	CHECK(estimate > 0.99 * n && estimate < 1.01 * n, "p %g: estimate %.0f of 1M", p, estimate);
	agree_with_spec(&f, 0, 20000, "1M values");
	amq_filter_free(&f, A);
}

/* Random adds and deletes of added values over `distinct` values, a few of
 * them repeated past saturation: after every step of a sample, every value
 * still added is present with a frequency at least its count; deletes of
 * added values always find them; the result verifies and reads as the spec
 * says. A small fpr packs many values into few fingerprints, so cells are
 * shared. */
static void test_random(uint64_t capacity, double fpr, int64_t distinct, int64_t steps)
{
	amq_filter f;
	amq_error err;
	dleft(&f, capacity, fpr);
	uint64_t *count = calloc((size_t)distinct, sizeof(*count));
	uint64_t lost = 0, low = 0, refused = 0, failed = 0;
	for (int64_t s = 0; s < steps; s++) {
		int64_t v = (int64_t)(rng() % (uint64_t)distinct);
		/* Values below 8 take many repeats: their counters saturate. */
		bool add = count[v] == 0 || (v < 8 ? rng() % 4 != 0 : rng() % 2 == 0);
		bool removed;
		if (add) {
			failed += amq_filter_add(&f, h(v), &err) != AMQ_OK;
			count[v]++;
		} else {
			amq_filter_remove(&f, h(v), &removed, &err);
			refused += !removed;
			count[v]--;
		}
		if (s % 997 != 0 && s != steps - 1)
			continue;
		for (int64_t w = 0; w < distinct; w++) {
			uint64_t got;
			if (count[w] == 0)
				continue;
			lost += !amq_filter_contains(&f, h(w));
			amq_filter_frequency(&f, h(w), &got, &err);
			low += got < count[w];
		}
	}
	CHECK(failed == 0 && refused == 0, "fpr %g: %llu adds failed, %llu deletes refused", fpr,
	      (unsigned long long)failed, (unsigned long long)refused);
	CHECK(lost == 0, "fpr %g: %llu false negatives", fpr, (unsigned long long)lost);
	CHECK(low == 0, "fpr %g: %llu frequencies below the truth", fpr, (unsigned long long)low);
	amq_filter_seal(&f);
	CHECK(amq_filter_verify(&f, &err) == AMQ_OK, "fpr %g: verifies: %s", fpr, err.message);
	agree_with_spec(&f, 0, distinct, "after random steps");
	free(count);
	amq_filter_free(&f, A);
}

/* Each subtable's map from the true fingerprint to (bucket, remainder) is a
 * bijection: all B 2^r fingerprints give distinct pairs. So two values whose
 * fingerprints differ never match the same cell, and deleting one never
 * takes the other's: tried here for every pair of a small space that share
 * some pair of one subtable under another subtable's map. */
static void test_permutations(void)
{
	amq_filter f;
	amq_error err;
	dleft(&f, 5 * 24, 0.5); /* 5 buckets per subtable, 6 remainder bits */
	uint64_t space = f.cells << f.hashes, clashes = 0;
	uint8_t *seen = calloc((size_t)space, 1);
	for (unsigned i = 0; i < SPEC_D; i++) {
		memset(seen, 0, (size_t)space);
		for (uint64_t fp = 0; fp < space; fp++) {
			uint64_t b, rem;
			spec_place(&f, fp, i, &b, &rem);
			clashes += b >= f.cells || seen[b << f.hashes | rem]++;
		}
	}
	CHECK(clashes == 0, "%llu fingerprints share a (bucket, remainder) pair",
	      (unsigned long long)clashes);
	free(seen);
	/* Pairs of values of different fingerprints, each added then the
	 * second deleted: the first is always still there. */
	uint64_t lost = 0, pairs = 0;
	for (int64_t x = 0; x < 300; x++) {
		for (int64_t y = x + 1; y < 300; y++) {
			if (spec_fingerprint_of(&f, h(x)) == spec_fingerprint_of(&f, h(y)))
				continue;
			amq_filter g;
			bool removed;
			amq_filter_clone(&g, &f, A, &err);
			amq_filter_add(&g, h(x), &err);
			amq_filter_add(&g, h(y), &err);
			amq_filter_remove(&g, h(y), &removed, &err);
			lost += !amq_filter_contains(&g, h(x));
			pairs++;
			amq_filter_free(&g, A);
		}
	}
	CHECK(lost == 0 && pairs > 40000, "%llu of %llu pairs lost the first value",
	      (unsigned long long)lost, (unsigned long long)pairs);
	/* Two values of one fingerprint share one cell, counted twice. */
	int64_t x = 0, y = 1;
	while (spec_fingerprint_of(&f, h(x)) != spec_fingerprint_of(&f, h(y)))
		y++;
	bool removed;
	amq_filter_add(&f, h(x), &err);
	amq_filter_add(&f, h(y), &err);
	uint64_t where, count;
	CHECK(spec_counter(&f, h(x), &where) == 2, "one cell for one fingerprint, counter 2");
	amq_filter_remove(&f, h(y), &removed, &err);
	amq_filter_frequency(&f, h(x), &count, &err);
	CHECK(removed && amq_filter_contains(&f, h(x)) && count == 1,
	      "the shared cell keeps the other value");
	amq_filter_free(&f, A);
}

/* A filter with one bucket per subtable holds 32 cells: the add that finds
 * all four full fails with AMQ_FILTER_FULL and leaves every byte; an added
 * value still counts, and a delete makes room. */
static void test_full(void)
{
	amq_filter f;
	amq_error err;
	dleft(&f, 24, 0.01);
	int64_t v = 0;
	amq_status st = AMQ_OK;
	uint8_t *before = malloc(f.size);
	for (; st == AMQ_OK; v++) {
		memcpy(before, f.bytes, f.size);
		st = amq_filter_add(&f, h(v), &err);
	}
	CHECK(st == AMQ_FILTER_FULL && f.items == 32 && memcmp(before, f.bytes, f.size) == 0,
	      "full after %lld values, %llu items, bytes kept", (long long)v - 1,
	      (unsigned long long)f.items);
	CHECK(strcmp(err.message, "dleft bloom filter is full: the 4 buckets this value may take "
				  "hold 8 values each (32 items)") == 0 &&
		  strcmp(err.hint, "rebuild it with a larger capacity, bloom_new(capacity, fpr, "
				   "'dleft'), or with bloom_agg over every value") == 0,
	      "full: %s (%s)", err.message, err.hint);
	CHECK(amq_filter_add(&f, h(0), &err) == AMQ_OK && f.items == 33, "an added value counts");
	bool removed;
	amq_filter_remove(&f, h(3), &removed, &err);
	CHECK(removed && amq_filter_add(&f, h(v - 1), &err) == AMQ_OK,
	      "a freed cell takes the value refused");
	amq_filter_seal(&f);
	CHECK(amq_filter_verify(&f, &err) == AMQ_OK, "verifies: %s", err.message);
	free(before);
	amq_filter_free(&f, A);
}

/* What a dleft filter refuses: union and intersection, by the registry's
 * words. */
static void test_refused(void)
{
	amq_filter a, b;
	amq_error err;
	dleft(&a, 100, 0.01);
	dleft(&b, 100, 0.01);
	CHECK(amq_filter_union_into(&a, &b, &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message, "a dleft bloom filter cannot be combined") == 0,
	      "union: %s", err.message);
	CHECK(amq_filter_intersect_into(&a, &b, &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message, "a dleft bloom filter cannot be intersected") == 0,
	      "intersection: %s", err.message);
	free_filters(&a, &b);
}

/* Sealed bytes open, verify and read back the same; an aggregate counts
 * every row and gives the same bytes whatever the row order. */
static void test_round_trip(void)
{
	amq_filter f, g;
	amq_error err;
	dleft(&f, 5000, 0.01);
	for (int64_t i = 0; i < 4000; i++)
		amq_filter_add(&f, h(i % 3000), &err);
	amq_filter_seal(&f);
	uint8_t *copy = malloc(f.size);
	memcpy(copy, f.bytes, f.size);
	CHECK(amq_filter_check(&g, copy, f.size, &err) == AMQ_OK, "opens and verifies: %s",
	      err.message);
	uint64_t differ = 0, a, b;
	for (int64_t i = 0; i < 6000; i++) {
		amq_filter_frequency(&f, h(i), &a, &err);
		amq_filter_frequency(&g, h(i), &b, &err);
		differ += a != b || (i < 1000 && a < 2) || (i >= 1000 && i < 3000 && a < 1);
	}
	CHECK(differ == 0 && g.items == 4000, "%llu frequencies differ or fall below the truth",
	      (unsigned long long)differ);
	free(copy);

	amq_builder forward, backward;
	amq_filter x, y;
	amq_builder_init(&forward, AMQ_KIND_BLOOM, AMQ_LAYOUT_DLEFT, 0.01, 0, 0, A, &err);
	amq_builder_init(&backward, AMQ_KIND_BLOOM, AMQ_LAYOUT_DLEFT, 0.01, 0, 0, A, &err);
	for (int64_t i = 0; i < 4000; i++) {
		amq_builder_add(&forward, h(i % 3000), &err);
		amq_builder_add(&backward, h((3999 - i) % 3000), &err);
	}
	amq_builder_finish(&forward, &x, &err);
	amq_builder_finish(&backward, &y, &err);
	amq_filter_frequency(&x, h(5), &a, &err);
	CHECK(x.size == y.size && memcmp(x.bytes, y.bytes, x.size) == 0 && x.items == 4000 &&
		  a == 2,
	      "an aggregate: same bytes either order, every row counted");
	amq_builder_free(&forward);
	amq_builder_free(&backward);
	free_filters(&f, &x, &y);
}

/* f's bytes, changed by edit and sealed again (so the checksum matches),
 * refused by amq_filter_check with a message containing want. */
static void refused_after(const amq_filter *f, void (*edit)(amq_filter *), const char *want)
{
	amq_filter g, h2;
	amq_error err;
	amq_filter_clone(&g, f, A, &err);
	edit(&g);
	amq_filter_seal(&g);
	amq_status st = amq_filter_check(&h2, g.bytes, g.size, &err);
	CHECK(st == AMQ_INVALID_FILTER && strstr(err.message, want) != NULL, "damaged (%s): %s",
	      want, err.message);
	amq_filter_free(&g, A);
}

/* The first bucket of subtable 0 with at least one used and one free cell. */
static uint64_t some_bucket(const amq_filter *f, unsigned *load)
{
	for (uint64_t b = 0; b < f->cells; b++) {
		unsigned k = 0;
		while (k < SPEC_CELLS &&
		       spec_bits(f->payload, spec_cell(f, 0, b, k), f->hashes + 4) != 0)
			k++;
		if (k > 0 && k < SPEC_CELLS - 1) {
			*load = k;
			return b;
		}
	}
	return 0;
}

static void gap_before_used(amq_filter *f)
{
	unsigned load;
	uint64_t b = some_bucket(f, &load);
	spec_set_bits(f->payload, spec_cell(f, 0, b, load + 1), f->hashes + 4, 0x51);
}

static void free_cell_not_zero(amq_filter *f)
{
	unsigned load;
	uint64_t b = some_bucket(f, &load);
	spec_set_bits(f->payload, spec_cell(f, 0, b, load), f->hashes + 4, 0x50);
}

static void same_bucket_twice(amq_filter *f)
{
	unsigned load;
	uint64_t b = some_bucket(f, &load), w = f->hashes + 4;
	spec_set_bits(f->payload, spec_cell(f, 0, b, load), (unsigned)w,
		      spec_bits(f->payload, spec_cell(f, 0, b, 0), (unsigned)w));
	f->items++;
}

/* Value 0's fingerprint written again, with counter 1, in the first of its
 * other candidate buckets that has room. */
static void other_subtable_too(amq_filter *f)
{
	uint64_t where, fp = spec_fingerprint_of(f, h(0));
	spec_counter(f, h(0), &where);
	for (unsigned i = 0; i < SPEC_D; i++) {
		uint64_t b, rem;
		spec_place(f, fp, i, &b, &rem);
		if (where >= spec_cell(f, i, b, 0) && where < spec_cell(f, i, b, SPEC_CELLS))
			continue;
		for (unsigned k = 0; k < SPEC_CELLS; k++) {
			uint64_t at = spec_cell(f, i, b, k);
			if (spec_bits(f->payload, at, f->hashes + 4) == 0) {
				spec_set_bits(f->payload, at, f->hashes + 4, rem << 4 | 1);
				f->items++;
				return;
			}
		}
	}
}

static void one_more_item(amq_filter *f)
{
	f->items++;
}

static void one_item_less(amq_filter *f)
{
	f->items--;
}

static void tail_bit(amq_filter *f)
{
	f->payload[f->payload_size - 1] = 0x80;
}

/* Each structural rule of verify, and the header rules of open. */
static void test_damaged(void)
{
	amq_filter f, g;
	amq_error err;
	dleft(&f, 2000, 0.01);
	for (int64_t i = 0; i < 2000; i++)
		amq_filter_add(&f, h(i), &err);
	amq_filter_seal(&f);
	refused_after(&f, gap_before_used, "has a used cell after a free one");
	refused_after(&f, free_cell_not_zero, "a free cell that is not zero");
	refused_after(&f, same_bucket_twice, "holds a fingerprint that has another cell");
	refused_after(&f, other_subtable_too, "holds a fingerprint that has another cell");
	refused_after(&f, one_more_item, "header gives 2001 items where the counters hold 2000");
	refused_after(&f, one_item_less, "header gives 1999 items where the counters hold 2000");
	refused_after(&f, tail_bit, "bits set past the last cell");

	uint8_t *bytes = malloc(f.size);
	memcpy(bytes, f.bytes, f.size);
	bytes[7] = 4;
	CHECK(amq_filter_open(&g, bytes, f.size, &err) == AMQ_INVALID_FILTER &&
		  strstr(err.message, "4 remainder bits where a dleft bloom filter has 5 to 32"),
	      "remainder bits: %s", err.message);
	bytes[7] = f.bytes[7];
	bytes[40] = 4;
	CHECK(amq_filter_open(&g, bytes, f.size, &err) == AMQ_INVALID_FILTER &&
		  strstr(err.message, "4 slots per bucket where a dleft bloom filter has 8"),
	      "slots: %s", err.message);
	bytes[40] = 8;
	bytes[4] = 4;
	CHECK(amq_filter_open(&g, bytes, f.size, &err) == AMQ_INVALID_FILTER &&
		  strstr(err.message, "format version 4 has no dleft bloom layout"),
	      "version 4: %s", err.message);
	bytes[4] = 6;
	CHECK(amq_filter_open(&g, bytes, f.size, &err) == AMQ_INVALID_FILTER &&
		  strstr(err.message, "format version 6 was written by a newer amq (this build "
				      "reads versions 1 to 5)"),
	      "version 6: %s", err.message);
	bytes[4] = 5;
	CHECK(amq_filter_open(&g, bytes, f.size - 8, &err) == AMQ_INVALID_FILTER,
	      "a short payload: %s", err.message);
	free(bytes);
	amq_filter_free(&f, A);
}

int main(void)
{
	test_sizing();
	test_fpr(0.01);
	test_fpr(0.001);
	test_random(3000, 0.01, 2500, 200000);
	test_random(3000, 0.5, 2500, 200000);
	test_random(240, 0.9, 200, 100000);
	test_permutations();
	test_full();
	test_refused();
	test_round_trip();
	test_damaged();
	return check_summary();
}
