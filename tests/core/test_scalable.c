/*
 * test_scalable.c - the scalable Bloom filter: measured fpr within 1.15p at
 * 1x, 10x and 100x its first capacity with no false negatives; the chain's
 * schedule (capacity x expansion, rate p / 2^(i+1), blocked links); union of
 * chains of the same shape and the error for any other; aggregates that give
 * the same bytes whatever the row order and split; the format checks.
 */
#include "amq.h"
#include "bloom/bloom_internal.h"
#include "check.h"
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

static uint64_t h(int64_t i)
{
	return amq_hash_int(i, 0);
}

/* A chain grown by adds of [from, to). */
static void grow(amq_filter *f, int64_t from, int64_t to)
{
	amq_error err;
	for (int64_t i = from; i < to; i++)
		if (amq_filter_add_to(f, h(i), A, &err) != AMQ_OK) {
			CHECK(false, "add %lld: %s", (long long)i, err.message);
			return;
		}
}

/* The number of links bloom_info lists. */
static int links_of(const amq_filter *f)
{
	char json[AMQ_INFO_MAX];
	amq_filter_info_json(f, json, sizeof(json));
	int links = 0;
	for (const char *s = json; (s = strstr(s, "\"error\"")) != NULL; s++)
		links++;
	return links;
}

/* At 1x, 10x and 100x the first capacity: no false negatives, measured
 * fpr <= 1.15p, and a compound rate below p by the links' own rates. */
static void test_growth(void)
{
	const uint64_t capacity = 10000;
	const double p = 0.01;
	amq_filter f;
	amq_error err;
	CHECK(amq_scalable_create(&f, capacity, p, 2, 0, A, &err) == AMQ_OK, "create: %s",
	      err.message);
	int64_t added = 0;
	for (int times = 1; times <= 100; times *= 10) {
		int64_t n = (int64_t)capacity * times;
		grow(&f, added, n);
		added = n;
		uint64_t missing = 0, positives = 0;
		for (int64_t i = 0; i < n; i++)
			missing += !amq_filter_contains(&f, h(i));
		const int64_t probes = 1000000;
		for (int64_t i = 0; i < probes; i++)
			positives += amq_filter_contains(&f, h(-1 - i));
		double fpr = (double)positives / (double)probes;
		char json[AMQ_INFO_MAX];
		amq_filter_info_json(&f, json, sizeof(json));
		int links = 0;
		for (const char *s = json; (s = strstr(s, "\"error\"")) != NULL; s++)
			links++;
		printf("scalable p=%.2f, %dx capacity: %d links, %llu bytes, measured fpr %.5f "
		       "(%.3fp), expected %.5f\n",
		       p, times, links, (unsigned long long)f.size, fpr, fpr / p,
		       amq_filter_expected_fpr(&f));
		CHECK(missing == 0, "%dx: %llu false negatives", times,
		      (unsigned long long)missing);
		CHECK(fpr <= 1.15 * p, "%dx: fpr %.5f above 1.15p", times, fpr);
		CHECK(amq_filter_expected_fpr(&f) < p, "%dx: compound expected fpr %g", times,
		      amq_filter_expected_fpr(&f));
		CHECK(times > 1 || links == 1, "1x fits the first link (%d links)", links);
		CHECK(times == 1 || links > 1, "%dx grew the chain", times);
	}
	amq_filter_free(&f, A);
}

/* amq_bloom_add cannot grow a chain (no allocator), but must never lose a
 * value: past a full newest link it adds there anyway, and amq_filter_add
 * (which reports) refuses without changing the filter. */
static void test_add_without_allocator(void)
{
	amq_filter f;
	amq_error err;
	CHECK(amq_scalable_create(&f, 100, 0.01, 2, 0, A, &err) == AMQ_OK, "create: %s",
	      err.message);
	for (int64_t i = 0; i < 300; i++)
		amq_bloom_add(&f, h(i));
	uint64_t missing = 0;
	for (int64_t i = 0; i < 300; i++)
		missing += !amq_filter_contains(&f, h(i));
	CHECK(missing == 0, "amq_bloom_add past a full link lost %llu of 300 values",
	      (unsigned long long)missing);
	CHECK(links_of(&f) == 1, "amq_bloom_add grew the chain to %d links", links_of(&f));
	CHECK(f.items > 100 && f.items <= 300, "items %llu", (unsigned long long)f.items);
	amq_filter_seal(&f);
	amq_filter g;
	CHECK(amq_filter_open(&g, f.bytes, f.size, &err) == AMQ_OK &&
		  amq_filter_verify(&g, &err) == AMQ_OK,
	      "an overfull link reads back: %s", err.message);
	/* The overfull link holds most values by chance: probe one it rules out. */
	int64_t absent = -1;
	while (absent > -1000000 && amq_filter_contains(&f, h(absent)))
		absent--;
	uint8_t *before = malloc(f.size);
	memcpy(before, f.bytes, f.size);
	CHECK(amq_filter_add(&f, h(absent), &err) == AMQ_FILTER_FULL &&
		  memcmp(before, f.bytes, f.size) == 0,
	      "amq_filter_add on a full link: %s", err.message);
	free(before);
	CHECK(amq_filter_add_to(&f, h(absent), A, &err) == AMQ_OK && links_of(&f) == 2 &&
		  amq_filter_contains(&f, h(absent)),
	      "amq_filter_add_to grows it (%d links): %s", links_of(&f), err.message);
	amq_filter_free(&f, A);
}

/* Link i: capacity c e^i, rate p / 2^(i+1), a blocked filter of at most 8
 * hashes; bloom_info lists them in order. */
static void test_schedule(void)
{
	amq_filter f;
	amq_error err;
	amq_scalable_create(&f, 100, 0.02, 3, 0, A, &err);
	grow(&f, 0, 1400);
	char json[AMQ_INFO_MAX];
	amq_filter_info_json(&f, json, sizeof(json));
	CHECK(
	    strstr(json, "\"layout\":\"scalable\",\"fpr\":0.02,\"capacity\":100,\"expansion\":3") !=
		NULL,
	    "chain header: %s", json);
	const char *want[] = {"{\"capacity\":100,", "{\"capacity\":300,", "{\"capacity\":900,",
			      "{\"capacity\":2700,"};
	const char *rates[] = {"\"error\":0.01,", "\"error\":0.005,", "\"error\":0.0025,",
			       "\"error\":0.00125,"};
	const char *at = json;
	for (int i = 0; i < 4; i++) {
		const char *link = strstr(at, want[i]);
		CHECK(link != NULL && strstr(link, rates[i]) != NULL, "link %d: %s", i, json);
		if (link != NULL)
			at = link + 1;
	}
	CHECK(strstr(json, "{\"capacity\":8100,") == NULL, "no fifth link yet");
	CHECK(strstr(json, "\"format_version\":4,") != NULL && f.bytes[4] == 4 && f.bytes[6] == 3,
	      "format version 4, layout 3");
	/* A header from format version 1 cannot name the layout. */
	CHECK(refused_as_version(
		  &f, 1, "invalid amq filter: format version 1 has no scalable bloom layout", &err),
	      "%s", err.message);
	/* Without an allocator a full newest link refuses to grow. */
	amq_filter copy;
	amq_filter_clone(&copy, &f, A, &err);
	grow(&copy, 100000, 100000 + 1490);
	int64_t v = 200000;
	amq_status st = AMQ_OK;
	for (; st == AMQ_OK && v < 210000; v++)
		st = amq_filter_add(&copy, h(v), &err);
	CHECK(st == AMQ_FILTER_FULL, "amq_filter_add cannot grow a chain");
	amq_filter_free(&copy, A);
	amq_filter g;
	CHECK(amq_scalable_create(&g, 10, 0.01, 33, 0, A, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message, "expansion must be between 1 and 32, got 33") == 0,
	      "%s", err.message);
	CHECK(amq_filter_create_expanding(&g, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 10, 0.01, 2, 0, A,
					  &err) == AMQ_INVALID_ARGUMENT,
	      "blocked takes no expansion: %s", err.message);
	amq_filter_free(&f, A);
}

/* Union and intersection of chains of one shape; any other is refused. */
static void test_combine(void)
{
	amq_filter a, b, c;
	amq_error err;
	amq_scalable_create(&a, 100, 0.01, 2, 0, A, &err);
	amq_scalable_create(&b, 100, 0.01, 2, 0, A, &err);
	amq_scalable_create(&c, 100, 0.01, 2, 0, A, &err);
	grow(&a, 0, 250);
	grow(&b, 1000, 1250);
	grow(&c, 0, 50);
	CHECK(amq_filter_union_into(&a, &b, &err) == AMQ_OK, "union: %s", err.message);
	uint64_t missing = 0;
	for (int64_t i = 0; i < 250; i++)
		missing += !amq_filter_contains(&a, h(i)) + !amq_filter_contains(&a, h(1000 + i));
	CHECK(missing == 0, "union lost %llu values", (unsigned long long)missing);
	amq_status st = amq_filter_union_into(&a, &c, &err);
	CHECK(st == AMQ_INCOMPATIBLE && strstr(err.message, "2 links") &&
		  strstr(err.message, "1 links"),
	      "different shapes: %s", err.message);
	amq_filter blocked;
	amq_bloom_create(&blocked, 100, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err);
	CHECK(amq_filter_union_into(&c, &blocked, &err) == AMQ_INCOMPATIBLE,
	      "scalable with blocked: %s", err.message);
	CHECK(amq_filter_intersect_into(&a, &b, &err) == AMQ_OK, "intersect: %s", err.message);
	/* Same chain header and size, but link 0 with one hash more: it opens,
	 * and must not be combined bit for bit with a. */
	amq_filter edited, view;
	amq_filter_clone(&edited, &a, A, &err);
	edited.payload[64 + 16]--;
	amq_filter_seal(&edited);
	CHECK(amq_filter_open(&view, edited.bytes, edited.size, &err) == AMQ_OK &&
		  amq_filter_verify(&view, &err) == AMQ_OK,
	      "edited link opens: %s", err.message);
	st = amq_filter_union_into(&a, &view, &err);
	CHECK(st == AMQ_INCOMPATIBLE && strstr(err.message, "link 0 differs"),
	      "union with a different link 0: %s", err.message);
	st = amq_filter_intersect_into(&view, &a, &err);
	CHECK(st == AMQ_INCOMPATIBLE && strstr(err.message, "link 0 differs"),
	      "intersect with a different link 0: %s", err.message);
	free_filters(&edited, &blocked, &a, &b, &c);
}

/* The aggregate collects the distinct hashes and adds them in an order that
 * depends only on the set: the same bytes for any row order or split, and a
 * chain that grows from the capacity given as adds would grow it. */
static void test_builder(void)
{
	amq_filter a, b, manual;
	amq_error err;
	aggregate(AMQ_LAYOUT_SCALABLE, 500, 20000, 5000, 1, false, false, &a);
	aggregate(AMQ_LAYOUT_SCALABLE, 500, 20000, 5000, 7919, true, false, &b);
	CHECK(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0,
	      "same bytes for another order and split");
	/* As good as the chain of the same values added one by one: the same
	 * links, every value present, the rate kept. */
	amq_scalable_create(&manual, 500, 0.01, 2, 0, A, &err);
	grow(&manual, 0, 5000);
	CHECK(links_of(&manual) == links_of(&a) && links_of(&a) == 4,
	      "%d links from the aggregate, %d from adds", links_of(&a), links_of(&manual));
	uint64_t missing = 0, positives = 0;
	for (int64_t i = 0; i < 5000; i++)
		missing += !amq_filter_contains(&a, h(i));
	for (int64_t i = 0; i < 200000; i++)
		positives += amq_filter_contains(&a, h(-1 - i));
	CHECK(missing == 0 && positives <= 0.0115 * 200000,
	      "aggregate: %llu false negatives, fpr %.5f", (unsigned long long)missing,
	      (double)positives / 200000);
	free_filters(&manual, &a, &b);
	/* Without a capacity: one link sized for the distinct values. */
	aggregate(AMQ_LAYOUT_SCALABLE, 0, 3000, 1000, 1, true, false, &a);
	char json[AMQ_INFO_MAX];
	amq_filter_info_json(&a, json, sizeof(json));
	CHECK(strstr(json, "\"links\":[{\"capacity\":1000,") && !strstr(json, "},{"),
	      "sized for the distinct values: %s", json);
	amq_filter_free(&a, A);
}

/* Damaged chains are refused when they open, whatever else is right. */
static void test_damage(void)
{
	amq_filter f, g;
	amq_error err;
	amq_scalable_create(&f, 50, 0.01, 2, 0, A, &err);
	grow(&f, 0, 120);
	amq_filter_seal(&f);
	CHECK(amq_filter_open(&g, f.bytes, f.size, &err) == AMQ_OK &&
		  amq_filter_verify(&g, &err) == AMQ_OK,
	      "a grown chain reads back: %s", err.message);
	/* Each of these edits is resealed, so only the chain checks catch it. */
	static const struct {
		size_t offset;
		uint8_t value;
		const char *message;
	} edits[] = {
	    {64 + 20, 65, "invalid amq filter: bad scalable chain header"},
	    {64 + 20, 9, "invalid amq filter: the table of 9 scalable links lies past the end"},
	    {64 + 16, 0, "invalid amq filter: bad scalable chain header"},
	    {64 + 64 + 16, 9, "invalid amq filter: bad scalable link 0"},
	    {64 + 64 + 8, 1, "invalid amq filter: bad scalable link 0"},
	    {64 + 64 + 24, 3, "invalid amq filter: header counts"},
	};
	for (size_t e = 0; e < sizeof(edits) / sizeof(edits[0]); e++) {
		uint8_t *copy = malloc(f.size);
		memcpy(copy, f.bytes, f.size);
		copy[edits[e].offset] = edits[e].value;
		amq_filter view = f;
		view.bytes = copy;
		view.payload = copy + 64;
		amq_filter_seal(&view);
		CHECK(amq_filter_open(&g, copy, f.size, &err) == AMQ_INVALID_FILTER &&
			  strncmp(err.message, edits[e].message, strlen(edits[e].message)) == 0,
		      "edit %zu: %s", e, err.message);
		free(copy);
	}
	amq_filter_free(&f, A);
}

int main(void)
{
	test_growth();
	test_add_without_allocator();
	test_schedule();
	test_combine();
	test_builder();
	test_damage();
	return check_summary();
}
