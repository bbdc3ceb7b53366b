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

/* The bytes amq_rice_encode writes for the sorted hashes[0..n), and its
 * parameter in *k. */
uint64_t amq_rice_size(const uint64_t *sorted, size_t n, unsigned *k);

/* Writes the sorted hashes[0..n) with parameter k (amq_rice_size's) at out:
 * k in one byte, then for each gap from the previous hash (the first from
 * 0) its quotient gap >> k in unary (that many 1 bits, then a 0) and its k
 * low bits, least significant bit of each byte first; the last byte padded
 * with 0 bits. */
void amq_rice_encode(const uint64_t *sorted, size_t n, unsigned k, uint8_t *out);

/* Reads n hashes from in[0..len) into out; NULL when they are exactly
 * amq_rice_encode's bytes of n sorted hashes (strictly increasing when
 * distinct), else what is wrong. Never reads past len. */
const char *amq_rice_decode(const uint8_t *in, size_t len, size_t n, bool distinct, uint64_t *out);

#endif
