/*
 * internal.h - helpers shared by the core's own files and by nothing else:
 * fixed little-endian access, 64-bit range reduction and mixing, and the one
 * function that allocates a filter buffer.
 */
#ifndef AMQ_INTERNAL_H
#define AMQ_INTERNAL_H

#include "amq.h"

#include <string.h>

static inline uint64_t amq_load64le(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static inline void amq_store64le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t amq_load32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void amq_store32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Maps x uniformly onto [0, n) without division (Lemire's multiply-high). */
static inline uint64_t amq_reduce(uint64_t x, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* MurmurHash3's 64-bit finalizer: a bijection that spreads every input bit. */
static inline uint64_t amq_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The payload size of a filter with these parameters, or AMQ_TOO_LARGE (with
 * the one message every "too large" uses) past AMQ_MAX_FILTER_BYTES. */
amq_status amq_check_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells,
			  uint64_t *payload_size, amq_error *err);

/*
 * Allocates a zeroed filter with these parameters, points f at it and seals
 * it. Fails as amq_check_size does, or with AMQ_NO_MEMORY when the allocator
 * does.
 */
amq_status amq_filter_allocate(amq_filter *f, amq_kind kind, amq_layout layout, uint32_t hashes,
			       uint64_t seed, uint64_t cells, const amq_allocator *a,
			       amq_error *err);

/* Payload bytes a filter with these parameters must have (0 if impossible). */
uint64_t amq_payload_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells);

/* Bloom false-positive rate of a blocked filter holding bits_per_item bits per
 * item with k hashes: the Poisson mixture over block loads (bloom_sizing.c). */
double amq_blocked_fpr(double bits_per_item, uint32_t k);

#endif
