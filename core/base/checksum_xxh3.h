/*
 * checksum_xxh3.h - the one body of the filter checksum (docs/FORMAT.md):
 * XXH3-64 with seed 0 of header bytes 0..55 followed by the payload, through
 * xxHash's public streaming API. checksum.c compiles it for the baseline CPU
 * and checksum_avx2.c for AVX2, where XXH3 picks its 32-byte kernels by
 * itself; the result is the same either way.
 */
#ifndef AMQ_CHECKSUM_XXH3_H
#define AMQ_CHECKSUM_XXH3_H

#include "base/internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint64_t checksum_xxh3(const uint8_t *bytes, uint64_t payload_size)
{
	XXH3_state_t state;
	XXH3_INITSTATE(&state);
	XXH3_64bits_reset(&state);
	XXH3_64bits_update(&state, bytes, AMQ_CHECKED_HEADER_BYTES);
	XXH3_64bits_update(&state, bytes + AMQ_HEADER_BYTES, (size_t)payload_size);
	return XXH3_64bits_digest(&state);
}

#endif
