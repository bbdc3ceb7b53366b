/*
 * internal.h - helpers shared by the core's own files and by nothing else:
 * fixed little-endian access, 64-bit range reduction and mixing, the
 * checksum and the CPU check. Nothing here depends on the rest of core.
 */
#ifndef AMQ_INTERNAL_H
#define AMQ_INTERNAL_H

#include "amq.h"

#include <string.h>

/* Fixed little-endian access at any alignment: one plain load or store on
 * little-endian hosts, plus a byte swap on big-endian ones (AMQ_LE32 and
 * AMQ_LE64 turn a value to or from little-endian order). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define AMQ_LE32(v) __builtin_bswap32(v)
#define AMQ_LE64(v) __builtin_bswap64(v)
#else
#define AMQ_LE32(v) (v)
#define AMQ_LE64(v) (v)
#endif

/* AMQ_OK, or AMQ_INTERRUPTED ("interrupted") when a's interrupted hook
 * says stop: what core's long loops call every AMQ_INTERRUPT_EVERY steps. */
static inline amq_status amq_poll(const amq_allocator *a, amq_error *err)
{
	if (a == NULL || a->interrupted == NULL || !a->interrupted(a->ctx))
		return AMQ_OK;
	return amq_fail(err, AMQ_INTERRUPTED, "", "interrupted");
}

static inline uint64_t amq_load64le(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return AMQ_LE64(v);
}

static inline uint32_t amq_load32le(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return AMQ_LE32(v);
}

static inline void amq_store64le(uint8_t *p, uint64_t v)
{
	v = AMQ_LE64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void amq_store32le(uint8_t *p, uint32_t v)
{
	v = AMQ_LE32(v);
	memcpy(p, &v, sizeof(v));
}

/* A blocked Bloom filter is made of 512-bit blocks, one 64-byte cache line each. */
#define AMQ_BLOCK_BITS 512
#define AMQ_BLOCK_BYTES 64

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

/* The checksum docs/FORMAT.md stores at header offset 56: XXH3-64 of header
 * bytes 0..55 and the payload (checksum.c), on the fastest path this CPU
 * runs; the portable path gives the same value, for tests to compare. */
uint64_t amq_checksum(const uint8_t *bytes, uint64_t payload_size);
uint64_t amq_checksum_portable(const uint8_t *bytes, uint64_t payload_size);
/* Header bytes 0..55: the checksum covers them, then the payload. */
#define AMQ_CHECKED_HEADER_BYTES 56

/* Whether this CPU (and OS) runs AVX2 code (cpu.c), for the callers that
 * pick an AVX2 copy of their code at run time: the checksum here, the
 * blocked Bloom probes (bloom/bloom_internal.h). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMQ_HAVE_AVX2_PROBE 1
bool amq_cpu_has_avx2(void);
/* amq_checksum compiled for AVX2 (checksum_avx2.c, which every x86-64 build
 * compiles with -mavx2); call it only where amq_cpu_has_avx2(). */
uint64_t amq_checksum_avx2(const uint8_t *bytes, uint64_t payload_size);
#endif

#endif
