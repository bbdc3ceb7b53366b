/*
 * bloom_dleft.c - the d-left counting Bloom filter (Bonomi, Mitzenmacher,
 * Panigrahy, Singh & Varghese, "An Improved Construction for Counting Bloom
 * Filters", ESA 2006): the 'dleft' layout of kind bloom, a counting filter in
 * about half the counting layout's bytes (docs/FORMAT.md, docs/BENCHMARKS.md).
 *
 * The table is d = 4 subtables of B buckets each; a bucket holds 8 cells, a
 * cell an r-bit remainder and a 4-bit counter (0: the cell is free). A value
 * hash h gives ONE true fingerprint fp = reduce(h, B * 2^r), read as a bucket
 * q = fp >> r and a remainder rem = fp mod 2^r. Subtable i sees it through a
 * fixed invertible permutation, a two-round Feistel network over
 * [0, B) x [0, 2^r):
 *   rem_i    = (rem + F_i(q)) mod 2^r,   F_i(x) = mix64(x ^ KF_i) mod 2^r
 *   bucket_i = (q + G_i(rem_i)) mod B,   G_i(x) = reduce(mix64(x ^ KG_i), B)
 * Both steps can be undone (q = bucket_i - G_i(rem_i), rem = rem_i - F_i(q)),
 * so (bucket_i, rem_i) names exactly one fingerprint.
 *
 * Why one fingerprint and permutations, not d independent hashes: with
 * independent hashes, x and y can share a (bucket, remainder) pair in one
 * subtable while their other candidates differ; x's cell may sit there and y
 * may be stored elsewhere, and a delete of y that finds "its" remainder in
 * that bucket removes x's cell instead: x becomes a false negative. Here a
 * cell that matches y in any subtable has y's own fingerprint, so it is y's
 * cell (shared, counted, with every value of that fingerprint). An insert
 * first looks for that cell in all d candidates and increments it, so a
 * fingerprint has at most one cell, and a delete decrements that one.
 *
 * Rules: an insert increments the value's cell when one of its d buckets
 * holds it; otherwise it writes a new cell (counter 1) into the least loaded
 * candidate, ties to the leftmost subtable (Voecking's "always go left"), so
 * loads stay within a cell or two of the mean. When all d candidates are full
 * the add fails with AMQ_FILTER_FULL before writing anything. A bucket keeps
 * its used cells first: a delete that frees a cell moves the bucket's last
 * used cell into it, so a load is the index of the first free cell.
 *
 * Sizing: at capacity n the mean load is L = 6 of 8 cells per bucket (the
 * paper's choice), B = ceil(n / (4 L)). An absent value is a false positive
 * exactly when its fingerprint is one of the U <= n stored ones, so the rate
 * is U / (B 2^r) <= 4 L / 2^r = 24 / 2^r, and r is the smallest with
 * 24 / 2^r <= fpr (5 to 32 bits). Cells take (r + 4) * 8 / 6 bits per value:
 * 21.3 at 1% (r = 12), 25.3 at 0.1% (r = 15), against the counting layout's
 * 38.3 and 57.5.
 *
 * Counters: 4 bits, as the counting layout's, so repeats are counted to 14.
 * A counter that reaches 15 saturates and is sticky: never incremented or
 * decremented again, so its cell is never freed and no sequence of adds and
 * deletes of added values can lose a value; its frequency is then reported as
 * the filter's item count (adds minus deletes), at least 15.
 *
 * What applies: bloom_count (estimate_items: the used cells, one per distinct
 * fingerprint) and bloom_fpr (expected_fpr: used cells / (B 2^r), the exact
 * chance above). bloom_union and bloom_intersect are refused: where a cell
 * sits depends on the loads its filter had when it was added, so two filters
 * do not line up cell by cell; a union would have to re-insert every cell of
 * one filter into the other and could run out of room halfway (union_into has
 * no scratch copy to fall back on), and the aggregate builds the filter of all
 * the values instead.
 *
 * Deleting a value that was never added can remove another value's cell (a
 * false positive's): delete only what you added.
 */
#include "bloom/bloom_internal.h"

#include <math.h>
#include <stdio.h>

#define DLEFT_SUBTABLES 4
#define DLEFT_CELLS 8
#define DLEFT_COUNTER_BITS 4
#define DLEFT_LOAD 6 /* mean used cells per bucket at capacity */
#define DLEFT_MIN_REMAINDER 5
#define DLEFT_MAX_REMAINDER 32
/* Buckets per subtable past which no filter fits 1 GiB; it also keeps
 * B * 2^r below 2^64. */
#define DLEFT_MAX_BUCKETS ((uint64_t)1 << 28)
/* The permutation keys: KF_i = GOLDEN * (2i + 1), KG_i = GOLDEN * (2i + 2). */
#define DLEFT_GOLDEN 0x9e3779b97f4a7c15ULL

/* Where a value may live: for each subtable its bucket and remainder. */
typedef struct dleft_spot {
	uint64_t bucket[DLEFT_SUBTABLES];
	uint64_t rem[DLEFT_SUBTABLES];
} dleft_spot;

/* Bits of one cell. */
static inline unsigned cell_width(const amq_filter *f)
{
	return f->hashes + DLEFT_COUNTER_BITS;
}

/* The bit where cell k of bucket b of subtable i starts. */
static inline uint64_t cell_bit(const amq_filter *f, unsigned i, uint64_t b, unsigned k)
{
	return ((i * f->cells + b) * DLEFT_CELLS + k) * cell_width(f);
}

/* The cell at bit `at`: counter in the low 4 bits, remainder above. One
 * little-endian 64-bit load (the payload's spare word keeps it in bounds). */
static inline uint64_t cell_get(const amq_filter *f, uint64_t at)
{
	uint64_t mask = ((uint64_t)1 << cell_width(f)) - 1;
	return (amq_load64le(f->payload + at / 8) >> (at % 8)) & mask;
}

/* Writes cell value v at bit `at`, leaving its neighbours as they were. */
static inline void cell_put(amq_filter *f, uint64_t at, uint64_t v)
{
	uint64_t mask = ((uint64_t)1 << cell_width(f)) - 1;
	uint8_t *p = f->payload + at / 8;
	unsigned shift = (unsigned)(at % 8);
	amq_store64le(p, (amq_load64le(p) & ~(mask << shift)) | (v << shift));
}

/* F_i and G_i of the permutation of subtable i. */
static inline uint64_t feistel_f(const amq_filter *f, unsigned i, uint64_t q)
{
	uint64_t rmask = ((uint64_t)1 << f->hashes) - 1;
	return amq_mix64(q ^ (DLEFT_GOLDEN * (2 * i + 1))) & rmask;
}

static inline uint64_t feistel_g(const amq_filter *f, unsigned i, uint64_t rem)
{
	return amq_reduce(amq_mix64(rem ^ (DLEFT_GOLDEN * (2 * i + 2))), f->cells);
}

/* The d (bucket, remainder) pairs of hash: one fingerprint, d permutations. */
static void locate(const amq_filter *f, uint64_t hash, dleft_spot *s)
{
	uint64_t rmask = ((uint64_t)1 << f->hashes) - 1;
	uint64_t fp = amq_reduce(hash, f->cells << f->hashes);
	uint64_t q = fp >> f->hashes, rem = fp & rmask;
	for (unsigned i = 0; i < DLEFT_SUBTABLES; i++) {
		s->rem[i] = (rem + feistel_f(f, i, q)) & rmask;
		uint64_t b = q + feistel_g(f, i, s->rem[i]);
		s->bucket[i] = b >= f->cells ? b - f->cells : b;
	}
}

/* The fingerprint (q << r | rem) of remainder rem_i in bucket b of subtable
 * i: the permutation undone, for the checks of verify. */
static uint64_t fingerprint_of(const amq_filter *f, unsigned i, uint64_t b, uint64_t rem_i)
{
	uint64_t rmask = ((uint64_t)1 << f->hashes) - 1;
	uint64_t g = feistel_g(f, i, rem_i);
	uint64_t q = b >= g ? b - g : b + f->cells - g;
	return q << f->hashes | ((rem_i - feistel_f(f, i, q)) & rmask);
}

/* The first bit of the used cell of remainder rem in bucket b of subtable
 * i, or UINT64_MAX; *load gets the bucket's used cells when no cell matched. */
static uint64_t bucket_find(const amq_filter *f, unsigned i, uint64_t b, uint64_t rem,
			    unsigned *load)
{
	uint64_t at = cell_bit(f, i, b, 0);
	for (unsigned k = 0; k < DLEFT_CELLS; k++, at += cell_width(f)) {
		uint64_t c = cell_get(f, at);
		if (c == 0) {
			*load = k;
			return UINT64_MAX;
		}
		if (c >> DLEFT_COUNTER_BITS == rem)
			return at;
	}
	*load = DLEFT_CELLS;
	return UINT64_MAX;
}

/* The first bit of hash's cell, or UINT64_MAX; loads[] gets each
 * candidate's used cells when there is none. */
static uint64_t find_cell(const amq_filter *f, uint64_t hash, dleft_spot *s,
			  unsigned loads[DLEFT_SUBTABLES])
{
	locate(f, hash, s);
	for (unsigned i = 0; i < DLEFT_SUBTABLES; i++) {
		uint64_t at = bucket_find(f, i, s->bucket[i], s->rem[i], &loads[i]);
		if (at != UINT64_MAX)
			return at;
	}
	return UINT64_MAX;
}

/* Increments hash's cell, or puts a new one in its least loaded bucket;
 * AMQ_FILTER_FULL, nothing written, when all d are full. */
static amq_status dleft_add(amq_filter *f, uint64_t hash, amq_error *err)
{
	dleft_spot s;
	unsigned loads[DLEFT_SUBTABLES];
	uint64_t at = find_cell(f, hash, &s, loads);
	if (at != UINT64_MAX) {
		uint64_t c = cell_get(f, at);
		if ((c & AMQ_COUNTING_MAX) < AMQ_COUNTING_MAX)
			cell_put(f, at, c + 1);
	} else {
		unsigned best = 0;
		for (unsigned i = 1; i < DLEFT_SUBTABLES; i++)
			best = loads[i] < loads[best] ? i : best;
		if (loads[best] == DLEFT_CELLS)
			return amq_fail(err, AMQ_FILTER_FULL,
					"rebuild it with a larger capacity, bloom_new(capacity, "
					"fpr, 'dleft'), or with bloom_agg over every value",
					"dleft bloom filter is full: the %d buckets this value may "
					"take hold %d values each (%llu items)",
					DLEFT_SUBTABLES, DLEFT_CELLS, (unsigned long long)f->items);
		cell_put(f, cell_bit(f, best, s.bucket[best], loads[best]),
			 s.rem[best] << DLEFT_COUNTER_BITS | 1);
	}
	f->items = f->items == UINT64_MAX ? UINT64_MAX : f->items + 1;
	return AMQ_OK;
}

/* False when no candidate bucket holds hash's remainder: never added. */
static bool dleft_contains(const amq_filter *f, uint64_t hash)
{
	dleft_spot s;
	unsigned loads[DLEFT_SUBTABLES];
	return find_cell(f, hash, &s, loads) != UINT64_MAX;
}

/* Decrements hash's cell (not a saturated one), freeing it at 0 by moving
 * its bucket's last used cell into it; false, unchanged, without a cell. */
static bool dleft_remove(amq_filter *f, uint64_t hash)
{
	dleft_spot s;
	unsigned loads[DLEFT_SUBTABLES];
	uint64_t at = find_cell(f, hash, &s, loads);
	if (at == UINT64_MAX)
		return false;
	uint64_t c = cell_get(f, at);
	if ((c & AMQ_COUNTING_MAX) == 1) {
		/* The bucket's last used cell, at or after this one, fills the
		 * gap, so the used cells stay first. Cell bits are whole cells
		 * from bit 0, so the cell's index within its bucket is k. */
		uint64_t w = cell_width(f), k = (at / w) % DLEFT_CELLS, last = at;
		for (uint64_t next = at + w; k + 1 < DLEFT_CELLS && cell_get(f, next) != 0;
		     next += w, k++)
			last = next;
		cell_put(f, at, cell_get(f, last));
		cell_put(f, last, 0);
	} else if ((c & AMQ_COUNTING_MAX) < AMQ_COUNTING_MAX) {
		cell_put(f, at, c - 1);
	}
	if (f->items > 0)
		f->items--;
	return true;
}

/* The cell's count; when it saturated, the filter's item count, which no
 * value's count can exceed. 0 without a cell. */
static uint64_t dleft_frequency(const amq_filter *f, uint64_t hash)
{
	dleft_spot s;
	unsigned loads[DLEFT_SUBTABLES];
	uint64_t at = find_cell(f, hash, &s, loads);
	if (at == UINT64_MAX)
		return 0;
	uint64_t c = cell_get(f, at) & AMQ_COUNTING_MAX;
	if (c < AMQ_COUNTING_MAX)
		return c;
	return f->items > AMQ_COUNTING_MAX ? f->items : AMQ_COUNTING_MAX;
}

/* What a filter's cells hold, from one pass over them. */
typedef struct dleft_census {
	uint64_t used;	    /* cells with a non-zero counter */
	uint64_t saturated; /* of them, counters at 15 */
	unsigned fullest;   /* the most used cells of any bucket */
} dleft_census;

static dleft_census census(const amq_filter *f)
{
	dleft_census c = {0, 0, 0};
	uint64_t at = 0, w = cell_width(f);
	for (uint64_t b = 0; b < DLEFT_SUBTABLES * f->cells; b++) {
		unsigned load = 0;
		for (unsigned k = 0; k < DLEFT_CELLS; k++, at += w) {
			unsigned n = (unsigned)(cell_get(f, at) & AMQ_COUNTING_MAX);
			load += n != 0;
			c.saturated += n == AMQ_COUNTING_MAX;
		}
		c.used += load;
		c.fullest = load > c.fullest ? load : c.fullest;
	}
	return c;
}

/* An absent value is a false positive exactly when its fingerprint is one of
 * the `used` stored ones: used out of B 2^r fingerprints. */
static double fpr_of(const amq_filter *f, uint64_t used)
{
	return ldexp((double)used / (double)f->cells, -(int)f->hashes);
}

static double dleft_expected_fpr(const amq_filter *f)
{
	return fpr_of(f, census(f).used);
}

/* Distinct values from the used cells, one per distinct fingerprint: n
 * random values take N (1 - (1 - 1/N)^n) of the N = B 2^r fingerprints, so
 * n = -N ln(1 - used / N). (Saturated cells whose values left still count.) */
static double estimate_of(const amq_filter *f, uint64_t used)
{
	double space = ldexp((double)f->cells, (int)f->hashes);
	return -space * log1p(-(double)used / space);
}

static double dleft_estimate_items(const amq_filter *f)
{
	return estimate_of(f, census(f).used);
}

/* Payload bits per bucket, for the size a too-large request would need
 * (cells counts buckets per subtable). */
static double dleft_cell_bits(uint32_t hashes)
{
	return (double)DLEFT_SUBTABLES * DLEFT_CELLS * (hashes + DLEFT_COUNTER_BITS);
}

/* The cells in whole 64-bit words, and one spare zero word so every cell is
 * read with one 64-bit load; 0 for a remainder or bucket count no filter has. */
static uint64_t dleft_payload_size(uint32_t hashes, uint64_t cells)
{
	if (hashes < DLEFT_MIN_REMAINDER || hashes > DLEFT_MAX_REMAINDER || cells == 0 ||
	    cells > DLEFT_MAX_BUCKETS)
		return 0;
	uint64_t bits = cells * DLEFT_SUBTABLES * DLEFT_CELLS * (hashes + DLEFT_COUNTER_BITS);
	return ((bits + 63) / 64 + 1) * 8;
}

/* The header's hashes field is the remainder's bits. */
static amq_status dleft_check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->hashes < DLEFT_MIN_REMAINDER || f->hashes > DLEFT_MAX_REMAINDER)
		return amq_not_a_filter(
		    err, "%s%u remainder bits where a dleft bloom filter has %d to %d", prefix,
		    f->hashes, DLEFT_MIN_REMAINDER, DLEFT_MAX_REMAINDER);
	return AMQ_OK;
}

/* True when the fingerprint of the used cell at `at` (bucket b of subtable
 * i) also has a cell in another of its candidate buckets, or a second cell
 * in its own. */
static bool stored_twice(const amq_filter *f, unsigned i, uint64_t b, uint64_t at)
{
	uint64_t rem = cell_get(f, at) >> DLEFT_COUNTER_BITS, w = cell_width(f);
	for (uint64_t other = cell_bit(f, i, b, 0); other < at; other += w)
		if (cell_get(f, other) >> DLEFT_COUNTER_BITS == rem)
			return true;
	/* Only cells of lower subtables: a pair is then seen once. */
	uint64_t fp = fingerprint_of(f, i, b, rem), q = fp >> f->hashes;
	uint64_t rmask = ((uint64_t)1 << f->hashes) - 1;
	for (unsigned j = 0; j < i; j++) {
		unsigned load;
		uint64_t rem_j = ((fp & rmask) + feistel_f(f, j, q)) & rmask;
		uint64_t bj = q + feistel_g(f, j, rem_j);
		bj = bj >= f->cells ? bj - f->cells : bj;
		if (bucket_find(f, j, bj, rem_j, &load) != UINT64_MAX)
			return true;
	}
	return false;
}

/* Every bucket's used cells first and its free cells all zero bits; no
 * fingerprint stored twice; items the sum of the counters when none
 * saturated (a saturated counter stands for any number of adds, and deletes
 * of its values lower items alone, so then there is no rule); zero bits past
 * the last cell. */
static amq_status dleft_verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	uint64_t at = 0, w = cell_width(f), counted = 0, saturated = 0;
	for (unsigned i = 0; i < DLEFT_SUBTABLES; i++) {
		for (uint64_t b = 0; b < f->cells; b++) {
			bool free_seen = false;
			for (unsigned k = 0; k < DLEFT_CELLS; k++, at += w) {
				uint64_t c = cell_get(f, at), n = c & AMQ_COUNTING_MAX;
				if ((n == 0 && c != 0) || (n != 0 && free_seen))
					return amq_not_a_filter(
					    err,
					    "%sbucket %llu of subtable %u has a used cell after a "
					    "free one, or a free cell that is not zero",
					    prefix, (unsigned long long)b, i);
				free_seen = n == 0;
				if (n != 0 && stored_twice(f, i, b, at))
					return amq_not_a_filter(
					    err,
					    "%sbucket %llu of subtable %u holds a fingerprint that "
					    "has another cell",
					    prefix, (unsigned long long)b, i);
				counted += n < AMQ_COUNTING_MAX ? n : 0;
				saturated += n == AMQ_COUNTING_MAX;
			}
		}
	}
	if (saturated == 0 && f->items != counted)
		return amq_not_a_filter(
		    err, "%sheader gives %llu items where the counters hold %llu", prefix,
		    (unsigned long long)f->items, (unsigned long long)counted);
	if (!amq_tail_is_zero(f, at))
		return amq_not_a_filter(err, "%sbits set past the last cell", prefix);
	return AMQ_OK;
}

/* r: the fewest remainder bits with 4 L / 2^r <= fpr; B: capacity over the
 * 4 L cells a bucket of each subtable holds on average at capacity. */
static amq_status dleft_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
			     amq_error *err)
{
	const double per_value = (double)DLEFT_SUBTABLES * DLEFT_LOAD;
	uint32_t r = DLEFT_MIN_REMAINDER;
	while (r <= DLEFT_MAX_REMAINDER && ldexp(per_value, -(int)r) > fpr)
		r++;
	if (r > DLEFT_MAX_REMAINDER)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"pass a larger fpr, or use layout 'counting' or 'blocked'",
				"a dleft bloom filter reaches fpr %.3g at the lowest, got %g",
				ldexp(per_value, -DLEFT_MAX_REMAINDER), fpr);
	uint64_t per_bucket = DLEFT_SUBTABLES * DLEFT_LOAD;
	*hashes = r;
	*cells = capacity / per_bucket + (capacity % per_bucket != 0);
	return AMQ_OK;
}

/* The JSON of bloom_info: the table's shape, its cells, the estimates. */
static int dleft_info(const amq_filter *f, char *out, size_t cap)
{
	dleft_census c = census(f);
	return snprintf(out, cap,
			"{\"kind\":\"bloom\",\"layout\":\"dleft\",\"subtables\":%d,"
			"\"buckets_per_subtable\":%llu,\"cells_per_bucket\":%d,"
			"\"remainder_bits\":%u,\"counter_bits\":%d,\"items\":%llu,\"bytes\":%zu,"
			"\"cells_used\":%llu,\"cells_saturated\":%llu,\"fullest_bucket\":%u,"
			"\"estimated_items\":%.0f,\"expected_fpr\":%.6g,\"seed\":%llu,"
			"\"format_version\":%u}",
			DLEFT_SUBTABLES, (unsigned long long)f->cells, DLEFT_CELLS, f->hashes,
			DLEFT_COUNTER_BITS, (unsigned long long)f->items, f->size,
			(unsigned long long)c.used, (unsigned long long)c.saturated, c.fullest,
			estimate_of(f, c.used), fpr_of(f, c.used), (unsigned long long)f->seed,
			amq_filter_format_version(f));
}

/* Not AMQ_BLOOM_ROW: the header's slots field holds the cells per bucket. */
AMQ_VARIANT_ROW(amq_variant_bloom_dleft) = {
    .kind = AMQ_KIND_BLOOM,
    .layout = AMQ_LAYOUT_DLEFT,
    .kind_name = "bloom",
    .layout_name = "dleft",
    .layouts_hint = AMQ_BLOOM_LAYOUTS_HINT,
    .format_version = 5,
    .slots = DLEFT_CELLS,
    .cell_name = "buckets per subtable",
    .counts_duplicates = true,
    .cell_bits = dleft_cell_bits,
    .payload_size = dleft_payload_size,
    .check_header = dleft_check_header,
    .verify = dleft_verify,
    .verify_reads_cells = true,
    .size = dleft_size,
    .add = dleft_add,
    .contains = dleft_contains,
    .remove = dleft_remove,
    .frequency = dleft_frequency,
    .expected_fpr = dleft_expected_fpr,
    .estimate_items = dleft_estimate_items,
    .info = dleft_info,
};
