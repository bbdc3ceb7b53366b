/*
 * hash.c - every SQL value becomes one 64-bit hash (docs/HASHING.md):
 * XXH3_64bits_withSeed over a canonical encoding, a one-byte type tag then
 * the payload. Equal SQL values must hash equally in both engines (3 = 3.0),
 * and the hash never depends on host, compiler or engine, so filters built in
 * one place answer correctly everywhere.
 */
#include "base/internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

enum { TAG_INT = 0x01, TAG_REAL = 0x02, TAG_TEXT = 0x03, TAG_BLOB = 0x04 };

/* Values up to this size are encoded on the stack and hashed in one call. */
#define SMALL_VALUE 256

/* Hashes tag || bytes[0..len) with the seed. */
static uint64_t hash_tagged(uint8_t tag, const void *bytes, size_t len, uint64_t seed)
{
	if (len < SMALL_VALUE) {
		uint8_t buf[SMALL_VALUE];
		buf[0] = tag;
		if (len > 0)
			memcpy(buf + 1, bytes, len);
		return XXH3_64bits_withSeed(buf, len + 1, seed);
	}
	/* The streaming API yields the same hash as one call over the
	 * concatenation, without copying a large value. */
	XXH3_state_t state;
	XXH3_INITSTATE(&state);
	XXH3_64bits_reset_withSeed(&state, seed);
	XXH3_64bits_update(&state, &tag, 1);
	XXH3_64bits_update(&state, bytes, len);
	return XXH3_64bits_digest(&state);
}

/* Hashes tag || 8 little-endian bytes of payload. On little-endian hosts the
 * 9 bytes are written with one 16-byte store: XXH3 then reads them back at
 * offsets 0 and 1, and a load spanning two narrower stores cannot be
 * store-forwarded, which made this four times slower. */
static inline uint64_t hash_tagged8(uint8_t tag, uint64_t payload, uint64_t seed)
{
	uint8_t buf[16];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned __int128 both = (unsigned __int128)tag | (unsigned __int128)payload << 8;
	memcpy(buf, &both, sizeof(buf));
#else
	buf[0] = tag;
	amq_store64le(buf + 1, payload);
#endif
	return XXH3_64bits_withSeed(buf, 9, seed);
}

uint64_t amq_hash_int(int64_t value, uint64_t seed)
{
	return hash_tagged8(TAG_INT, (uint64_t)value, seed);
}

uint64_t amq_hash_double(double value, uint64_t seed)
{
	uint64_t bits;
	if (value != value) {
		bits = 0x7ff8000000000000ULL; /* the one canonical quiet NaN */
	} else if (value >= -9223372036854775808.0 && value < 9223372036854775808.0 &&
		   (double)(int64_t)value == value) {
		/* Integral and within int64 (this includes -0.0): SQL says 3 = 3.0. */
		return amq_hash_int((int64_t)value, seed);
	} else {
		memcpy(&bits, &value, sizeof(bits));
	}
	return hash_tagged8(TAG_REAL, bits, seed);
}

uint64_t amq_hash_text(const void *text, size_t len, uint64_t seed)
{
	return hash_tagged(TAG_TEXT, text, len, seed);
}

uint64_t amq_hash_blob(const void *blob, size_t len, uint64_t seed)
{
	return hash_tagged(TAG_BLOB, blob, len, seed);
}
