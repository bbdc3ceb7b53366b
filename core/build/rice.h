/*
 * build/rice.h - sorted 64-bit hashes as Golomb-Rice coded gaps (rice.c):
 * the compact form in which a parallel worker's collected hashes travel to
 * the leader (amq_builder_serialize). n sorted hashes spread over 2^64 take
 * about log2(2^64 / n) + 1.5 bits each: 4.8 bytes at 100M, against 8 plain,
 * so one state of at most 1 GB carries about 220M distinct hashes.
 */
#ifndef AMQ_BUILD_RICE_H
#define AMQ_BUILD_RICE_H

#include "base/internal.h"

/* The parameter for n sorted hashes whose largest is last:
 * floor(log2(last / n)), 0 when the mean gap is below 2. */
unsigned amq_rice_parameter(uint64_t last, uint64_t n);

/* The bytes amq_rice_encode writes for the sorted hashes[0..n), and its
 * parameter in *k. */
uint64_t amq_rice_size(const uint64_t *sorted, size_t n, unsigned *k);

/* At least the bytes amq_rice_encode writes for n sorted hashes whose
 * largest is last with parameter k, at most n / 8 + 2 more: the quotients
 * add up to at most last >> k. For a writer that cannot read its hashes
 * twice. */
uint64_t amq_rice_bound(uint64_t last, uint64_t n, unsigned k);

/* Writes sorted hashes given in pieces (amq_rice_put) with parameter k:
 * k in one byte, then for each gap from the previous hash (the first from
 * 0) its quotient gap >> k in unary (that many 1 bits, then a 0) and its k
 * low bits, least significant bit of each byte first; the last byte padded
 * with 0 bits (amq_rice_end). */
typedef struct amq_rice_writer {
	uint8_t *start, *out;
	uint64_t acc, previous;
	unsigned fill, k;
} amq_rice_writer;

void amq_rice_begin(amq_rice_writer *w, unsigned k, uint8_t *out);
void amq_rice_put(amq_rice_writer *w, const uint64_t *sorted, size_t n);
/* Pads the last byte; returns the bytes written in all. */
size_t amq_rice_end(amq_rice_writer *w);

/* The whole of sorted[0..n) at once, in amq_rice_size's bytes. */
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
