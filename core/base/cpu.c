/*
 * cpu.c - what this CPU runs, asked once per call site that chooses a code
 * path at run time: the checksum (checksum.c) and the blocked Bloom probes
 * (bloom/) both pick their AVX2 copies through it, so base/ depends on
 * nothing above it. On other CPUs the file is empty.
 */
#include "base/internal.h"

#ifdef AMQ_HAVE_AVX2_PROBE
bool amq_cpu_has_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}
#endif
