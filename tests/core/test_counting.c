/*
 * test_counting.c - the counting Bloom filter: the classic m, k and bit
 * positions; measured fpr at 1M values; deletes that never lose a value still
 * added; sticky saturation; frequencies never below the truth; saturating
 * union and min intersection; format version 2; aggregates that count
 * duplicate rows and give the same bytes whatever the order or split.
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

/* Adds value v to f `times` times. */
static void add_times(amq_filter *f, int64_t v, int64_t times)
{
	amq_error err;
	for (int64_t r = 0; r < times; r++)
		amq_filter_add(f, h(v), &err);
}

/* A counting filter for capacity items at fpr, holding the values [from, to). */
static void counting(amq_filter *f, uint64_t capacity, double fpr, int64_t from, int64_t to)
{
	amq_error err;
	CHECK(amq_filter_create(f, AMQ_KIND_BLOOM, AMQ_LAYOUT_COUNTING, capacity, fpr, 0, A,
				&err) == AMQ_OK,
	      "create: %s", err.message);
	for (int64_t i = from; i < to; i++)
		amq_filter_add(f, h(i), &err);
}

/* xorshift64*: a deterministic shuffle on every platform. */
static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* The counter of position i (low nibble first). */
static unsigned counter(const amq_filter *f, uint64_t i)
{
	return (f->payload[i / 2] >> (i % 2 * 4)) & 15;
}

/* Same m and k as classic, and exactly the classic bits become non-zero. */
static void test_classic_shape(void)
{
	amq_filter c, k;
	amq_error err;
	counting(&c, 5000, 0.01, 0, 0);
	amq_bloom_create(&k, 5000, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	CHECK(c.cells == k.cells && c.hashes == k.hashes, "m %llu k %u vs classic m %llu k %u",
	      (unsigned long long)c.cells, c.hashes, (unsigned long long)k.cells, k.hashes);
	CHECK(c.payload_size == (c.cells * 4 + 63) / 64 * 8, "4 bits per counter");
	for (int64_t i = 0; i < 4000; i++) {
		amq_filter_add(&c, h(i), &err);
		amq_bloom_add(&k, h(i));
	}
	uint64_t differ = 0;
	for (uint64_t i = 0; i < c.cells; i++)
		differ += (counter(&c, i) != 0) != ((k.payload[i / 8] >> (i % 8)) & 1);
	CHECK(differ == 0, "%llu counters disagree with the classic bits",
	      (unsigned long long)differ);
	free_filters(&c, &k);
}

/* 1M values: fpr <= 1.15p; delete a random half in random order and every
 * value still added is present, and the rate falls. */
static void test_million(void)
{
	const int64_t n = 1000000;
	const double p = 0.01;
	amq_filter f;
	amq_error err;
	counting(&f, (uint64_t)n, p, 0, n);
	uint64_t missing = 0, positives = 0;
	for (int64_t i = 0; i < n; i++)
		missing += !amq_filter_contains(&f, h(i));
	for (int64_t i = n; i < 2 * n; i++)
		positives += amq_filter_contains(&f, h(i));
	double fpr = (double)positives / (double)n;
	printf("counting p=%.2f n=1M: measured fpr %.5f (%.3fp), %llu bytes\n", p, fpr, fpr / p,
	       (unsigned long long)f.size);
	CHECK(missing == 0, "%llu false negatives", (unsigned long long)missing);
	CHECK(fpr <= 1.15 * p, "fpr %.5f above 1.15p", fpr);

	int64_t *order = malloc((size_t)n * sizeof(*order));
	for (int64_t i = 0; i < n; i++)
		order[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)(rng() % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	uint64_t refused = 0;
	bool removed;
	for (int64_t i = 0; i < n / 2; i++) {
		CHECK(amq_filter_remove(&f, h(order[i]), &removed, &err) == AMQ_OK, "remove");
		refused += !removed;
	}
	CHECK(refused == 0 && f.items == (uint64_t)(n / 2), "every delete found its value");
	missing = 0;
	for (int64_t i = n / 2; i < n; i++)
		missing += !amq_filter_contains(&f, h(order[i]));
	CHECK(missing == 0, "%llu of the remaining half lost", (unsigned long long)missing);
	uint64_t still = 0;
	for (int64_t i = 0; i < n / 2; i++)
		still += amq_filter_contains(&f, h(order[i]));
	CHECK((double)still / (double)(n / 2) <= 1.15 * p, "deleted values answer present at %.5f",
	      (double)still / (double)(n / 2));
	free(order);
	amq_filter_free(&f, A);
}

/* One value added and deleted 20 times: nothing else is lost, and the
 * counters it saturated stay saturated (and set). */
static void test_saturation(void)
{
	amq_filter f;
	counting(&f, 1000, 0.01, 1, 501);
	add_times(&f, 0, 20);
	amq_error err;
	uint64_t count;
	amq_filter_frequency(&f, h(0), &count, &err);
	CHECK(count >= 20, "frequency %llu after 20 adds", (unsigned long long)count);
	bool removed;
	for (int r = 0; r < 20; r++)
		amq_filter_remove(&f, h(0), &removed, &err);
	uint64_t missing = 0;
	for (int64_t i = 1; i <= 500; i++)
		missing += !amq_filter_contains(&f, h(i));
	CHECK(missing == 0, "%llu other values lost", (unsigned long long)missing);
	uint64_t pos_saturated = 0;
	for (uint64_t i = 0; i < f.cells; i++)
		pos_saturated += counter(&f, i) == 15;
	CHECK(pos_saturated >= f.hashes, "%llu saturated counters remain, want >= %u",
	      (unsigned long long)pos_saturated, f.hashes);
	CHECK(amq_filter_contains(&f, h(0)), "a saturated value stays present");
	amq_filter_free(&f, A);
}

/* Frequencies with known multiplicities (0..19), and after some deletes. */
static void test_frequency(void)
{
	amq_filter f;
	counting(&f, 20000, 0.01, 0, 0);
	for (int64_t i = 0; i < 10000; i++)
		add_times(&f, i, i % 20);
	amq_error err;
	bool removed;
	for (int64_t i = 0; i < 10000; i += 3)
		if (i % 20 > 0)
			amq_filter_remove(&f, h(i), &removed, &err);
	uint64_t below = 0, exact = 0, countable = 0, absent_zero = 0;
	for (int64_t i = 0; i < 10000; i++) {
		uint64_t truth = (uint64_t)(i % 20) - (i % 3 == 0 && i % 20 > 0), count;
		amq_filter_frequency(&f, h(i), &count, &err);
		below += count < truth;
		/* Below 15 a counter counts; at 15 it saturated for good. */
		countable += truth < 15;
		exact += truth < 15 && count == truth;
	}
	for (int64_t i = 10000; i < 20000; i++) {
		uint64_t count;
		amq_filter_frequency(&f, h(i), &count, &err);
		absent_zero += count == 0;
	}
	CHECK(below == 0, "%llu frequencies below the true count", (unsigned long long)below);
	CHECK(exact > countable * 95 / 100, "only %llu of %llu frequencies below 15 exact",
	      (unsigned long long)exact, (unsigned long long)countable);
	CHECK(absent_zero > 9800, "only %llu of 10000 absent values at 0",
	      (unsigned long long)absent_zero);
	/* A delete of a certainly absent value changes nothing. */
	amq_filter copy;
	amq_filter_clone(&copy, &f, A, &err);
	int64_t absent = 10000;
	while (amq_filter_contains(&f, h(absent)))
		absent++;
	CHECK(amq_filter_remove(&copy, h(absent), &removed, &err) == AMQ_OK && !removed &&
		  memcmp(copy.bytes, f.bytes, f.size) == 0 && copy.items == f.items,
	      "deleting an absent value changes nothing");
	free_filters(&copy, &f);
}

/* Union adds counters (saturating): the union of two parts is the filter of
 * the whole; intersection keeps the smaller counter. */
static void test_combine(void)
{
	amq_filter a, b, whole;
	amq_error err;
	counting(&a, 3000, 0.01, 0, 0);
	counting(&b, 3000, 0.01, 0, 0);
	counting(&whole, 3000, 0.01, 0, 0);
	for (int64_t i = 0; i < 3000; i++) {
		for (int r = 0; r <= i % 12; r++) {
			amq_filter_add(i % 2 ? &a : &b, h(i), &err);
			amq_filter_add(&whole, h(i), &err);
		}
	}
	amq_filter u;
	amq_filter_clone(&u, &a, A, &err);
	CHECK(amq_filter_union_into(&u, &b, &err) == AMQ_OK, "union");
	amq_filter_seal(&u);
	amq_filter_seal(&whole);
	CHECK(u.size == whole.size && memcmp(u.bytes, whole.bytes, u.size) == 0,
	      "union of the parts = filter of the whole, byte for byte");
	amq_filter_intersect_into(&u, &a, &err);
	bool smaller = true;
	for (uint64_t i = 0; i < u.cells; i++) {
		unsigned x = counter(&a, i), y = counter(&whole, i);
		smaller &= counter(&u, i) == (x < y ? x : y);
	}
	CHECK(smaller, "intersection keeps the smaller counter");
	amq_filter classic;
	amq_bloom_create(&classic, 3000, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	CHECK(amq_filter_union_into(&a, &classic, &err) == AMQ_INCOMPATIBLE &&
		  strstr(err.message, "counting") != NULL && strstr(err.message, "classic") != NULL,
	      "counting with classic: %s", err.message);
	free_filters(&classic, &u, &a, &b, &whole);
}

/* Written as format version 2; version 1 never had the layout; 3 is newer. */
static void test_format(void)
{
	amq_filter f, g;
	amq_error err;
	counting(&f, 100, 0.01, 1, 2);
	amq_filter_seal(&f);
	CHECK(f.bytes[4] == AMQ_FAMILIES_FORMAT_VERSION && f.bytes[6] == AMQ_LAYOUT_COUNTING,
	      "version 4, layout 2");
	/* Without families it is sealed as amq 0.2.0 wrote it. */
	f.families = AMQ_FAMILIES_UNKNOWN;
	amq_filter_seal(&f);
	CHECK(f.bytes[4] == 2 && f.bytes[6] == AMQ_LAYOUT_COUNTING, "version 2, layout 2");
	CHECK(amq_filter_read(&g, f.bytes, f.size, AMQ_KIND_BLOOM, false, "bloom_contains",
			      "filter", &err) == AMQ_OK,
	      "reads back: %s", err.message);
	char json[512];
	amq_filter_info_json(&f, json, sizeof(json));
	CHECK(strstr(json, "\"layout\":\"counting\"") && strstr(json, "\"format_version\":2,"),
	      "info %s", json);
	CHECK(refused_as_version(
		  &f, 1, "invalid amq filter: format version 1 has no counting bloom layout", &err),
	      "version 1: %s", err.message);
	char want[128];
	unsigned newer = newer_version(want, sizeof(want));
	CHECK(refused_as_version(&f, (uint8_t)newer, want, &err), "version %u: %s", newer,
	      err.message);
	amq_filter_free(&f, A);
	/* Classic, blocked and cuckoo filters without families are still
	 * written as version 1. */
	amq_bloom_create(&f, 100, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err);
	f.families = AMQ_FAMILIES_UNKNOWN;
	amq_filter_seal(&f);
	CHECK(f.bytes[4] == 1, "blocked: version 1");
	amq_filter_free(&f, A);
}

/* Aggregates count every row, sized for the distinct values or streaming,
 * with the same bytes whatever the order and the split. */
static void test_builder(void)
{
	for (uint64_t capacity = 0; capacity <= 2000; capacity += 2000) {
		amq_filter a, b;
		amq_error err;
		aggregate(AMQ_LAYOUT_COUNTING, capacity, 10000, 1000, 1, false, true, &a);
		aggregate(AMQ_LAYOUT_COUNTING, capacity, 10000, 1000, 7919, true, true, &b);
		CHECK(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0,
		      "capacity %llu: same bytes for another order and split",
		      (unsigned long long)capacity);
		CHECK(a.items == 10000, "capacity %llu: every row counted (%llu)",
		      (unsigned long long)capacity, (unsigned long long)a.items);
		uint64_t below = 0, count;
		for (int64_t i = 0; i < 1000; i++) {
			amq_filter_frequency(&a, h(i), &count, &err);
			below += count < 10;
		}
		CHECK(below == 0, "capacity %llu: %llu values below their 10 rows",
		      (unsigned long long)capacity, (unsigned long long)below);
		free_filters(&a, &b);
	}
}

int main(void)
{
	test_classic_shape();
	test_million();
	test_saturation();
	test_frequency();
	test_combine();
	test_format();
	test_builder();
	return check_summary();
}
