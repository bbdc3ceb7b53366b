/*
 * test_builder.c - building without knowing n: filters sized for distinct
 * hashes, identical bytes whatever the row order or the split between merged
 * builders, serialized states that round-trip, and the empty case.
 */
#include "amq.h"
#include "check.h"

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
    {AMQ_KIND_BLOOM, AMQ_LAYOUT_CLASSIC, 30000, "bloom streaming"},
    {AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0, "cuckoo"},
    {AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 30000, "cuckoo with capacity"},
};

/* Rows: N distinct values, each twice, so duplicates are present. */
static uint64_t row_hash(size_t row)
{
	return amq_hash_int((int64_t)(row % N), 0);
}

/* Builds from rows in the order given by perm, split round-robin over
 * `parts` builders merged in reverse order, each serialized and read back. */
static amq_filter build(const config *c, const size_t *perm, size_t rows, int parts)
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

static void order_and_split_independence(void)
{
	size_t rows = 2 * N;
	size_t *perm = malloc(rows * sizeof(size_t));
	for (size_t c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++) {
		for (size_t i = 0; i < rows; i++)
			perm[i] = i;
		amq_filter ref = build(&CONFIGS[c], perm, rows, 1);
		srand(11);
		for (size_t i = rows - 1; i > 0; i--) {
			size_t j = (size_t)rand() % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (int parts = 1; parts <= 4; parts++) {
			amq_filter f = build(&CONFIGS[c], perm, rows, parts);
			CHECK(f.size == ref.size && memcmp(f.bytes, ref.bytes, f.size) == 0,
			      "%s: shuffled rows in %d parts give other bytes", CONFIGS[c].name,
			      parts);
			amq_filter_free(&f, A);
		}
		int missing = 0;
		for (int64_t v = 0; v < N; v++)
			missing += ref.kind == AMQ_KIND_BLOOM
				       ? !amq_bloom_contains(&ref, amq_hash_int(v, 0))
				       : !amq_cuckoo_contains(&ref, amq_hash_int(v, 0));
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
		CHECK(kind == AMQ_KIND_BLOOM ? !amq_bloom_contains(&f, amq_hash_int(1, 0))
					     : !amq_cuckoo_contains(&f, amq_hash_int(1, 0)),
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
	const amq_allocator counting = {counting_alloc, counting_free, NULL};
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

int main(void)
{
	order_and_split_independence();
	duplicates_do_not_inflate();
	empty_and_errors();
	inseparable_cuckoo_values();
	return check_summary();
}
