/*
 * variant.h - the variant registry: one row per kind and layout, holding
 * everything the rest of the core needs to know about it, and the one array
 * of row pointers (variant.c) that is the only list of variants. format.c
 * reads headers through it, params.c parses and defaults layouts from it,
 * and the generic calls of amq.h (amq_filter_add, amq_filter_contains, ...)
 * dispatch through it. A new variant is one core file that defines its row
 * plus one row pointer in the registry array of variant.c; no other file
 * names a variant. format/ never calls into bloom/ or cuckoo/ except through
 * a row.
 *
 * Capabilities are the operations whose pointers are non-NULL; there are no
 * separate flags to keep in step with them:
 *   add      add or add_grow (neither: the variant is build-only, below)
 *   delete   remove
 *   count    frequency
 *   merge    union_into and intersect_into
 * An operation a row lacks fails in the generic call with AMQ_WRONG_KIND and
 * "a <layout> <kind> filter cannot <operation>", never by calling NULL.
 *
 * A build-only variant (a filter made whole from the full set of values,
 * such as an xor or binary fuse filter) needs exactly this:
 *   - one core file, say core/xor/xor.c, including "format/variant.h" and
 *     defining its row, `AMQ_VARIANT_ROW(amq_variant_xor_...) = {...};`, plus its
 *     pointer (and extern declaration) in the registry array of variant.c;
 *   - a kind code, written in its row only ((amq_kind)3 for the next kind:
 *     amq_kind names only the kinds adapters call by name; the SQL layer
 *     finds a kind by its kind_name, amq_kind_named), and its header bytes
 *     in docs/FORMAT.md; its layout code is any byte unique within the kind
 *     (the amq_layout enumerators name the existing ones; a new kind may
 *     use (amq_layout)0). format_version: the first version that has it;
 *     amq_format_version() is the highest of the registry's;
 *   - the required fields: kind, layout, kind_name, layout_name,
 *     layouts_hint, format_version, cell_name, cell_bits, payload_size,
 *     check_header, size, contains, expected_fpr, estimate_items, info;
 *   - add = add_grow = NULL and order_free = false, so a builder collects
 *     every distinct hash and builds at the end: amq_filter_create (create,
 *     or a zeroed payload of size()'s parameters), then add_collected with
 *     the sorted distinct hashes, which must be non-NULL and build the whole
 *     filter (from one piece: see add_collected) (it may replace f's buffer with one from a;
 * AMQ_FILTER_FULL makes a builder without a capacity retry 1/8 larger);
 *   - build_memory, when the build needs memory of its own (a binary
 *     fuse filter's peeling arrays), so a builder can refuse what its
 *     working memory cannot hold;
 *   - everything else may stay NULL: single adds (bloom_add, the _add_agg
 *     aggregates), deletes, counts and merges are then refused with the
 *     message above.
 * The SQL functions that build and read it belong to the adapters' function
 * table, not to core.
 */
#ifndef AMQ_VARIANT_H
#define AMQ_VARIANT_H

#include "base/internal.h"

/* Fails with AMQ_INVALID_FILTER, the message fmt formats and the hint of
 * every message about bytes that are no filter amq wrote: "pass a value
 * built by bloom_agg, bloom_new, ...", each kind's aggregate, and its _new
 * where a layout of the kind takes adds, from the registry. */
amq_status amq_not_a_filter(amq_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

typedef struct amq_variant {
	/* ---- identity: what the header says and what SQL calls it ---- */
	amq_kind kind;		 /* header byte 5 (docs/FORMAT.md) */
	amq_layout layout;	 /* header byte 6; unique within the kind */
	const char *kind_name;	 /* "bloom", "cuckoo" */
	const char *layout_name; /* the SQL layout name: "classic", "blocked", "b4", ... */
	/* The hint when SQL names a layout of this kind that does not exist:
	 * the same string in every row of a kind. */
	const char *layouts_hint;
	uint8_t format_version; /* written in the header; older readers refuse it */
	uint32_t slots;		/* the header's slots-per-bucket field */
	const char *cell_name;	/* what header field cells counts: "bits", "buckets" */
	/* The bytes depend only on the multiset of values added, not on their
	 * order, so an aggregate with a capacity can stream into the filter. */
	bool order_free;
	/* Every add counts, duplicates included (a counting filter), so an
	 * aggregate that collects must keep duplicate rows. */
	bool counts_duplicates;
	/* What the layout would cost at fpr when SQL names no layout: the row
	 * of the kind with the lowest cost is the default (amq_default_layout),
	 * the first in the registry on a tie or when none is finite. INFINITY:
	 * this layout cannot reach fpr. NULL: never the default. */
	double (*default_cost)(double fpr);
	/* What the kind's own code knows of this layout (cuckoo: the bucket
	 * shape; bloom: how its bits are sized). Only that kind's files read
	 * it. NULL: nothing. */
	const void *shape;

	/* ---- size and format (all required) ---- */
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
	/* verify decodes every cell (cuckoo counts its slots), which costs more
	 * than comparing the bytes with a copy of ones verified before: an
	 * adapter that keeps such copies keeps them at any size
	 * (amq_verify_reads_cells). */
	bool verify_reads_cells;
	/* The hashes and cells of a filter for capacity items at fpr. */
	amq_status (*size)(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
			   amq_error *err);

	/* ---- building ---- */
	/* An empty filter with an expansion (0: the default). NULL: allocate
	 * a zeroed payload of size()'s parameters; an expansion is refused. */
	amq_status (*create)(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
			     uint64_t seed, const amq_allocator *a, amq_error *err);
	/* The order an aggregate adds its distinct hashes in: a builder
	 * collects, sorts and spills collect_key(hash), a bijection, and hands
	 * the sorted keys to add_collected (still a function of the set alone).
	 * NULL: the hash itself, so sorted order. */
	uint64_t (*collect_key)(uint64_t hash);
	/* Adds an aggregate's sorted keys[0..n), in that order: the whole set
	 * at once, or consecutive pieces of it when the builder spilled. NULL:
	 * one amq_filter_add_to each, the key being the hash. Required for a
	 * build-only variant (which then needs the whole set in one piece: a
	 * builder gives that only when it did not spill). */
	amq_status (*add_collected)(amq_filter *f, const uint64_t *keys, size_t n,
				    const amq_allocator *a, amq_error *err);
	/* The bytes a build-only variant's build of n distinct hashes takes at
	 * its peak, the builder's 8 bytes per hash and the filter included:
	 * its builder never spills, and refuses the build, naming bloom_agg,
	 * as soon as the hashes it holds could not be built in its working
	 * memory (builder.c). NULL: the builder's memory bounds the build. */
	uint64_t (*build_memory)(uint64_t n);
	/* Adds one value in f's own buffer; on failure the filter is
	 * unchanged. A variant that grows (add_grow) may have it too, for
	 * amq_bloom_add, which has no allocator: it then never fails and
	 * stores past the capacity. NULL: no single adds without add_grow. */
	amq_status (*add)(amq_filter *f, uint64_t hash, amq_error *err);
	/* Adds one value, replacing f's buffer by a larger one from a when it
	 * must grow (AMQ_FILTER_FULL then when a is NULL). Every generic add
	 * takes it before add. NULL: fixed size. */
	amq_status (*add_grow)(amq_filter *f, uint64_t hash, const amq_allocator *a,
			       amq_error *err);

	/* ---- reading (contains required) ---- */
	/* False when hash was certainly never added: amq_probe's shape. */
	bool (*contains)(const amq_filter *f, uint64_t hash);
	/* The fastest contains this CPU runs for f (no per-probe dispatch).
	 * NULL: contains. */
	amq_probe (*probe_for)(const amq_filter *f);
	/* out[i] = contains(f, hashes[i]) for i < n, faster than one probe at
	 * a time (it loads ahead). NULL: the probe for each hash. */
	void (*contains_many)(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out);
	/* Removes one copy; false, filter unchanged, when none is stored.
	 * NULL: the variant cannot forget a value. */
	bool (*remove)(amq_filter *f, uint64_t hash);
	/* How many times hash was added, never less than the truth. NULL: none. */
	uint64_t (*frequency)(const amq_filter *f, uint64_t hash);
	/* dst gets src's values; src has dst's variant. NULL: no union. */
	amq_status (*union_into)(amq_filter *dst, const amq_filter *src, amq_error *err);
	/* dst keeps what both hold; src has dst's variant. NULL: no intersection. */
	amq_status (*intersect_into)(amq_filter *dst, const amq_filter *src, amq_error *err);

	/* ---- describing (all required) ---- */
	/* The false-positive rate a random absent value sees now. */
	double (*expected_fpr)(const amq_filter *f);
	/* Distinct values the filter is estimated to hold. */
	double (*estimate_items)(const amq_filter *f);
	/* One JSON object describing f (amq_filter_info_json's contract). */
	int (*info)(const amq_filter *f, char *out, size_t cap);
} amq_variant;

/* ---- the registry (variant.c) ---- */

/* How many rows the registry has. */
size_t amq_variant_count(void);
/* Row i of the registry, in its fixed order (the rows of amq 0.3.0 first,
 * each kind's first layout before its others; later rows after them), for
 * i < amq_variant_count(); NULL past it. */
const amq_variant *amq_variant_at(size_t i);
/* Defines a row of the registry, `AMQ_VARIANT_ROW(amq_variant_x) = {...};`,
 * with the extern declaration a non-static definition needs before it
 * (PostgreSQL 18 builds extensions with -Wmissing-variable-declarations);
 * variant.c declares it again for its array. */
#define AMQ_VARIANT_ROW(name)                                                                      \
	extern const amq_variant name;                                                             \
	const amq_variant name

/* The row of kind and layout, or NULL when no such variant exists. */
const amq_variant *amq_variant_find(amq_kind kind, amq_layout layout);
/* The first row of kind, or NULL when this build knows no such kind. */
const amq_variant *amq_variant_first_of(amq_kind kind);
/* The row of an opened filter (never NULL: open refuses unknown variants). */
const amq_variant *amq_variant_of(const amq_filter *f);

/* ---- what the rows' code shares with format.c (format.c) ---- */

/* True when no payload bit at or past bit `from` is set. */
bool amq_tail_is_zero(const amq_filter *f, uint64_t from);

/* Payload bytes a filter with these parameters must have (0 if impossible). */
uint64_t amq_payload_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells);

/* The payload size of a filter with these parameters, or AMQ_TOO_LARGE (with
 * the one message every "too large" uses) past AMQ_MAX_FILTER_BYTES. */
amq_status amq_check_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells,
			  uint64_t *payload_size, amq_error *err);

/*
 * Allocates a zeroed filter with these parameters, points f at it and seals
 * it. Fails as amq_check_size does, or with AMQ_NO_MEMORY when the allocator
 * does.
 */
amq_status amq_filter_allocate(amq_filter *f, amq_kind kind, amq_layout layout, uint32_t hashes,
			       uint64_t seed, uint64_t cells, const amq_allocator *a,
			       amq_error *err);

#endif
