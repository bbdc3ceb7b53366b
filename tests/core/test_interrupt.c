/*
 * test_interrupt.c - core's long loops poll the allocator's interrupted hook
 * (clearing a large filter, sorting and counting collected hashes, inserting
 * them) and stop with AMQ_INTERRUPTED, every allocation freed, at the first
 * poll that says stop; a hook that never says stop changes no byte.
 */
#include "amq.h"
#include "check.h"
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

/* Clearing a filter of about 120 MB polls about every 16 MiB. */
static void test_create(void)
{
	struct probe p;
	amq_allocator a = probe_allocator(&p, 0);
	amq_filter f;
	amq_error err;
	CHECK(amq_filter_create(&f, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 100000000, 0.01, 0, &a,
				&err) == AMQ_OK,
	      "create: %s", err.message);
	long want = (long)(f.size / (AMQ_INTERRUPT_EVERY * 64));
	CHECK(p.polls >= want && p.polls <= want + 1, "%ld polls clearing %zu bytes", p.polls,
	      f.size);
	amq_filter_free(&f, &a);
	a = probe_allocator(&p, 2);
	CHECK(amq_filter_create(&f, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 100000000, 0.01, 0, &a,
				&err) == AMQ_INTERRUPTED &&
		  strcmp(err.message, "interrupted") == 0 && p.polls == 2 && p.live == 0,
	      "stopped at the second poll, nothing kept: %s, %ld polls, %ld live", err.message,
	      p.polls, p.live);
}

/* A builder of n distinct hashes, then its filter in *out: the first status
 * that is not AMQ_OK, adds (which sort when the buffer fills) included. */
static amq_status build(amq_kind kind, amq_layout layout, uint64_t n, const amq_allocator *a,
			amq_filter *out)
{
	amq_builder b;
	amq_error err;
	amq_status st = amq_builder_init(&b, kind, layout, 0.01, 0, 0, a, &err);
	for (uint64_t i = 0; st == AMQ_OK && i < n; i++)
		st = amq_builder_add(&b, amq_hash_int((int64_t)i, 0), &err);
	if (st == AMQ_OK)
		st = amq_builder_finish(&b, out, &err);
	amq_builder_free(&b);
	return st;
}

/* Builders: every stop point frees everything; never stopping gives the
 * bytes of a builder without the hook. */
static void test_builder(void)
{
	const struct {
		amq_kind kind;
		amq_layout layout;
		uint64_t n;
	} cases[] = {
	    {AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 3000000},
	    {AMQ_KIND_BLOOM, AMQ_LAYOUT_SCALABLE, 1000000},
	    {AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 1000000},
	    {AMQ_KIND_BLOOM, AMQ_LAYOUT_COUNTING, 1000000},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		amq_filter want, got;
		build(cases[c].kind, cases[c].layout, cases[c].n, &amq_malloc_allocator, &want);
		struct probe p;
		amq_allocator a = probe_allocator(&p, 0);
		CHECK(build(cases[c].kind, cases[c].layout, cases[c].n, &a, &got) == AMQ_OK &&
			  got.size == want.size && memcmp(got.bytes, want.bytes, want.size) == 0,
		      "case %zu: never stopping changes no byte", c);
		amq_filter_free(&got, &a);
		long polls = p.polls;
		CHECK(polls >= (long)(cases[c].n / AMQ_INTERRUPT_EVERY), "case %zu: %ld polls", c,
		      polls);
		/* Stop at the first polls, one in the middle, and the last. */
		long stops[] = {1, 2, 3, polls / 2, polls};
		for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
			a = probe_allocator(&p, stops[i] > 0 ? stops[i] : 1);
			amq_status st = build(cases[c].kind, cases[c].layout, cases[c].n, &a, &got);
			if (st == AMQ_OK)
				amq_filter_free(&got, &a);
			CHECK(st == AMQ_INTERRUPTED && p.live == 0,
			      "case %zu, stop at poll %ld of %ld: status %d, %ld blocks kept", c,
			      stops[i], polls, (int)st, p.live);
		}
		amq_filter_free(&want, &amq_malloc_allocator);
	}
}

int main(void)
{
	test_create();
	test_builder();
	return check_summary();
}
