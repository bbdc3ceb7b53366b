/*
 * spec.h - the primitives docs/FORMAT.md builds positions from, written
 * again from its text rather than taken from core, so that tests comparing
 * core's bytes with the spec check core against the document.
 */
#ifndef AMQ_TEST_SPEC_H
#define AMQ_TEST_SPEC_H

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

#endif
