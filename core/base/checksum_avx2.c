/*
 * checksum_avx2.c - the filter checksum (checksum.c) compiled for AVX2.
 * The build compiles this one file with -mavx2 on x86-64, so xxHash's public
 * XXH3 functions, inlined here, pick their 32-byte vector kernels by
 * themselves; checksum.c calls amq_checksum_avx2 only on a CPU that runs
 * AVX2. XXH3's result does not depend on the kernel: the bytes are the same
 * as the portable path's. On other CPUs the file is empty.
 */
#include "base/internal.h"

#ifdef AMQ_HAVE_AVX2_PROBE
#ifndef __AVX2__
#error "core/base/checksum_avx2.c must be compiled with -mavx2 (see the Makefile's AVX2_FLAGS)"
#endif
#include "base/checksum_xxh3.h"

uint64_t amq_checksum_avx2(const uint8_t *bytes, uint64_t payload_size)
{
	return checksum_xxh3(bytes, payload_size);
}
#endif
