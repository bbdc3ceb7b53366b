/*
 * test_builder.c - building without knowing n: filters sized for distinct
 * hashes, identical bytes whatever the row order or the split between merged
 * builders (serialized or not), serialized states that round-trip and are
 * checked, the hash set's sort on adversarial inputs, its memory bound and
 * the guard that counts distinct hashes, every
 * allocation failure, and the empty case.
 */
#include "amq.h"
#include "bloom/bloom_internal.h"
#include "cuckoo/cuckoo_table.h"
#include "check.h"
#include "build/rice.h"
#include "format/variant.h"
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

#define N 20000

typedef struct {
	amq_kind kind;
	amq_layout layout;
	uint64_t capacity;
	const char *name;
} config;

static const config CONFIGS[] = {
    {AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0, "bloom classic"},
    {AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0, "bloom blocked"},
    {AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 30000, "bloom classic streaming"},
    {AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 30000, "bloom blocked streaming"},
    {AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0, "cuckoo"},
    {AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 30000, "cuckoo with capacity"},
};

/* Rows: N distinct values, each twice, so duplicates are present. */
static uint64_t row_hash(size_t row)
{
	return amq_hash_int((int64_t)(row % N), 0);
}

/* Builds from rows in the order given by perm, split round-robin over
 * `parts` builders merged in reverse order, each serialized and read back
 * when `serialized` (as parallel workers are), else merged as they are, with
 * hashes not yet sorted. */
static amq_filter build(const config *c, const size_t *perm, size_t rows, int parts,
			bool serialized)
{
	amq_builder b[4];
	amq_error err;
	for (int p = 0; p < parts; p++)
		amq_builder_init(&b[p], c->kind, c->layout, 0.01, c->capacity, 0, A, &err);
	for (size_t i = 0; i < rows; i++)
		amq_builder_add(&b[i % parts], row_hash(perm[i]), &err);
	for (int p = parts - 1; p > 0; p--) {
		uint8_t *state;
		size_t len;
		amq_builder copy;
		if (!serialized) {
			CHECK(amq_builder_merge(&b[0], &b[p], &err) == AMQ_OK, "merge: %s",
			      err.message);
			amq_builder_free(&b[p]);
			continue;
		}
		CHECK(amq_builder_serialize(&b[p], &state, &len, &err) == AMQ_OK, "serialize");
		CHECK(amq_builder_deserialize(&copy, state, len, A, &err) == AMQ_OK,
		      "deserialize: %s", err.message);
		free(state);
		CHECK(amq_builder_merge(&b[0], &copy, &err) == AMQ_OK, "merge: %s", err.message);
		amq_builder_free(&copy);
		amq_builder_free(&b[p]);
	}
	amq_filter f;
	CHECK(amq_builder_finish(&b[0], &f, &err) == AMQ_OK, "finish: %s", err.message);
	amq_builder_free(&b[0]);
	return f;
}

static int by_hash(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sorts a[0..n) with qsort and drops repeats: the set the builder must hold. */
static size_t sorted_set(uint64_t *a, size_t n)
{
	qsort(a, n, sizeof(uint64_t), by_hash);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (kept == 0 || a[kept - 1] != a[i])
			a[kept++] = a[i];
	return kept;
}

/* What a builder of c must give for the rows: a filter sized for the N
 * distinct values (or c's capacity) holding each once, added in hash order;
 * a streaming Bloom builder counts every row as an item. */
static amq_filter by_hand_filter(const config *c)
{
	uint64_t hashes[N];
	for (size_t i = 0; i < N; i++)
		hashes[i] = row_hash(i);
	size_t n = sorted_set(hashes, N);
	amq_filter f;
	amq_error err;
	uint64_t capacity = c->capacity ? c->capacity : n;
	if (c->kind == AMQ_KIND_BLOOM)
		amq_bloom_create(&f, capacity, 0.01, c->layout, 0, A, &err);
	else
		amq_cuckoo_create(&f, AMQ_LAYOUT_CLASSIC, capacity, 0.01, 0, A, &err);
	bool streaming = c->kind == AMQ_KIND_BLOOM && c->capacity != 0;
	for (size_t i = 0; i < n; i++) {
		if (c->kind == AMQ_KIND_BLOOM)
			amq_bloom_add(&f, hashes[i]);
		else
			amq_cuckoo_add(&f, hashes[i], &err);
	}
	if (streaming)
		f.items *= 2; /* each value is on two rows */
	amq_filter_seal(&f);
	return f;
}

static void order_and_split_independence(void)
{
	size_t rows = 2 * N;
	size_t *perm = malloc(rows * sizeof(size_t));
	for (size_t c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++) {
		for (size_t i = 0; i < rows; i++)
			perm[i] = i;
		amq_filter ref = build(&CONFIGS[c], perm, rows, 1, false);
		srand(11);
		for (size_t i = rows - 1; i > 0; i--) {
			size_t j = (size_t)rand() % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (int parts = 1; parts <= 4; parts++) {
			for (int serialized = 0; serialized <= 1; serialized++) {
				amq_filter f = build(&CONFIGS[c], perm, rows, parts, serialized);
				CHECK(f.size == ref.size && memcmp(f.bytes, ref.bytes, f.size) == 0,
				      "%s: shuffled rows in %d parts (%s) give other bytes",
				      CONFIGS[c].name, parts, serialized ? "serialized" : "merged");
				amq_filter_free(&f, A);
			}
		}
		amq_filter by_hand = by_hand_filter(&CONFIGS[c]);
		CHECK(by_hand.size == ref.size && memcmp(by_hand.bytes, ref.bytes, ref.size) == 0,
		      "%s: not the filter sized for %d values holding each once, in sorted order",
		      CONFIGS[c].name, N);
		amq_filter_free(&by_hand, A);
		int missing = 0;
		for (int64_t v = 0; v < N; v++)
			missing += ref.kind == AMQ_KIND_BLOOM
				       ? !amq_filter_contains(&ref, amq_hash_int(v, 0))
				       : !amq_filter_contains(&ref, amq_hash_int(v, 0));
		CHECK(missing == 0, "%s lost %d values", CONFIGS[c].name, missing);
		amq_error err;
		amq_filter check;
		CHECK(amq_filter_open(&check, ref.bytes, ref.size, &err) == AMQ_OK &&
			  amq_filter_verify(&check, &err) == AMQ_OK,
		      "%s result is sealed", CONFIGS[c].name);
		amq_filter_free(&ref, A);
	}
	free(perm);
}

/* Twelve serialized parts merged as a tree (pairs first, then the pairs'
 * results): the same bytes as one builder, in every configuration, also when
 * finished twice or serialized again after the merges. */
static void many_parts_and_tree_merges(void)
{
	enum { PARTS = 12 };
	for (size_t c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++) {
		size_t rows = 2 * N, *perm = malloc(rows * sizeof(size_t));
		for (size_t i = 0; i < rows; i++)
			perm[i] = i;
		amq_filter ref = build(&CONFIGS[c], perm, rows, 1, false);
		free(perm);
		amq_builder b[PARTS];
		amq_error err;
		for (int p = 0; p < PARTS; p++) {
			amq_builder w;
			uint8_t *state;
			size_t len;
			amq_builder_init(&w, CONFIGS[c].kind, CONFIGS[c].layout, 0.01,
					 CONFIGS[c].capacity, 0, A, &err);
			for (size_t row = (size_t)p; row < rows; row += PARTS)
				amq_builder_add(&w, row_hash(row), &err);
			amq_builder_serialize(&w, &state, &len, &err);
			CHECK(amq_builder_deserialize(&b[p], state, len, A, &err) == AMQ_OK, "%s",
			      err.message);
			free(state);
			amq_builder_free(&w);
		}
		for (int step = 1; step < PARTS; step *= 2)
			for (int p = 0; p + step < PARTS; p += 2 * step) {
				CHECK(amq_builder_merge(&b[p], &b[p + step], &err) == AMQ_OK, "%s",
				      err.message);
				amq_builder_free(&b[p + step]);
			}
		amq_filter f;
		CHECK(amq_builder_finish(&b[0], &f, &err) == AMQ_OK, "%s", err.message);
		CHECK(f.size == ref.size && memcmp(f.bytes, ref.bytes, f.size) == 0,
		      "%s: %d parts merged as a tree give other bytes", CONFIGS[c].name, PARTS);
		amq_filter_free(&f, A);
		/* Finishing again gives the same filter (PostgreSQL may). */
		CHECK(amq_builder_finish(&b[0], &f, &err) == AMQ_OK && f.size == ref.size &&
			  memcmp(f.bytes, ref.bytes, f.size) == 0,
		      "%s: a second finish differs", CONFIGS[c].name);
		amq_filter_free(&f, A);
		/* A merged builder serializes its runs as one sorted state. */
		uint8_t *state;
		size_t len;
		amq_builder copy;
		CHECK(amq_builder_serialize(&b[0], &state, &len, &err) == AMQ_OK &&
			  amq_builder_deserialize(&copy, state, len, A, &err) == AMQ_OK &&
			  amq_builder_finish(&copy, &f, &err) == AMQ_OK,
		      "%s: %s", CONFIGS[c].name, err.message);
		CHECK(f.size == ref.size && memcmp(f.bytes, ref.bytes, f.size) == 0,
		      "%s: merged, serialized and read back gives other bytes", CONFIGS[c].name);
		amq_filter_free(&f, A);
		free(state);
		amq_builder_free(&copy);
		amq_builder_free(&b[0]);
		amq_filter_free(&ref, A);
	}
}

/* Sized for distinct values: duplicates neither inflate the filter nor the memory. */
static void duplicates_do_not_inflate(void)
{
	amq_builder b;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A, &err);
	for (int64_t row = 0; row < 1000000; row++)
		amq_builder_add(&b, amq_hash_int(row % 1000, 0), &err);
	CHECK(b.set.capacity <= 4096, "1M rows over 1000 values held %zu hashes", b.set.capacity);
	amq_filter f;
	amq_builder_finish(&b, &f, &err);
	uint64_t bits;
	uint32_t k;
	amq_bloom_size(1000, 0.01, AMQ_LAYOUT_CLASSIC, &bits, &k, &err);
	CHECK(f.cells == bits && f.hashes == k && f.items == 1000,
	      "sized for 1000 distinct: %llu bits, %llu items", (unsigned long long)f.cells,
	      (unsigned long long)f.items);
	amq_filter_free(&f, A);
	amq_builder_free(&b);

	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A, &err);
	for (int64_t row = 0; row < 100000; row++)
		amq_builder_add(&b, amq_hash_int(row % 7, 0), &err);
	amq_builder_finish(&b, &f, &err);
	CHECK(f.items == 7, "cuckoo holds each distinct value once: %llu",
	      (unsigned long long)f.items);
	amq_filter_free(&f, A);
	amq_builder_free(&b);
}

static void exceeds_counts_distinct_hashes(void)
{
	amq_builder b;
	amq_error err;
	bool over = true;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, A, &err);
	for (int64_t row = 0; row < 100000; row++) {
		amq_builder_add(&b, amq_hash_int(row % 100, 0), &err);
		amq_builder_exceeds(&b, 100, &over, &err);
		if (over)
			break;
	}
	CHECK(!over, "100 distinct values among 100000 rows do not exceed 100");
	for (int64_t row = 100; row < 1000 && !over; row++) {
		amq_builder_add(&b, amq_hash_int(row, 0), &err);
		CHECK(amq_builder_exceeds(&b, 100, &over, &err) == AMQ_OK, "exceeds: %s",
		      err.message);
	}
	CHECK(over && b.set.count > 100 && b.set.count <= 201,
	      "exceeds 100 once it holds more than 200 hashes, %zu distinct of them", b.set.count);
	amq_builder_free(&b);

	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 1000, 0, A, &err);
	for (int64_t row = 0; row < 5000; row++)
		amq_builder_add(&b, amq_hash_int(row, 0), &err);
	amq_builder_exceeds(&b, 10, &over, &err);
	CHECK(!over, "a streaming builder never exceeds");
	amq_builder_free(&b);
}

static void empty_and_errors(void)
{
	amq_builder b, other;
	amq_error err;
	amq_filter f;
	for (int kind = AMQ_KIND_BLOOM; kind <= AMQ_KIND_CUCKOO; kind++) {
		CHECK(amq_builder_init(&b, (amq_kind)kind, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A,
				       &err) == AMQ_OK,
		      "init");
		CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK && f.items == 0, "empty filter");
		CHECK(kind == AMQ_KIND_BLOOM ? !amq_filter_contains(&f, amq_hash_int(1, 0))
					     : !amq_filter_contains(&f, amq_hash_int(1, 0)),
		      "empty filter contains nothing");
		amq_filter_free(&f, A);
		amq_builder_free(&b);
	}
	CHECK(amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 1.5, 0, 0, A, &err) ==
		  AMQ_INVALID_ARGUMENT,
	      "bad fpr refused");
	amq_builder_free(&b);
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A, &err);
	amq_builder_init(&other, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0.05, 0, 0, A, &err);
	CHECK(amq_builder_merge(&b, &other, &err) == AMQ_INCOMPATIBLE, "fpr mismatch refused");
	CHECK(strcmp(err.message, "cannot merge filter aggregates with different parameters (fpr "
				  "0.01, capacity 0 vs fpr 0.05, capacity 0)") == 0,
	      "%s", err.message);
	amq_builder_free(&other);

	/* Capacity fixed and exceeded: the cuckoo builder says so. */
	amq_builder_free(&b);
	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 10, 0, A, &err);
	for (int64_t v = 0; v < 100; v++)
		amq_builder_add(&b, amq_hash_int(v, 0), &err);
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_FILTER_FULL, "over capacity: %s",
	      err.message);
	amq_builder_free(&b);

	/* Damaged states are refused, never read past. */
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A, &err);
	for (int64_t v = 0; v < 100; v++)
		amq_builder_add(&b, amq_hash_int(v, 0), &err);
	uint8_t *state;
	size_t len;
	amq_builder_serialize(&b, &state, &len, &err);
	int accepted = 0;
	for (size_t cut = 0; cut < len; cut++) {
		if (amq_builder_deserialize(&other, state, cut, A, &err) == AMQ_OK) {
			accepted++;
			amq_builder_free(&other);
		}
	}
	CHECK(accepted == 0, "%d truncated states accepted", accepted);
	free(state);
	amq_builder_free(&b);
}

/* Counts the allocator's calls and remembers the largest request. */
static size_t allocations, largest_allocation;

static void *counting_alloc(void *ctx, size_t size)
{
	(void)ctx;
	allocations++;
	if (size > largest_allocation)
		largest_allocation = size;
	return amq_malloc_allocator.alloc(amq_malloc_allocator.ctx, size);
}

static void counting_free(void *ctx, void *p)
{
	(void)ctx;
	amq_malloc_allocator.free(amq_malloc_allocator.ctx, p);
}

/* Sixteen distinct hashes that agree in their top 16 and low 32 bits share
 * both buckets and the fingerprint of any table up to 2^16 buckets; only 8 fit.
 * The builder says so after a few sizes instead of growing to the 1 GiB limit
 * (a fuzzed aggregate state took 9 s and 1 GiB to be refused before). */
static void inseparable_cuckoo_values(void)
{
	const amq_allocator counting = {.alloc = counting_alloc, .free = counting_free};
	amq_builder b;
	amq_filter f;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, &counting, &err);
	for (uint64_t j = 0; j < 16; j++)
		amq_builder_add(&b, 0xabcd000000000000ULL | j << 32 | 0x12345678ULL, &err);
	allocations = largest_allocation = 0;
	amq_status st = amq_builder_finish(&b, &f, &err);
	CHECK(st == AMQ_FILTER_FULL &&
		  strcmp(err.message,
			 "cannot place 16 distinct values in a cuckoo filter: more "
			 "than 8 of them share both buckets and the fingerprint") == 0 &&
		  strcmp(err.hint, "build a bloom filter of these values, or pass a smaller fpr "
				   "for longer fingerprints") == 0,
	      "inseparable values: status %d, %s (%s)", st, err.message, err.hint);
	CHECK(allocations <= 10 && largest_allocation < 4096,
	      "inseparable values: %zu allocations, largest %zu bytes", allocations,
	      largest_allocation);
	if (st == AMQ_OK)
		amq_filter_free(&f, &counting);
	amq_builder_free(&b);

	/* With a capacity: the same words, never those of a value added too often
	 * (the hashes are distinct), nor "full" in a filter with room. */
	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 1000, 0, A, &err);
	for (uint64_t j = 0; j < 16; j++)
		amq_builder_add(&b, 0xabcd000000000000ULL | j << 32 | 0x12345678ULL, &err);
	st = amq_builder_finish(&b, &f, &err);
	CHECK(st == AMQ_FILTER_FULL &&
		  strcmp(err.message, "cannot place 16 distinct values in a cuckoo filter: more "
				      "than 8 of them share both buckets and the fingerprint") == 0,
	      "inseparable values, capacity 1000: status %d, %s (%s)", st, err.message, err.hint);
	if (st == AMQ_OK)
		amq_filter_free(&f, A);
	amq_builder_free(&b);

	/* Eight such values fit, as the paper's two buckets of four slots allow. */
	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, A, &err);
	for (uint64_t j = 0; j < 8; j++)
		amq_builder_add(&b, 0xabcd000000000000ULL | j << 32 | 0x12345678ULL, &err);
	st = amq_builder_finish(&b, &f, &err);
	CHECK(st == AMQ_OK && f.items == 8, "eight values sharing buckets and fingerprint: %s",
	      st == AMQ_OK ? "ok" : err.message);
	if (st == AMQ_OK)
		amq_filter_free(&f, A);
	amq_builder_free(&b);
}

/* The k-th hash of an adversarial pattern for the hash set's sort. */
typedef uint64_t (*pattern)(size_t k);

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}
static uint64_t all_equal(size_t k)
{
	(void)k;
	return 0x5555aaaa5555aaaaULL;
}
static uint64_t increasing(size_t k)
{
	return (uint64_t)k * 0x9e3779b97f4a7c1ULL;
}
static uint64_t decreasing(size_t k)
{
	return UINT64_MAX - (uint64_t)k * 0x9e3779b97f4a7c1ULL;
}
static uint64_t few_distinct(size_t k)
{
	return mix(k % 7);
}
static uint64_t top_bits_equal(size_t k)
{
	return 0xabcd000000000000ULL | (mix(k) >> 16);
}
static uint64_t low_bits_equal(size_t k)
{
	return (mix(k % 5000) & 0xffff000000000000ULL) | 0x123456789aULL;
}
static uint64_t extremes(size_t k)
{
	static const uint64_t v[] = {
	    0, 1, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63, (1ULL << 63) | 1};
	return v[mix(k) % 6];
}
static uint64_t random_with_repeats(size_t k)
{
	return mix(mix(k) % 30000);
}

/* Adds the hashes of p for rows [from, to) to a hash set. */
static void add_pattern(amq_hashset *set, pattern p, size_t from, size_t to)
{
	amq_error err;
	size_t failed = 0;
	for (size_t k = from; k < to; k++)
		failed += amq_hashset_add(set, p(k), &err) != AMQ_OK;
	CHECK(failed == 0, "%zu adds failed", failed);
}

/* Every pattern, collected in one set and in two joined with union, must
 * give exactly the sorted distinct hashes (qsort decides). */
static void sort_on_adversarial_input(void)
{
	static const struct {
		pattern p;
		const char *name;
	} patterns[] = {{all_equal, "all equal"},
			{increasing, "increasing"},
			{decreasing, "decreasing"},
			{few_distinct, "7 distinct"},
			{top_bits_equal, "top 16 bits equal"},
			{low_bits_equal, "low 48 bits equal"},
			{extremes, "0, 1, 2^63, max"},
			{random_with_repeats, "repeats"}};
	const size_t rows = 50000;
	uint64_t *want = malloc(rows * sizeof(uint64_t));
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		for (size_t k = 0; k < rows; k++)
			want[k] = patterns[i].p(k);
		size_t n = sorted_set(want, rows);
		amq_hashset one, left, right;
		amq_error err;
		amq_hashset_init(&one, A);
		amq_hashset_init(&left, A);
		amq_hashset_init(&right, A);
		add_pattern(&one, patterns[i].p, 0, rows);
		add_pattern(&left, patterns[i].p, 0, rows / 3);
		add_pattern(&right, patterns[i].p, rows / 3, rows);
		CHECK(amq_hashset_compact(&one, &err) == AMQ_OK &&
			  amq_hashset_compact(&right, &err) == AMQ_OK &&
			  amq_hashset_union(&left, right.hashes, right.count, &err) == AMQ_OK,
		      "%s: %s", patterns[i].name, err.message);
		CHECK(one.count == n && one.sorted == n &&
			  memcmp(one.hashes, want, n * sizeof(uint64_t)) == 0,
		      "%s: %zu of %zu sorted distinct hashes right", patterns[i].name, one.count,
		      n);
		CHECK(left.count == n && left.sorted == n &&
			  memcmp(left.hashes, want, n * sizeof(uint64_t)) == 0,
		      "%s: union holds %zu of %zu", patterns[i].name, left.count, n);
		amq_hashset_free(&one);
		amq_hashset_free(&left);
		amq_hashset_free(&right);
	}
	free(want);
}

/* Counts live and peak bytes of the allocator's blocks (each block carries
 * its size in front) and can fail the allocation numbered fail_at. */
static size_t live_bytes, peak_bytes, allocation_number, fail_at = SIZE_MAX;

static void *tracking_alloc(void *ctx, size_t size)
{
	(void)ctx;
	if (allocation_number++ == fail_at)
		return NULL;
	size_t *block = malloc(size + 64);
	if (block == NULL)
		return NULL;
	block[0] = size;
	live_bytes += size;
	if (live_bytes > peak_bytes)
		peak_bytes = live_bytes;
	return (uint8_t *)block + 64;
}

static void tracking_free(void *ctx, void *p)
{
	(void)ctx;
	if (p == NULL)
		return;
	size_t *block = (size_t *)((uint8_t *)p - 64);
	live_bytes -= block[0];
	free(block);
}

static const amq_allocator TRACKING = {.alloc = tracking_alloc, .free = tracking_free};

/* Peak bytes the hash set held collecting and compacting `rows` rows over
 * `distinct` values. */
static size_t peak_collecting(size_t rows, size_t distinct)
{
	amq_hashset set;
	amq_error err;
	live_bytes = peak_bytes = 0;
	amq_hashset_init(&set, &TRACKING);
	for (size_t row = 0; row < rows; row++)
		amq_hashset_add(&set, mix(row % distinct), &err);
	CHECK(amq_hashset_compact(&set, &err) == AMQ_OK && set.count == distinct,
	      "%zu distinct collected: %zu", distinct, set.count);
	amq_hashset_free(&set);
	CHECK(live_bytes == 0, "%zu bytes left allocated", live_bytes);
	return peak_bytes;
}

/* The documented bound: under AMQ_HASHSET_PEAK_BYTES (64) per distinct hash
 * at the peak (a buffer of under 4 hashes per distinct one, plus the scratch
 * of a sort or the old buffer while growing), and 24 bytes per row when all
 * differ. */
static void memory_bound(void)
{
	size_t peak = peak_collecting(1000000, 100000);
	CHECK(peak < AMQ_HASHSET_PEAK_BYTES * 100000, "1M rows over 100k values: peak %zu bytes",
	      peak);
	peak = peak_collecting(1000000, 1000);
	CHECK(peak <= AMQ_HASHSET_PEAK_BYTES * 1024, "1M rows over 1000 values: peak %zu bytes",
	      peak);
	peak = peak_collecting(1000000, 1000000);
	CHECK(peak < 24 * 1000000, "1M distinct rows: peak %zu bytes", peak);
}

/* One merge of a serialized builder into another, then finish, for kind and
 * capacity, with allocation number fail_at failing: AMQ_NO_MEMORY or
 * success, and every byte freed either way. */
static amq_status build_failing_at(const config *c, size_t fail)
{
	amq_builder b, w, copy;
	amq_error err;
	amq_filter f;
	uint8_t *state = NULL;
	size_t len;
	live_bytes = 0;
	allocation_number = 0;
	fail_at = fail;
	amq_status st =
	    amq_builder_init(&b, c->kind, c->layout, 0.01, c->capacity, 0, &TRACKING, &err);
	if (st == AMQ_OK) {
		st =
		    amq_builder_init(&w, c->kind, c->layout, 0.01, c->capacity, 0, &TRACKING, &err);
		if (st != AMQ_OK)
			amq_builder_free(&b);
	}
	if (st != AMQ_OK) {
		fail_at = SIZE_MAX;
		return st;
	}
	for (size_t row = 0; st == AMQ_OK && row < 6000; row++)
		st = amq_builder_add(row % 2 ? &w : &b, row_hash(row % 4000), &err);
	if (st == AMQ_OK)
		st = amq_builder_serialize(&w, &state, &len, &err);
	if (st == AMQ_OK) {
		st = amq_builder_deserialize(&copy, state, len, &TRACKING, &err);
		if (st == AMQ_OK) {
			st = amq_builder_merge(&b, &copy, &err);
			amq_builder_free(&copy);
		}
		TRACKING.free(NULL, state);
	}
	if (st == AMQ_OK)
		st = amq_builder_finish(&b, &f, &err);
	if (st == AMQ_OK)
		amq_filter_free(&f, &TRACKING);
	amq_builder_free(&b);
	amq_builder_free(&w);
	CHECK(st == AMQ_OK ||
		  (st == AMQ_NO_MEMORY && strncmp(err.message, "out of memory", 13) == 0),
	      "%s, allocation %zu failing: status %d, %s", c->name, fail, st, err.message);
	CHECK(live_bytes == 0, "%s, allocation %zu failing: %zu bytes leaked", c->name, fail,
	      live_bytes);
	fail_at = SIZE_MAX;
	return st;
}

/* Every allocation of every configuration, failed in turn. */
static void allocation_failures(void)
{
	for (size_t c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++) {
		size_t fail = 0;
		while (build_failing_at(&CONFIGS[c], fail) != AMQ_OK && fail < 1000)
			fail++;
		CHECK(fail > 0 && fail < 1000, "%s: %zu allocations", CONFIGS[c].name, fail);
	}
}

/* A state whose hashes are repeated, cut short or followed by more bytes is
 * refused: the leader merges them in linear time trusting their order. */
static void unsorted_states_refused(void)
{
	amq_builder b, other;
	amq_error err;
	uint8_t *state;
	size_t len;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, A, &err);
	for (int64_t v = 0; v < 100; v++)
		amq_builder_add(&b, amq_hash_int(v, 0), &err);
	amq_builder_serialize(&b, &state, &len, &err);
	CHECK(amq_builder_deserialize(&other, state, len, A, &err) == AMQ_OK &&
		  other.set.sorted == 100,
	      "a sorted state is read as one sorted run");
	/* The same hashes with hash 40 twice, coded as a worker would. */
	uint64_t hashes[101];
	memcpy(hashes, other.set.hashes, 100 * sizeof(uint64_t));
	amq_builder_free(&other);
	memmove(hashes + 41, hashes + 40, 60 * sizeof(uint64_t));
	unsigned k;
	size_t coded = (size_t)amq_rice_size(hashes, 101, &k);
	uint8_t *repeated = malloc(48 + 8 + coded);
	memcpy(repeated, state, 48);
	amq_store64le(repeated + 48, 101);
	amq_rice_encode(hashes, 101, k, repeated + 56);
	CHECK(amq_builder_deserialize(&other, repeated, 56 + coded, A, &err) ==
		      AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message,
			 "invalid filter aggregate state: hashes are not sorted and distinct") == 0,
	      "repeated hash: %s", err.message);
	free(repeated);
	const struct {
		size_t cut; /* bytes dropped from the end (SIZE_MAX: one added) */
		const char *message;
	} damaged[] = {
	    {1, "invalid filter aggregate state: hash list ends early"},
	    {SIZE_MAX, "invalid filter aggregate state: bytes after the hash list"},
	};
	for (size_t d = 0; d < sizeof(damaged) / sizeof(damaged[0]); d++) {
		uint8_t *copy = calloc(1, len + 1);
		memcpy(copy, state, len);
		size_t size = damaged[d].cut == SIZE_MAX ? len + 1 : len - damaged[d].cut;
		CHECK(amq_builder_deserialize(&other, copy, size, A, &err) ==
			      AMQ_INVALID_ARGUMENT &&
			  strcmp(err.message, damaged[d].message) == 0,
		      "damaged %zu: %s", d, err.message);
		free(copy);
	}
	/* More hashes than the bytes could hold, and a parameter past 63. */
	amq_store64le(state + 48, (len - 57) * 8 + 1);
	CHECK(amq_builder_deserialize(&other, state, len, A, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message,
			 "invalid filter aggregate state: hash count does not match its length") ==
		      0,
	      "count past the bytes: %s", err.message);
	amq_store64le(state + 48, 100);
	state[56] = 64;
	CHECK(amq_builder_deserialize(&other, state, len, A, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message,
			 "invalid filter aggregate state: bad hash coding parameter") == 0,
	      "parameter 64: %s", err.message);
	free(state);
	amq_builder_free(&b);
}

/* A collecting builder whose distinct values pass what a filter within the
 * 1 GiB limit holds fails as its buffer is sorted, not at the end: here a
 * blocked filter at fpr 1e-15, which holds about a million values (the check
 * starts from a lowered room_from). */
static void too_large_fails_early(void)
{
	amq_builder b;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 1e-15, 0, 0, A, &err);
	b.room_from = 100000;
	amq_status st = AMQ_OK;
	uint64_t rows = 0;
	while (st == AMQ_OK && rows < 4000000)
		st = amq_builder_add(&b, amq_hash_int((int64_t)rows++, 0), &err);
	/* The buffer is sorted at 2^20 and 2^21 distinct hashes: the second
	 * passes the limit. */
	const char *tail = strstr(err.message, " distinct values and more: a blocked bloom filter "
					       "of them at fpr 1e-15 would pass the 1 GiB limit");
	CHECK(st == AMQ_TOO_LARGE && rows < 3000000 && tail != NULL &&
		  strtoull(err.message, NULL, 10) == rows - 1 &&
		  strcmp(err.hint, "raise the fpr, or build one filter per part of the keys (GROUP "
				   "BY a hash of the key)") == 0,
	      "failed after %llu rows: %s: %s", (unsigned long long)rows, err.message, err.hint);
	amq_builder_free(&b);
}

/* qsort order of 64-bit hashes. */
static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted hashes round-trip through their Rice coding (distinct, repeated,
 * the extremes 0 and 2^64 - 1, none at all), in about log2(2^64 / n) + 2
 * bits each. */
static void rice_round_trips(void)
{
	static const size_t SIZES[] = {0, 1, 2, 3, 1000, 1000000};
	uint64_t state = 7;
	for (size_t s = 0; s < sizeof(SIZES) / sizeof(SIZES[0]); s++) {
		size_t n = SIZES[s];
		uint64_t *in = malloc((n + 1) * sizeof(uint64_t)),
			 *back = malloc((n + 1) * sizeof(uint64_t));
		for (size_t i = 0; i < n; i++)
			in[i] = next_random(&state);
		qsort(in, n, sizeof(uint64_t), compare_u64);
		if (n >= 2) {
			in[0] = 0;
			in[n - 1] = UINT64_MAX;
		}
		for (int repeat = 0; repeat < 2; repeat++) {
			if (repeat && n >= 3)
				in[1] = in[2]; /* a bag's duplicate */
			unsigned k;
			uint64_t size = amq_rice_size(in, n, &k);
			uint8_t *coded = malloc((size_t)size);
			amq_rice_encode(in, n, k, coded);
			const char *wrong = amq_rice_decode(coded, (size_t)size, n, false, back);
			CHECK(wrong == NULL &&
				  (n == 0 || memcmp(in, back, n * sizeof(uint64_t)) == 0),
			      "%zu hashes%s round-trip: %s", n, repeat ? " with a repeat" : "",
			      wrong ? wrong : "ok");
			if (n == 1000000 && !repeat)
				CHECK(size * 8.0 / (double)n < 64 - 19.93 + 2.5,
				      "1M hashes in %.2f bits each (k %u)", size * 8.0 / (double)n,
				      k);
			free(coded);
		}
		free(in);
		free(back);
	}
}

/* A builder told how many rows come (exactly, too few, too many) builds the
 * bytes of one that was told nothing, for every Bloom layout of the variant
 * registry, counting and scalable ones included, and for the b4 cuckoo one. */
static void expected_rows_change_nothing(void)
{
	static const uint64_t HINTS[] = {0, 2 * N, N / 3, 10 * N};
	for (size_t l = 0; l < amq_variant_count(); l++) {
		amq_kind kind = amq_variant_at(l)->kind;
		amq_layout layout = amq_variant_at(l)->layout;
		if (kind != AMQ_KIND_BLOOM && layout != AMQ_LAYOUT_CLASSIC)
			continue;
		amq_filter first = {0};
		for (size_t h = 0; h < sizeof(HINTS) / sizeof(HINTS[0]); h++) {
			amq_builder b;
			amq_error err;
			amq_filter f;
			CHECK(amq_builder_init(&b, kind, layout, 0.01, 0, 0, A, &err) == AMQ_OK,
			      "init: %s", err.message);
			if (HINTS[h] != 0)
				CHECK(amq_builder_expect(&b, HINTS[h], &err) == AMQ_OK,
				      "expect: %s", err.message);
			for (size_t i = 0; i < 2 * N; i++)
				amq_builder_add(&b, row_hash(i), &err);
			CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s",
			      err.message);
			amq_builder_free(&b);
			if (h == 0) {
				first = f;
				continue;
			}
			CHECK(f.size == first.size && memcmp(f.bytes, first.bytes, f.size) == 0,
			      "layout %zu: expecting %llu rows changes the bytes", l,
			      (unsigned long long)HINTS[h]);
			amq_filter_free(&f, A);
		}
		amq_filter_free(&first, A);
	}
}

/* A rate changed before the finish gives the filter a builder made with it
 * gives; a builder whose filter exists already refuses, as does a bad rate. */
static void rate_set_before_finish(void)
{
	amq_builder b, made;
	amq_error err;
	amq_filter f, want;
	CHECK(amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, A, &err) ==
		  AMQ_OK,
	      "init");
	CHECK(amq_builder_init(&made, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.0001, 0, 0, A, &err) ==
		  AMQ_OK,
	      "init");
	for (size_t i = 0; i < 2 * N; i++) {
		amq_builder_add(&b, row_hash(i), &err);
		amq_builder_add(&made, row_hash(i), &err);
	}
	CHECK(amq_builder_set_fpr(&b, 0.0001, &err) == AMQ_OK, "set: %s", err.message);
	CHECK(amq_builder_set_fpr(&b, 0.0, &err) == AMQ_INVALID_ARGUMENT, "rate 0 refused");
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s", err.message);
	CHECK(amq_builder_finish(&made, &want, &err) == AMQ_OK, "finish: %s", err.message);
	CHECK(f.size == want.size && memcmp(f.bytes, want.bytes, f.size) == 0,
	      "a rate set before the finish: %zu bytes, made with it: %zu", f.size, want.size);
	amq_filter_free(&f, A);
	amq_filter_free(&want, A);
	amq_builder_free(&b);
	amq_builder_free(&made);
	CHECK(amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 1000, 0, A, &err) ==
		  AMQ_OK,
	      "init");
	CHECK(amq_builder_set_fpr(&b, 0.001, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message, "only a builder that sizes its filter at its finish can "
				      "change its fpr") == 0,
	      "a streaming builder refuses: %s", err.message);
	amq_builder_free(&b);
}

int main(void)
{
	expected_rows_change_nothing();
	rate_set_before_finish();
	order_and_split_independence();
	many_parts_and_tree_merges();
	duplicates_do_not_inflate();
	exceeds_counts_distinct_hashes();
	empty_and_errors();
	inseparable_cuckoo_values();
	sort_on_adversarial_input();
	memory_bound();
	allocation_failures();
	unsorted_states_refused();
	rice_round_trips();
	too_large_fails_early();
	return check_summary();
}
