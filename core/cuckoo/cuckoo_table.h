/*
 * cuckoo_table.h - the bucket table every cuckoo layout shares (cuckoo.c)
 * and the semi-sorted bucket codec (cuckoo_semisorted.c). Only the core's
 * cuckoo files include it.
 */
#ifndef AMQ_CUCKOO_TABLE_H
#define AMQ_CUCKOO_TABLE_H

#include "format/variant.h"

/* A cuckoo filter's payload seen as buckets of fingerprints. */
typedef struct cuckoo_table {
	uint8_t *payload;
	uint64_t buckets;
	uint32_t bits;	/* fingerprint bits f */
	uint32_t slots; /* fingerprints per bucket b: 2, 4 or 8 */
	uint32_t log2_slots;
	bool semisorted; /* b = 4, stored as 12 prefix bits and 4 (f - 4)-bit rests */
} cuckoo_table;

/* What a cuckoo row's shape (amq_variant.shape) holds: its buckets. */
typedef struct cuckoo_shape {
	uint32_t slots; /* fingerprints per bucket b */
	uint32_t log2_slots;
	bool semisorted;
	/* Fingerprints per bucket at the layout's target load (the paper's 84%,
	 * 95% and 98% for b = 2, 4 and 8), as an exact fraction num / den so
	 * bucket counts never depend on rounding. */
	uint64_t fill_num, fill_den;
} cuckoo_shape;

/* The shape of a cuckoo layout: its row's (cuckoo_layouts.c), or b4's for a
 * layout no cuckoo row has. */
const cuckoo_shape *amq_cuckoo_shape(amq_layout layout);

/* f's payload as buckets of shape s. */
static inline cuckoo_table amq_cuckoo_table_of(const amq_filter *f, const cuckoo_shape *s)
{
	return (cuckoo_table){.payload = f->payload,
			      .buckets = f->cells,
			      .bits = f->hashes,
			      .slots = s->slots,
			      .log2_slots = s->log2_slots,
			      .semisorted = s->semisorted};
}

/* The table of a cuckoo filter, from its layout's row. */
cuckoo_table amq_cuckoo_table(const amq_filter *f);

/* amq_cuckoo_add, amq_cuckoo_delete and amq_cuckoo_count on f seen as t
 * (cuckoo.c), for the rows, which know their shape without a lookup. */
amq_status amq_cuckoo_table_add(amq_filter *f, const cuckoo_table *t, uint64_t hash,
				amq_error *err);
bool amq_cuckoo_table_delete(amq_filter *f, const cuckoo_table *t, uint64_t hash);
uint32_t amq_cuckoo_table_count(const cuckoo_table *t, uint64_t hash);

/* The probe of each layout (cuckoo.c), for its row of the variant registry. */
bool amq_cuckoo_b2_contains(const amq_filter *f, uint64_t hash);
bool amq_cuckoo_b4_contains(const amq_filter *f, uint64_t hash);
bool amq_cuckoo_b8_contains(const amq_filter *f, uint64_t hash);
bool amq_cuckoo_semisorted_contains(const amq_filter *f, uint64_t hash);

/* Bits [bit, bit + width) of p as a number, width <= 57. */
static inline uint64_t amq_field_get(const uint8_t *p, uint64_t bit, uint32_t width)
{
	return (amq_load64le(p + (bit >> 3)) >> (bit & 7)) & (((uint64_t)1 << width) - 1);
}

/* Writes value (< 2^width, width <= 57) into bits [bit, bit + width) of p,
 * leaving every other bit as it was. */
static inline void amq_field_set(uint8_t *p, uint64_t bit, uint32_t width, uint64_t value)
{
	uint64_t mask = (((uint64_t)1 << width) - 1) << (bit & 7);
	uint64_t word = amq_load64le(p + (bit >> 3));
	amq_store64le(p + (bit >> 3), (word & ~mask) | value << (bit & 7));
}

/* ---- semi-sorted buckets (cuckoo_semisorted.c) ---- */

/* A semi-sorted bucket stores the 4-bit prefixes of its four sorted
 * fingerprints as one of C(19, 4) = 3876 codes in 12 bits. */
#define AMQ_SEMISORT_CODE_BITS 12
#define AMQ_SEMISORT_CODES 3876

/* The four prefixes of each code, n0 | n1 << 4 | n2 << 8 | n3 << 12
 * (cuckoo_semisort_table.c); codes 3876..4095 read as zeros. */
extern const uint16_t amq_semisort_prefixes[4096];

/* Payload bits of one semi-sorted bucket of f-bit fingerprints: 4f - 4. */
static inline uint64_t amq_semisorted_bucket_bits(uint32_t bits)
{
	return 12 + 4 * (uint64_t)(bits - 4);
}

/* The code of four nondecreasing 4-bit prefixes. */
uint32_t amq_semisort_code(const uint32_t prefixes[4]);

/* Reads bucket i into fps[0..4), ascending (empty slots, 0, first). */
void amq_semisorted_load(const cuckoo_table *t, uint64_t i, uint32_t fps[4]);
/* Sorts fps[0..4) and writes them as bucket i. */
void amq_semisorted_store(const cuckoo_table *t, uint64_t i, uint32_t fps[4]);
/* True when bucket i holds fp: the probe, without a full decode. */
bool amq_semisorted_has(const cuckoo_table *t, uint64_t i, uint32_t fp);
/* The 12-bit code of bucket i as stored. */
uint32_t amq_semisorted_code_at(const cuckoo_table *t, uint64_t i);

/* ---- the kind's own calls, for core and its tests (the adapters go
 * through amq.h's generic ones) (cuckoo.c, cuckoo_layouts.c) ---- */

/* Fingerprint bits a layout needs for a target fpr: ceil(log2(2b/fpr)),
 * unclamped (sizing refuses anything outside 4..32). */
uint32_t amq_cuckoo_fingerprint_bits(amq_layout layout, double fpr);
/* The load a layout is sized for: 0.84, 0.95 and 0.98 for b = 2, 4 and 8. */
double amq_cuckoo_target_load(amq_layout layout);
/* Buckets and fingerprint bits for capacity items at fpr; AMQ_INVALID_ARGUMENT
 * when the layout's fingerprint for fpr is outside 4..32 bits, AMQ_TOO_LARGE
 * past the size limit. */
amq_status amq_cuckoo_size(amq_layout layout, uint64_t capacity, double fpr, uint64_t *buckets,
			   uint32_t *fingerprint_bits, amq_error *err);
/* An empty cuckoo filter of a cuckoo layout that holds at least capacity
 * items at fpr. */
amq_status amq_cuckoo_create(amq_filter *f, amq_layout layout, uint64_t capacity, double fpr,
			     uint64_t seed, const amq_allocator *a, amq_error *err);
amq_status amq_cuckoo_create_exact(amq_filter *f, amq_layout layout, uint64_t buckets,
				   uint32_t fingerprint_bits, uint64_t seed, const amq_allocator *a,
				   amq_error *err);
/* Adds one copy. On AMQ_FILTER_FULL the filter is byte for byte unchanged;
 * when both of the value's buckets hold only its fingerprint (2b copies, b
 * when the two buckets are one) the error says so, with
 * AMQ_CUCKOO_COPIES_HINT, instead of "cuckoo filter is full". */
amq_status amq_cuckoo_add(amq_filter *f, uint64_t hash, amq_error *err);
/* Removes one copy; false (and no change) when none is stored. */
bool amq_cuckoo_delete(amq_filter *f, uint64_t hash);
/* Copies stored: slots of the two candidate buckets holding the fingerprint. */
uint32_t amq_cuckoo_count(const amq_filter *f, uint64_t hash);
/* Fingerprints per bucket: 2, 4 or 8. */
uint32_t amq_cuckoo_bucket_size(const amq_filter *f);
double amq_cuckoo_load(const amq_filter *f);
/* 1 - (1 - 1/(2^f - 1))^(2b * load): the rate a random absent value sees now. */
double amq_cuckoo_expected_fpr(const amq_filter *f);

#endif
