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

/* The k positions FORMAT.md gives hash h in a classic filter of m bits. */
static inline void spec_positions(uint64_t m, uint32_t k, uint64_t h, uint64_t *out)
{
	uint64_t x = spec_reduce(h, m), y = spec_reduce(spec_mix64(h), m);
	for (uint32_t i = 0; i < k; i++) {
		if (i > 0) {
			x = (x + y) % m;
			y = (y + i) % m;
		}
		uint64_t p = x;
		for (uint32_t j = 0; j < i; j++)
			if (out[j] == p) {
				p = (p + 1) % m;
				j = (uint32_t)-1; /* start over: the next bit may be taken too */
			}
		out[i] = p;
	}
}

/* Bit p of a payload: bit p % 8 of byte p / 8. */
static inline bool spec_bit(const uint8_t *payload, uint64_t p)
{
	return (payload[p / 8] >> (p % 8)) & 1;
}

/* Slot `slot` of `bits`-bit fields, read bit by bit. */
static inline uint32_t spec_slot(const uint8_t *payload, uint32_t bits, uint64_t slot)
{
	uint32_t fp = 0;
	for (uint32_t b = 0; b < bits; b++) {
		uint64_t n = slot * bits + b;
		fp |= (uint32_t)((payload[n / 8] >> (n % 8)) & 1) << b;
	}
	return fp;
}

/* A little-endian 64-bit field of a header. */
static inline uint64_t spec_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
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

/* Whether a d-left counting filter (docs/FORMAT.md, "Bloom, d-left
 * counting") may hold h: B buckets per subtable, r remainder bits; four
 * subtables of buckets of eight (remainder, 4-bit counter) cells. */
static inline bool spec_dleft_contains(const uint8_t *p, uint64_t B, uint32_t r, uint64_t h)
{
	uint64_t fp = spec_reduce(h, B << r), mask = (1ULL << r) - 1, q = fp >> r;
	for (unsigned i = 0; i < 4; i++) {
		uint64_t rem =
		    ((fp & mask) + (spec_mix64(q ^ (0x9e3779b97f4a7c15ULL * (2 * i + 1))) & mask)) &
		    mask;
		uint64_t b =
		    (q + spec_reduce(spec_mix64(rem ^ (0x9e3779b97f4a7c15ULL * (2 * i + 2))), B)) %
		    B;
		for (unsigned k = 0; k < 8; k++) {
			uint64_t at = ((i * B + b) * 8 + k) * (r + 4), c = 0;
			for (unsigned j = 0; j < r + 4; j++)
				c |= (uint64_t)((p[(at + j) / 8] >> ((at + j) % 8)) & 1) << j;
			if ((c & 15) != 0 && c >> 4 == rem)
				return true;
		}
	}
	return false;
}

/* Whether the filter in bytes (header and payload) may hold h, read as
 * docs/FORMAT.md says for its kind and layout: 1 or 0, or -1 for a layout
 * this file does not read (scalable Bloom, semi-sorted cuckoo). */
static inline int spec_filter_contains(const uint8_t *bytes, uint64_t h)
{
	unsigned kind = bytes[5], layout = bytes[6], k = bytes[7];
	uint64_t cells = spec_le64(bytes + 16), items = spec_le64(bytes + 24);
	uint32_t slots = (uint32_t)(spec_le64(bytes + 40) & 0xffffffffu);
	const uint8_t *p = bytes + 64;
	if (kind == 1 && (layout == 0 || layout == 2)) { /* classic, counting */
		uint64_t pos[32];
		spec_positions(cells, k, h, pos);
		for (uint32_t i = 0; i < k; i++)
			if (layout == 0 ? !spec_bit(p, pos[i]) : spec_slot(p, 4, pos[i]) == 0)
				return 0;
		return 1;
	}
	if (kind == 1 && layout == 1) { /* blocked */
		uint64_t block = spec_reduce(h, cells / 512), g = spec_mix64(h);
		for (uint32_t i = 0; i < k; i++) {
			uint64_t word = (g % 8 + i) % 8, bit = (g >> (3 + 6 * word)) % 64;
			if (!spec_bit(p, block * 512 + word * 64 + bit))
				return 0;
		}
		return 1;
	}
	if (kind == 1 && layout == 7)
		return spec_dleft_contains(p, cells, k, h);
	if (kind == 2 && layout != 6) { /* plain cuckoo buckets */
		uint32_t fp = spec_fingerprint(h, k);
		uint64_t i1 = spec_reduce(h, cells), i2 = spec_alt(i1, fp, cells);
		for (uint32_t j = 0; j < slots; j++)
			if (spec_slot(p, k, i1 * slots + j) == fp ||
			    spec_slot(p, k, i2 * slots + j) == fp)
				return 1;
		return 0;
	}
	if (kind == 3)
		return spec_fuse_contains(p, cells, k, items, h);
	return -1;
}

#endif
