/*
 * variant.h - the table of filter variants: one row per kind and layout,
 * holding everything the rest of the core needs to know about it. format.c
 * reads headers through it, the generic calls of amq.h (amq_filter_add,
 * amq_filter_contains, ...) dispatch through it, and a new variant is one core
 * file plus one row of variant.c. Operations a variant does not have are NULL;
 * the generic calls then fail with a message that names the layout.
 */
#ifndef AMQ_VARIANT_H
#define AMQ_VARIANT_H

#include "base/internal.h"

/* The hint of every message about bytes that are no filter amq wrote. */
#define AMQ_NOT_A_FILTER_HINT "pass a value built by bloom_agg, bloom_new, cuckoo_agg or cuckoo_new"

typedef struct amq_variant {
	amq_kind kind;
	amq_layout layout;
	const char *kind_name;	 /* "bloom", "cuckoo" */
	const char *layout_name; /* the SQL layout name: "classic", "blocked", "b4", ... */
	uint8_t format_version;	 /* written in the header; older readers refuse it */
	uint32_t slots;		 /* the header's slots-per-bucket field */
	const char *cell_name;	 /* what header field cells counts: "bits", "buckets" */
	/* The bytes depend only on the multiset of values added, not on their
	 * order, so an aggregate with a capacity can stream into the filter. */
	bool order_free;
	/* Every add counts, duplicates included (a counting filter), so an
	 * aggregate that collects must keep duplicate rows. */
	bool counts_duplicates;

	/* Payload bits per cell, for the size a too-large request would need. */
	double (*cell_bits)(uint32_t hashes);
	/* Payload bytes for these parameters, 0 when impossible. */
	uint64_t (*payload_size)(uint32_t hashes, uint64_t cells);
	/* Header rules beyond the common ones (hashes range, items bound);
	 * prefix starts every message. */
	amq_status (*check_header)(const amq_filter *f, const char *prefix, amq_error *err);
	/* O(1)-per-part rules on the payload's own structure, run when the
	 * filter opens, after its length matched. NULL: none. */
	amq_status (*check_payload)(const amq_filter *f, const char *prefix, amq_error *err);
	/* O(size) payload rules, run after the checksum matched. NULL: none. */
	amq_status (*verify)(const amq_filter *f, const char *prefix, amq_error *err);
	/* The hashes and cells of a filter for capacity items at fpr. */
	amq_status (*size)(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
			   amq_error *err);

	/* An empty filter with an expansion (0: the default). NULL: allocate
	 * a zeroed payload of size()'s parameters; an expansion is refused. */
	amq_status (*create)(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
			     uint64_t seed, const amq_allocator *a, amq_error *err);

	/* Adds an aggregate's n sorted hashes in the order the variant wants
	 * (still a function of the set alone). NULL: in sorted order. */
	amq_status (*add_collected)(amq_filter *f, const uint64_t *sorted, size_t n,
				    const amq_allocator *a, amq_error *err);
	/* Adds one value; on failure the filter is unchanged. NULL for a
	 * variant that grows (add_grow). */
	amq_status (*add)(amq_filter *f, uint64_t hash, amq_error *err);
	/* Adds one value, replacing f's buffer by a larger one from a when it
	 * must grow (AMQ_FILTER_FULL then when a is NULL). NULL: fixed size. */
	amq_status (*add_grow)(amq_filter *f, uint64_t hash, const amq_allocator *a,
			       amq_error *err);
	/* False when hash was certainly never added: amq_bloom_probe's shape. */
	bool (*contains)(const amq_filter *f, uint64_t hash);
	/* The fastest contains this CPU runs for f (no per-probe dispatch). */
	bool (*(*probe_for)(const amq_filter *f))(const amq_filter *, uint64_t);
	/* Removes one copy; false, filter unchanged, when none is stored.
	 * NULL: the variant cannot forget a value. */
	bool (*remove)(amq_filter *f, uint64_t hash);
	/* How many times hash was added, never less than the truth. NULL: none. */
	uint64_t (*frequency)(const amq_filter *f, uint64_t hash);
	/* dst gets src's values; src has dst's variant. NULL: no union. */
	amq_status (*union_into)(amq_filter *dst, const amq_filter *src, amq_error *err);
	/* dst keeps what both hold; src has dst's variant. NULL: no intersection. */
	amq_status (*intersect_into)(amq_filter *dst, const amq_filter *src, amq_error *err);

	/* The false-positive rate a random absent value sees now. */
	double (*expected_fpr)(const amq_filter *f);
	/* Distinct values the filter is estimated to hold. */
	double (*estimate_items)(const amq_filter *f);
	/* One JSON object describing f (amq_filter_info_json's contract). */
	int (*info)(const amq_filter *f, char *out, size_t cap);
} amq_variant;

/* The row of kind and layout, or NULL when no such variant exists. */
const amq_variant *amq_variant_find(amq_kind kind, amq_layout layout);

/* The row of an opened filter (never NULL: open refuses unknown variants). */
const amq_variant *amq_variant_of(const amq_filter *f);

/* The rows (variant.c), one per core file. */
extern const amq_variant amq_variant_bloom_classic;
extern const amq_variant amq_variant_bloom_blocked;
extern const amq_variant amq_variant_bloom_counting;
extern const amq_variant amq_variant_bloom_scalable;
extern const amq_variant amq_variant_cuckoo_b2;
extern const amq_variant amq_variant_cuckoo_b4;
extern const amq_variant amq_variant_cuckoo_b8;
extern const amq_variant amq_variant_cuckoo_semisorted;

/* Shared by the Bloom rows (bloom.c): the hashes rule of a header, and the
 * check that two Bloom filters place bits alike (AMQ_INCOMPATIBLE). */
amq_status amq_bloom_check_hashes(const amq_filter *f, uint32_t max_hashes, const char *prefix,
				  amq_error *err);
amq_status amq_bloom_check_compatible(const amq_filter *a, const amq_filter *b, amq_error *err);

/* The k distinct positions in [0, m) an item takes in a classic filter, in the
 * order walk_classic visits them (bloom.c); the counting layout uses them for
 * its counters, so it places exactly the classic bits. */
void amq_classic_positions(const amq_filter *f, uint64_t hash, uint64_t *out);
/* Chance that k distinct random cells out of `space` all fall among `set`. */
double amq_all_set_chance(double set, double space, uint32_t k);

/* Adds hash to a scalable chain without growing it: into the newest link,
 * past its capacity when it is full (a higher rate there, never a false
 * negative). For amq_bloom_add, which has no allocator and no status. */
void amq_scalable_add_in_place(amq_filter *f, uint64_t hash);

/* True when no payload bit at or past bit `from` is set (format.c). */
bool amq_tail_is_zero(const amq_filter *f, uint64_t from);

#endif
