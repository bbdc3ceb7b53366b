/*
 * build/rice.h - sorted 64-bit hashes as Golomb-Rice coded gaps (rice.c):
 * the compact form in which a parallel worker's collected hashes travel to
 * the leader when they fit in its state (amq_builder_serialize; more stay
 * in files handed over). n sorted hashes spread over 2^64 take about
 * log2(2^64 / n) + 1.5 bits each: 4.8 bytes at 100M, against 8 plain.
 */
#ifndef AMQ_BUILD_RICE_H
#define AMQ_BUILD_RICE_H

#include "base/internal.h"

/* The bytes amq_rice_encode writes for the sorted hashes[0..n), and its
 * parameter in *k: floor(log2(mean gap)), 0 when the mean gap is below 2. */
uint64_t amq_rice_size(const uint64_t *sorted, size_t n, unsigned *k);

/* Writes sorted[0..n) in amq_rice_size's bytes with parameter k: k in one
 * byte, then for each gap from the previous hash (the first from 0) its
 * quotient gap >> k in unary (that many 1 bits, then a 0) and its k low
 * bits, least significant bit of each byte first; the last byte padded with
 * 0 bits. */
void amq_rice_encode(const uint64_t *sorted, size_t n, unsigned k, uint8_t *out);

/* Reads hashes in pieces from in[0..len), never past len; each call returns
 * NULL, or what is wrong with the bytes. */
typedef struct amq_rice_reader {
	const uint8_t *in;
	size_t len;
	uint64_t bit, end, previous, read;
	unsigned k;
	bool distinct;
} amq_rice_reader;

/* Starts reading amq_rice_encode's bytes (strictly increasing hashes when
 * distinct). */
const char *amq_rice_start(amq_rice_reader *r, const uint8_t *in, size_t len, bool distinct);
/* The next n hashes into out. */
const char *amq_rice_get(amq_rice_reader *r, size_t n, uint64_t *out);
/* NULL when only the zero padding of the last byte follows. */
const char *amq_rice_finish(const amq_rice_reader *r);

/* Reads n hashes from in[0..len) into out; NULL when they are exactly
 * amq_rice_encode's bytes of n sorted hashes (strictly increasing when
 * distinct), else what is wrong. */
const char *amq_rice_decode(const uint8_t *in, size_t len, size_t n, bool distinct, uint64_t *out);

#endif
