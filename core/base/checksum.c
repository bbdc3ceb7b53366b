/*
 * checksum.c - the checksum of a serialized filter (docs/FORMAT.md): XXH3-64
 * with seed 0 of header bytes 0..55 followed by the payload. Verifying a
 * filter reads every byte once, so this pass is what a bound filter costs a
 * statement before its first row. XXH3's result does not depend on the
 * instruction set it runs on; on x86-64 CPUs with AVX2 it runs the copy in
 * checksum_avx2.c (chosen at run time), which keeps pace with memory where
 * the baseline SSE2 build runs at about a third of that speed. Only xxHash's
 * public API is used, so any xxHash 0.8 builds it.
 */
#include "base/checksum_xxh3.h"

uint64_t amq_checksum(const uint8_t *bytes, uint64_t payload_size)
{
#ifdef AMQ_HAVE_AVX2_PROBE
	if (amq_cpu_has_avx2())
		return amq_checksum_avx2(bytes, payload_size);
#endif
	return checksum_xxh3(bytes, payload_size);
}

uint64_t amq_checksum_portable(const uint8_t *bytes, uint64_t payload_size)
{
	return checksum_xxh3(bytes, payload_size);
}
