/*
 * bloom_internal.h - what the Bloom files (bloom.c, bloom_blocked.c,
 * bloom_counting.c, bloom_dleft.c, bloom_scalable.c, bloom_sizing.c) share among
 * themselves and with the tests of their internals: the shape each Bloom
 * row carries, the sizing and placement of the two bit layouts, and the
 * checks every Bloom row makes. Nothing outside core/bloom/ includes it but
 * tests and benchmarks.
 */
#ifndef AMQ_BLOOM_INTERNAL_H
#define AMQ_BLOOM_INTERNAL_H

#include "format/variant.h"

/* The hint of an unknown Bloom layout name: every Bloom row's layouts_hint. */
#define AMQ_BLOOM_LAYOUTS_HINT                                                                     \
	"use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'"

/* A Bloom row of the variant registry (format/variant.h): the fields every
 * Bloom row has alike, its layout code and SQL name, then the designated
 * initializers of the fields that are the row's own. */
#define AMQ_BLOOM_ROW(LAYOUT, NAME, ...)                                                           \
	{                                                                                          \
		.kind = AMQ_KIND_BLOOM, .layout = LAYOUT, .kind_name = "bloom",                    \
		.layout_name = NAME, .layouts_hint = AMQ_BLOOM_LAYOUTS_HINT, .slots = 0,           \
		__VA_ARGS__                                                                        \
	}

/* What a Bloom row's shape (amq_variant.shape) holds. */
typedef struct amq_bloom_shape {
	/* Bits and hashes of the layout's bit array for capacity items at fpr
	 * (amq_bloom_size): classic or blocked placement; a scalable chain's
	 * first link. */
	amq_status (*size_bits)(uint64_t capacity, double fpr, uint64_t *bits, uint32_t *hashes,
				amq_error *err);
} amq_bloom_shape;

/* ---- sizing (bloom_sizing.c) ---- */

/* The textbook m and k for capacity at fpr: classic and counting filters. */
amq_status amq_classic_size(uint64_t capacity, double fpr, uint64_t *bits, uint32_t *hashes,
			    amq_error *err);
/* The fewest 512-bit blocks, with the best k, whose rate meets fpr. */
amq_status amq_blocked_size(uint64_t capacity, double fpr, uint64_t *bits, uint32_t *hashes,
			    amq_error *err);
/* Bloom false-positive rate of a blocked filter holding bits_per_item bits per
 * item with k hashes (at most AMQ_BLOOM_BLOCKED_MAX_HASHES): the Poisson
 * mixture over block loads. */
double amq_blocked_fpr(double bits_per_item, uint32_t k);

/* ---- the bit layouts (bloom.c) ---- */

/* Shared by the Bloom rows: the hashes rule of a header, and the check that
 * two Bloom filters place bits alike (AMQ_INCOMPATIBLE). */
amq_status amq_bloom_check_hashes(const amq_filter *f, uint32_t max_hashes, const char *prefix,
				  amq_error *err);
amq_status amq_bloom_check_compatible(const amq_filter *a, const amq_filter *b, amq_error *err);

/* The item count of a union (the sum, saturating) or an intersection (the
 * smaller), for every Bloom layout's merge. */
static inline uint64_t amq_bloom_merged_items(uint64_t a, uint64_t b, bool intersect)
{
	if (intersect)
		return a < b ? a : b;
	return a + b < a ? UINT64_MAX : a + b;
}

/* A layout's cells of src merged into dst's: kept where both hold a value
 * (intersect) or where either does. */
typedef void (*amq_bloom_merge_cells)(amq_filter *dst, const amq_filter *src, bool intersect);
/* The union_into (intersect false) or intersect_into of a layout whose two
 * filters must have the same parameters (amq_bloom_check_compatible):
 * merge_cells on the payloads, then the item count. */
amq_status amq_bloom_merge(amq_filter *dst, const amq_filter *src, bool intersect,
			   amq_bloom_merge_cells merge_cells, amq_error *err);

/* The classic row's check_header (1 to AMQ_BLOOM_MAX_HASHES hashes, no
 * more than cells) and size (amq_classic_size's m and k): the counting
 * row's too, whose counters take the classic bits' places. */
amq_status amq_classic_check_header(const amq_filter *f, const char *prefix, amq_error *err);
amq_status amq_classic_row_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
				amq_error *err);

/* The k distinct positions in [0, m) an item takes in a classic filter, in the
 * order walk_classic visits them; the counting layout uses them for its
 * counters, so it places exactly the classic bits. */
void amq_classic_positions(const amq_filter *f, uint64_t hash, uint64_t *out);
/* Chance that k distinct random cells out of `space` all fall among `set`. */
double amq_all_set_chance(double set, double space, uint32_t k);
/* Distinct items estimated from the set bits of a classic or blocked bit
 * array: -(m/k) ln(1 - X/m). */
double amq_bits_estimate_items(const amq_filter *f);
/* The rate a random absent value sees now in a blocked bit array: the mean
 * over its blocks (a scalable chain's links are such arrays). */
double amq_blocked_expected_fpr(const amq_filter *f);

/* ---- blocked placement (bloom_blocked.c) ---- */

/* Sets an item's k bits; amq_blocked_probe is the fastest test of them this
 * CPU runs. The portable and AVX2 probes give the same answers; they are
 * exported so tests can compare them. */
void amq_blocked_add(amq_filter *f, uint64_t hash);
/* amq_filter_contains_many for a blocked filter (its row's contains_many). */
void amq_blocked_contains_many(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out);
amq_probe amq_blocked_probe(void);
bool amq_blocked_contains_portable(const amq_filter *f, uint64_t hash);
#ifdef AMQ_HAVE_AVX2_PROBE
/* Call it only where amq_cpu_has_avx2() (base/internal.h). */
bool amq_blocked_contains_avx2(const amq_filter *f, uint64_t hash);
#endif

/* ---- the kind's own calls, for core and its tests (the adapters go
 * through amq.h's generic ones) ---- */

/* Bits and hashes for capacity distinct items at fpr in the given layout
 * (counting: the classic bits, one counter each; scalable: its first link). */
amq_status amq_bloom_size(uint64_t capacity, double fpr, amq_layout layout, uint64_t *bits,
			  uint32_t *hashes, amq_error *err);
/* An empty Bloom filter with exactly these parameters (blocked: bits is a
 * multiple of 512). */
amq_status amq_bloom_create_exact(amq_filter *f, amq_layout layout, uint64_t bits, uint32_t hashes,
				  uint64_t seed, const amq_allocator *a, amq_error *err);
uint64_t amq_bloom_bits_set(const amq_filter *f);

/* Scalable chains (bloom_scalable.c). */
/* An empty chain of one blocked link for capacity values; the compound rate
 * stays below fpr however far it grows, by expansion times per link. */
amq_status amq_scalable_create(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
			       uint64_t seed, const amq_allocator *a, amq_error *err);

#endif
