/*
 * test_classic.c - the classic Bloom layout: an item's bits land where
 * docs/FORMAT.md says (the walk recomputed here from the text, duplicates
 * moved on to the next free bit), and the probe answers exactly as that walk
 * does, through amq_filter_contains and through the probe amq_filter_probe_for
 * hands out, on filters so small that positions collide and on filters
 * filled to their capacity.
 */
#include "amq.h"
#include "bloom/bloom_internal.h"
#include "check.h"
#include "helpers.h"
#include "spec.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* Whether every position of h is set in the filter's payload. */
static bool spec_contains(const amq_filter *f, uint64_t h)
{
	uint64_t pos[AMQ_BLOOM_MAX_HASHES];
	spec_positions(f->cells, f->hashes, h, pos);
	for (uint32_t i = 0; i < f->hashes; i++)
		if (!spec_bit(f->payload, pos[i]))
			return false;
	return true;
}

/* Adds go where the spec says: after each add the payload equals the one
 * built from spec_positions, for tiny filters (k = m: every bit collides)
 * and ordinary ones. */
static void placement_follows_spec(void)
{
	const struct {
		uint64_t bits;
		uint32_t k;
	} cases[] = {{1, 1}, {30, 30}, {31, 30}, {64, 30}, {100, 7}, {9586, 7}, {70001, 13}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		amq_filter f;
		amq_error err;
		CHECK(amq_bloom_create_exact(&f, AMQ_LAYOUT_CLASSIC, cases[c].bits, cases[c].k, 0,
					     A, &err) == AMQ_OK,
		      "%s", err.message);
		uint8_t *expected = calloc(f.payload_size, 1);
		uint64_t state = c, pos[AMQ_BLOOM_MAX_HASHES];
		int differ = 0;
		for (int i = 0; i < 200; i++) {
			uint64_t h = next_random(&state);
			spec_positions(f.cells, f.hashes, h, pos);
			for (uint32_t j = 0; j < f.hashes; j++)
				expected[pos[j] / 8] |= (uint8_t)(1u << (pos[j] % 8));
			amq_bloom_add(&f, h);
			differ += memcmp(expected, f.payload, f.payload_size) != 0;
		}
		CHECK(differ == 0, "%llu bits, k %u: %d adds differ from the spec",
		      (unsigned long long)cases[c].bits, cases[c].k, differ);
		free(expected);
		amq_filter_free(&f, A);
	}
}

/* Probes answer as the spec's walk does, with many answers of each kind:
 * filters from nearly empty to past their capacity, so that a probe may stop
 * at any of its k bits, and tiny ones whose positions collide. */
static void probes_follow_spec(void)
{
	const struct {
		uint64_t bits;
		uint32_t k;
		int adds;
	} cases[] = {{64, 30, 1},	{64, 30, 2},	   {100, 7, 8},	       {127, 13, 5},
		     {9586, 7, 200},	{9586, 7, 1000},   {9586, 7, 2500},    {95851, 1, 30000},
		     {95851, 2, 20000}, {95851, 30, 2000}, {1000003, 5, 60000}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		amq_filter f;
		amq_error err;
		amq_bloom_create_exact(&f, AMQ_LAYOUT_CLASSIC, cases[c].bits, cases[c].k, 0, A,
				       &err);
		uint64_t state = 1000 + c;
		for (int i = 0; i < cases[c].adds; i++)
			amq_bloom_add(&f, next_random(&state));
		amq_probe probe = amq_filter_probe_for(&f);
		struct probe_tally t = {0};
		/* The added values first (all present), then others. */
		state = 1000 + c;
		for (int i = 0; i < 100000; i++) {
			uint64_t h = next_random(&state);
			tally_probe(&t, &f, probe, h, spec_contains(&f, h));
		}
		CHECK(t.differ == 0 && t.positive >= cases[c].adds && t.negative > 1000,
		      "%llu bits, k %u, %d adds: %d disagreements (%d positive, %d negative)",
		      (unsigned long long)cases[c].bits, cases[c].k, cases[c].adds, t.differ,
		      t.positive, t.negative);
		amq_filter_free(&f, A);
	}
}

int main(void)
{
	placement_follows_spec();
	probes_follow_spec();
	return check_summary();
}
