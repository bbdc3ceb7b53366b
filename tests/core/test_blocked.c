/*
 * test_blocked.c - the blocked Bloom layout: an item's bits land exactly
 * where docs/FORMAT.md says (recomputed here from the text, not from core's
 * helpers), and the portable and AVX2 probes answer alike, on aligned and
 * unaligned buffers, as does the probe amq_filter_probe_for hands out; the
 * concurrent add sets the bits the plain one does; the batch probe answers
 * as the single one.
 */
#include "amq.h"
#include "check.h"
#include "helpers.h"
#include "bloom/bloom_internal.h"
#include "spec.h"

#include <stdlib.h>
#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* Sets, in an expected payload, the bits FORMAT.md gives hash h. */
static void spec_add(uint8_t *payload, uint64_t bits, uint32_t k, uint64_t h)
{
	uint64_t block = spec_reduce(h, bits / 512);
	uint64_t g = spec_mix64(h);
	for (uint32_t i = 0; i < k; i++) {
		uint64_t word = (g % 8 + i) % 8;
		uint64_t bit = (g >> (3 + 6 * word)) % 64;
		uint64_t at = block * 512 + word * 64 + bit;
		payload[at / 8] |= (uint8_t)(1u << (at % 8));
	}
}

/* Every k, one and several blocks: the payload after each add equals the
 * one computed from the spec. */
static void placement_follows_spec(void)
{
	const uint64_t blocks[] = {1, 3, 1000};
	for (uint32_t k = 1; k <= AMQ_BLOOM_BLOCKED_MAX_HASHES; k++) {
		for (int b = 0; b < 3; b++) {
			uint64_t bits = blocks[b] * 512;
			amq_filter f;
			amq_error err;
			CHECK(amq_bloom_create_exact(&f, AMQ_LAYOUT_BLOCKED, bits, k, 0, A, &err) ==
				  AMQ_OK,
			      "create %llu bits, k %u: %s", (unsigned long long)bits, k,
			      err.message);
			uint8_t *expected = calloc(1, bits / 8);
			int differ = 0;
			for (int64_t v = 0; v < 300; v++) {
				uint64_t h = amq_hash_int(v, 0);
				amq_bloom_add(&f, h);
				spec_add(expected, bits, k, h);
				differ += memcmp(f.payload, expected, bits / 8) != 0;
			}
			CHECK(differ == 0, "k %u, %llu blocks: %d adds left bits off the spec", k,
			      (unsigned long long)blocks[b], differ);
			free(expected);
			amq_filter_free(&f, A);
		}
	}
}

/* Words worked out by hand from FORMAT.md, so that spec and code cannot drift
 * together: int 42 (hash 3d8e917a3bb2a06c, mix64 3280247b2dc10129, first word
 * 1) in a one-block filter, with k = 8 (a bit in every word) and k = 1 (word 1
 * only). */
static void known_answer(void)
{
	const uint64_t words[8] = {0x2000000000ULL,   0x1ULL,	       0x4ULL,
				   0x400000000000ULL, 0x2000000000ULL, 0x2000000000000000ULL,
				   0x100ULL,	      0x2ULL};
	for (uint32_t k = 1; k <= 8; k += 7) {
		amq_filter f;
		amq_error err;
		amq_bloom_create_exact(&f, AMQ_LAYOUT_BLOCKED, 512, k, 0, A, &err);
		amq_bloom_add(&f, amq_hash_int(42, 0));
		int differ = 0;
		for (int j = 0; j < 8; j++)
			differ +=
			    amq_load64le(f.payload + 8 * j) != (k == 8 || j == 1 ? words[j] : 0);
		CHECK(differ == 0, "int 42, k %u: %d words differ from the hand-computed ones", k,
		      differ);
		amq_filter_free(&f, A);
	}
}

/* Probes of a half-full filter, through every path this CPU has, on the
 * filter's own (aligned) buffer and on a copy one byte off alignment. */
static void probes_agree(void)
{
	for (uint32_t k = 1; k <= AMQ_BLOOM_BLOCKED_MAX_HASHES; k++) {
		amq_filter f, shifted;
		amq_error err;
		amq_bloom_create_exact(&f, AMQ_LAYOUT_BLOCKED, 64 * 512, k, 0, A, &err);
		uint64_t state = k;
		/* n k / m = ln 4: three bits in four set, so that even at k = 8
		 * about 10% of the probes answer true */
		for (int i = 0; i < 45000 / (int)k; i++)
			amq_bloom_add(&f, next_random(&state));
		amq_filter_seal(&f);
		uint8_t *copy = malloc(f.size + 1);
		memcpy(copy + 1, f.bytes, f.size);
		CHECK(amq_filter_open(&shifted, copy + 1, f.size, &err) == AMQ_OK, "open copy");
		amq_probe probe = amq_filter_probe_for(&f);
		struct probe_tally t = {0};
		for (int i = 0; i < 200000; i++) {
			uint64_t h = next_random(&state);
			bool answer = amq_blocked_contains_portable(&f, h);
			tally_probe(&t, &f, probe, h, answer);
			t.differ += amq_filter_contains(&shifted, h) != answer;
#ifdef AMQ_HAVE_AVX2_PROBE
			if (amq_cpu_has_avx2()) {
				t.differ += amq_blocked_contains_avx2(&f, h) != answer;
				t.differ += amq_blocked_contains_avx2(&shifted, h) != answer;
			}
#endif
		}
		CHECK(t.differ == 0 && t.positive > 1000 && t.negative > 1000,
		      "k %u: %d disagreements (%d positive, %d negative answers)", k, t.differ,
		      t.positive, t.negative);
		free(copy);
		amq_filter_free(&f, A);
	}
#ifdef AMQ_HAVE_AVX2_PROBE
	printf("blocked probes compared: portable%s\n",
	       amq_cpu_has_avx2() ? " and AVX2" : " only (this CPU has no AVX2)");
#endif
}

/* The concurrent add sets the same payload bits as amq_bloom_add, for every k
 * (on big-endian targets too: its atomic OR works on the words in memory). */
static void concurrent_add_matches(void)
{
	for (uint32_t k = 1; k <= AMQ_BLOOM_BLOCKED_MAX_HASHES; k++) {
		amq_filter plain, shared;
		amq_error err;
		amq_bloom_create_exact(&plain, AMQ_LAYOUT_BLOCKED, 16 * 512, k, 0, A, &err);
		amq_bloom_create_exact(&shared, AMQ_LAYOUT_BLOCKED, 16 * 512, k, 0, A, &err);
		uint64_t state = 100 + k;
		for (int i = 0; i < 2000; i++) {
			uint64_t h = next_random(&state);
			amq_bloom_add(&plain, h);
			amq_blocked_add_concurrent(&shared, h);
		}
		CHECK(amq_bloom_bits_set(&plain) > 0 &&
			  memcmp(plain.payload, shared.payload, plain.payload_size) == 0,
		      "k %u: the concurrent add's payload differs from amq_bloom_add's", k);
		amq_filter_free(&plain, A);
		amq_filter_free(&shared, A);
	}
}

/* amq_filter_contains_many gives, for each hash, amq_filter_contains's answer:
 * on the blocked layout (prefetched) and the classic one (a plain loop), for batches shorter and
 * longer than its prefetch distance, of added and absent values. */
static void contains_many_agrees(void)
{
	static const amq_layout layouts[] = {AMQ_LAYOUT_CLASSIC, AMQ_LAYOUT_BLOCKED};
	static const size_t lengths[] = {0, 1, 7, 8, 9, 300, 5000};
	enum { N = 5000 };
	uint64_t *hashes = malloc(N * sizeof(uint64_t));
	bool *out = malloc(N);

	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		amq_filter f;
		amq_error err;
		uint64_t state = 77 + l;
		int wrong = 0, present = 0;

		CHECK(amq_bloom_create(&f, 2000, 0.05, layouts[l], 0, A, &err) == AMQ_OK, "%s",
		      err.message);
		for (int i = 0; i < N; i++) {
			hashes[i] = next_random(&state);
			if (i % 3 == 0)
				amq_bloom_add(&f, hashes[i]);
		}
		for (size_t n = 0; n < sizeof(lengths) / sizeof(lengths[0]); n++) {
			memset(out, 2, N);
			amq_filter_contains_many(&f, hashes, lengths[n], out);
			for (size_t i = 0; i < lengths[n]; i++) {
				wrong += out[i] != amq_filter_contains(&f, hashes[i]);
				present += out[i];
			}
			for (size_t i = lengths[n]; i < N; i++)
				wrong += ((uint8_t *)out)[i] != 2; /* nothing past n is written */
		}
		CHECK(wrong == 0, "layout %d: %d answers differ from amq_filter_contains",
		      (int)layouts[l], wrong);
		CHECK(present > 0, "layout %d: no value found", (int)layouts[l]);
		amq_filter_free(&f, A);
	}
	free(hashes);
	free(out);
}

int main(void)
{
	known_answer();
	placement_follows_spec();
	probes_agree();
	concurrent_add_matches();
	contains_many_agrees();
	return check_summary();
}
