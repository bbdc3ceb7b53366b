/*
 * spec.h - the primitives docs/FORMAT.md builds positions from, written
 * again from its text rather than taken from core, so that tests comparing
 * core's bytes with the spec check core against the document.
 */
#ifndef AMQ_TEST_SPEC_H
#define AMQ_TEST_SPEC_H

#include <stdbool.h>
#include <stdint.h>

/* reduce(x, n) = floor(x * n / 2^64). */
static inline uint64_t spec_reduce(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* mix64: MurmurHash3's 64-bit finalizer. */
static inline uint64_t spec_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A cuckoo fingerprint: the low 32 bits of h scaled onto [1, 2^bits - 1]. */
static inline uint32_t spec_fingerprint(uint64_t h, uint32_t bits)
{
	return (uint32_t)(((h & 0xffffffffULL) * ((1ULL << bits) - 1)) >> 32) + 1;
}

/* The other cuckoo bucket of fp stored in bucket i, (reduce(mix64(fp)) - i)
 * mod nb. */
static inline uint64_t spec_alt(uint64_t i, uint32_t fp, uint64_t nb)
{
	return (spec_reduce(spec_mix64(fp), nb) + nb - i) % nb;
}

/* Whether a binary fuse filter may hold h (docs/FORMAT.md, "Binary fuse"):
 * payload p of `slots` c-bit fingerprints after its 8-byte prefix, items
 * the header's. */
static inline bool spec_fuse_contains(const uint8_t *p, uint64_t slots, uint32_t c, uint64_t items,
				      uint64_t h)
{
	if (items == 0)
		return false;
	uint64_t L =
	    (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
	uint64_t t =
	    (uint64_t)p[4] | (uint64_t)p[5] << 8 | (uint64_t)p[6] << 16 | (uint64_t)p[7] << 24;
	uint64_t g = spec_mix64(h + (t + 1) * 0x9e3779b97f4a7c15ULL);
	uint64_t p0 = spec_reduce(h, slots - 2 * L);
	uint64_t at[3] = {p0, (p0 + L) ^ ((g >> 18) % L), (p0 + 2 * L) ^ (g % L)};
	uint32_t x = 0;
	for (int i = 0; i < 3; i++)
		x ^= c == 8 ? p[8 + at[i]]
			    : (uint32_t)p[8 + 2 * at[i]] | (uint32_t)p[9 + 2 * at[i]] << 8;
	return x == (uint32_t)(g >> (64 - c));
}

#endif
