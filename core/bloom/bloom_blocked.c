/*
 * bloom_blocked.c - where a blocked Bloom filter keeps an item's bits, and
 * the probe that tests them.
 *
 * The hash picks one 512-bit block (one cache line) of eight 64-bit words;
 * g = mix64(hash) supplies the rest: its low 3 bits a first word w, and bits
 * 3 + 6j .. 8 + 6j the bit of word j. An item uses the k words w, w + 1, ...,
 * w + k - 1 (mod 8), one bit in each, so its k bits are distinct and every
 * word carries the same load: the sizing model of bloom_sizing.c holds.
 *
 * Positions are plain bit fields of g, with no per-hash multiply, so that a
 * probe is a few dozen instructions: at 100M items every probe waits for
 * memory, and the CPU overlaps the waits of successive rows only as far as
 * its reorder window reaches, so fewer instructions per probe means more
 * probes in flight. On x86-64 CPUs with AVX2 the eight words are tested in
 * two vector operations; elsewhere a loop over the k words does the same.
 */
#include "bloom/bloom_internal.h"

#ifdef AMQ_HAVE_AVX2_PROBE
#include <immintrin.h>
#endif

/* The block of hash: reduce(h, m) / 512 = reduce(h, m / 512) for m a
 * multiple of 512, without a division on the probe path. */
static inline uint8_t *block_of(const amq_filter *f, uint64_t hash)
{
	return f->payload + (amq_reduce(hash, f->cells) / AMQ_BLOCK_BITS) * AMQ_BLOCK_BYTES;
}

/* The bit of word j that g selects. */
static inline uint64_t word_bit(uint64_t g, unsigned j)
{
	return 1ULL << ((g >> (3 + 6 * j)) & 63);
}

void amq_blocked_add(amq_filter *f, uint64_t hash)
{
	uint8_t *block = block_of(f, hash);
	uint64_t g = amq_mix64(hash);
	uint32_t k = f->hashes; /* a local: the stores below may alias *f */
	for (uint32_t i = 0; i < k; i++) {
		unsigned j = (unsigned)(g + i) & 7;
		uint8_t *word = block + 8 * j;
		amq_store64le(word, amq_load64le(word) | word_bit(g, j));
	}
}

void amq_blocked_add_concurrent(amq_filter *f, uint64_t hash)
{
	uint8_t *block = block_of(f, hash);
	uint64_t g = amq_mix64(hash);
	uint32_t k = f->hashes;
	for (uint32_t i = 0; i < k; i++) {
		unsigned j = (unsigned)(g + i) & 7;
		uint64_t mask; /* the bit, in the word's byte order in memory */
		amq_store64le((uint8_t *)&mask, word_bit(g, j));
		__atomic_fetch_or((uint64_t *)(void *)(block + 8 * j), mask, __ATOMIC_RELAXED);
	}
}

bool amq_blocked_contains_portable(const amq_filter *f, uint64_t hash)
{
	const uint8_t *block = block_of(f, hash);
	uint64_t g = amq_mix64(hash), missing = 0;
	for (uint32_t i = 0; i < f->hashes; i++) {
		unsigned j = (unsigned)(g + i) & 7;
		missing |= word_bit(g, j) & ~amq_load64le(block + 8 * j);
	}
	return missing == 0;
}

#ifdef AMQ_HAVE_AVX2_PROBE
/* The same test on words 0-3 and 4-7 at once. A word the item skips gets a
 * shift count of all ones, which AVX2 turns into an empty mask. */
__attribute__((target("avx2"))) bool amq_blocked_contains_avx2(const amq_filter *f, uint64_t hash)
{
	const uint8_t *block = block_of(f, hash);
	uint64_t g = amq_mix64(hash);
	const __m256i words_low = _mm256_setr_epi64x(0, 1, 2, 3);
	const __m256i words_high = _mm256_setr_epi64x(4, 5, 6, 7);
	const __m256i seven = _mm256_set1_epi64x(7), sixty_three = _mm256_set1_epi64x(63);
	const __m256i one = _mm256_set1_epi64x(1);
	__m256i gv = _mm256_set1_epi64x((long long)g);
	__m256i first = _mm256_and_si256(gv, seven);
	__m256i last = _mm256_set1_epi64x((long long)f->hashes - 1);
	/* skipped: (j - w) mod 8 > k - 1 */
	__m256i skip_low =
	    _mm256_cmpgt_epi64(_mm256_and_si256(_mm256_sub_epi64(words_low, first), seven), last);
	__m256i skip_high =
	    _mm256_cmpgt_epi64(_mm256_and_si256(_mm256_sub_epi64(words_high, first), seven), last);
	__m256i shift_low = _mm256_or_si256(
	    _mm256_and_si256(_mm256_srlv_epi64(gv, _mm256_setr_epi64x(3, 9, 15, 21)), sixty_three),
	    skip_low);
	__m256i shift_high = _mm256_or_si256(
	    _mm256_and_si256(_mm256_srlv_epi64(gv, _mm256_setr_epi64x(27, 33, 39, 45)),
			     sixty_three),
	    skip_high);
	__m256i low = _mm256_loadu_si256((const __m256i *)block);
	__m256i high = _mm256_loadu_si256((const __m256i *)(block + 32));
	__m256i missing =
	    _mm256_or_si256(_mm256_andnot_si256(low, _mm256_sllv_epi64(one, shift_low)),
			    _mm256_andnot_si256(high, _mm256_sllv_epi64(one, shift_high)));
	return _mm256_testz_si256(missing, missing);
}
#endif

/* How many probes ahead amq_blocked_contains_many starts loading a block:
 * enough to cover a miss to memory with the probes in between. */
#define PREFETCH_AHEAD 8

void amq_blocked_contains_many(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out)
{
	amq_probe contains = amq_blocked_probe();

	for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		__builtin_prefetch(block_of(f, hashes[i]));
	for (size_t i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			__builtin_prefetch(block_of(f, hashes[i + PREFETCH_AHEAD]));
		out[i] = contains(f, hashes[i]);
	}
}

amq_probe amq_blocked_probe(void)
{
#ifdef AMQ_HAVE_AVX2_PROBE
	if (amq_cpu_has_avx2())
		return amq_blocked_contains_avx2;
#endif
	return amq_blocked_contains_portable;
}
