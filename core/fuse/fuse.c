/*
 * fuse.c - the binary fuse filter (Graf & Lemire, "Binary Fuse Filters: Fast
 * and Smaller Than Xor Filters", 2022): kind fuse, layout 'binary', a
 * build-only filter made whole from the full set of values.
 *
 * The filter is an array of c-bit fingerprints (c = 8 or 16, the header's
 * hashes), cut into segments of L slots (a power of two). A value hash h
 * has three slots, one in each of three consecutive segments, and a
 * fingerprint; the filter is built so that the three slots of every value
 * XOR to its fingerprint. A probe reads the three slots and compares: an
 * absent value matches with probability 2^-c (0.39% for 8 bits, 0.0015% for
 * 16), a member always. It takes about 9.0 bits per value at 8 bits for a
 * million values and more (13% over the bound of 8), against 12.2 for a
 * blocked Bloom filter at the same rate.
 *
 * Building peels a 3-hypergraph: a slot that only one value maps to can be
 * assigned last for that value, so slots are taken off one at a time, each
 * with its value, and then assigned in the reverse order. Peeling fails
 * (rarely, more often for small sets, whose arrays get more room) when a
 * core of values remains where every slot has two or more; the build then
 * retries with the next construction seed, which moves each value's second
 * and third slots, and after FUSE_ATTEMPTS seeds reports the filter full so
 * the builder retries 1/8 larger (builder.c). Everything is a function of
 * the sorted set of hashes, so the bytes are too.
 *
 * Positions (docs/FORMAT.md): the first slot is reduce(h, segments * L),
 * from h alone, so the sorted hashes the builder hands over sweep the array
 * in order and the build stays in the caches' reach; the other two and the
 * fingerprint come from g = mix64(h + (seed + 1) * golden), the part a new
 * construction seed changes.
 *
 * Memory: the build needs, besides the filter, a count byte, the XOR of
 * the hashes (8 bytes) and a queue entry (4 bytes) per slot, and the
 * builder's 8 bytes per hash: about 24 bytes per value, all in memory at
 * once. build_memory says how much, and the builder refuses a build past
 * its working memory with words that name bloom_agg (builder.c).
 */
#include "format/variant.h"

#include <math.h>
#include <stdio.h>

/* The fuse kind's code (docs/FORMAT.md); amq_kind names only the kinds
 * adapters call by name, and SQL finds this one by its name. */
#define FUSE_KIND ((amq_kind)3)
#define FUSE_LAYOUT_BINARY ((amq_layout)0)

/* Payload bytes before the fingerprints: segment length and construction
 * seed, two little-endian 32-bit words. */
#define FUSE_PREFIX 8
#define FUSE_MAX_SEGMENT_LENGTH ((uint32_t)1 << 18)
/* Construction seeds tried at one size before the builder grows it. */
#define FUSE_ATTEMPTS 16
/* Bytes a build takes per slot beyond the filter: count, XOR, queue. */
#define FUSE_BUILD_BYTES_PER_SLOT 13

/* A filter's geometry, read from its payload's prefix and header. */
typedef struct fuse_shape {
	uint32_t segment_length; /* L, a power of two */
	uint32_t seed;		 /* the construction seed that peeled */
	uint64_t span;		 /* segments * L: where the first slot falls */
	uint32_t bits;		 /* fingerprint bits, 8 or 16 */
	const uint8_t *slots;	 /* the fingerprints */
} fuse_shape;

/* The three slots and the fingerprint of one hash. */
typedef struct fuse_place {
	uint64_t slot[3];
	uint32_t fingerprint;
} fuse_place;

static fuse_shape shape_of(const amq_filter *f)
{
	uint32_t length = amq_load32le(f->payload);
	return (fuse_shape){
	    .segment_length = length,
	    .seed = amq_load32le(f->payload + 4),
	    .span = f->cells - 2 * (uint64_t)length,
	    .bits = f->hashes,
	    .slots = f->payload + FUSE_PREFIX,
	};
}

/* Where h goes in a filter of shape s (docs/FORMAT.md). */
static inline fuse_place place(const fuse_shape *s, uint64_t h)
{
	uint64_t g = amq_mix64(h + ((uint64_t)s->seed + 1) * 0x9e3779b97f4a7c15ULL);
	uint64_t mask = s->segment_length - 1;
	uint64_t first = amq_reduce(h, s->span);
	return (fuse_place){
	    .slot = {first, (first + s->segment_length) ^ ((g >> 18) & mask),
		     (first + 2 * (uint64_t)s->segment_length) ^ (g & mask)},
	    .fingerprint = (uint32_t)(g >> (64 - s->bits)),
	};
}

/* Fingerprint slot i of s. */
static inline uint32_t slot_get(const fuse_shape *s, uint64_t i)
{
	if (s->bits == 8)
		return s->slots[i];
	const uint8_t *p = s->slots + 2 * i;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline void slot_set(uint8_t *slots, uint32_t bits, uint64_t i, uint32_t v)
{
	if (bits == 8) {
		slots[i] = (uint8_t)v;
	} else {
		slots[2 * i] = (uint8_t)v;
		slots[2 * i + 1] = (uint8_t)(v >> 8);
	}
}

/* The segment length and slot count of a filter for n values: L =
 * 2^floor(log_3.33(n) + 2.25) (at most 2^18) and about max(1.125, 0.875 +
 * 0.25 ln(10^6) / ln(n)) slots per value, rounded up to whole segments with
 * two more for the last values' second and third slots (Graf & Lemire's
 * sizing for three slots per value). */
static void geometry(uint64_t n, uint32_t *segment_length, uint64_t *cells)
{
	double values = n < 2 ? 2.0 : (double)n;
	double e = floor(log(values) / log(3.33) + 2.25);
	uint32_t length = e >= 18 ? FUSE_MAX_SEGMENT_LENGTH : (uint32_t)1 << (int)e;
	double factor = fmax(1.125, 0.875 + 0.25 * log(1e6) / log(values));
	uint64_t room = (uint64_t)ceil(values * factor);
	uint64_t segments = (room + length - 1) / length;
	segments = segments > 2 ? segments - 2 : 1;
	*segment_length = length;
	*cells = (segments + 2) * length;
}

/* ---- the row's functions ---- */

static double cell_bits(uint32_t hashes)
{
	return (double)hashes;
}

static uint64_t payload_size(uint32_t hashes, uint64_t cells)
{
	if (hashes != 8 && hashes != 16)
		return 0;
	return FUSE_PREFIX + cells * (hashes / 8);
}

static amq_status check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->hashes != 8 && f->hashes != 16)
		return amq_not_a_filter(
		    err, "%s%u-bit fingerprints where a binary fuse filter has 8 or 16", prefix,
		    f->hashes);
	if (f->items > f->cells)
		return amq_not_a_filter(err, "%s%llu items in %llu slots", prefix,
					(unsigned long long)f->items, (unsigned long long)f->cells);
	return AMQ_OK;
}

/* The segment length is a power of two up to 2^18, and the slots are three
 * segments or more, in whole segments. */
static amq_status check_payload(const amq_filter *f, const char *prefix, amq_error *err)
{
	uint32_t length = amq_load32le(f->payload);
	if (length == 0 || (length & (length - 1)) != 0 || length > FUSE_MAX_SEGMENT_LENGTH)
		return amq_not_a_filter(err, "%ssegment length %u is not a power of two up to %u",
					prefix, length, FUSE_MAX_SEGMENT_LENGTH);
	if (f->cells % length != 0 || f->cells / length < 3)
		return amq_not_a_filter(err, "%s%llu slots are not three or more segments of %u",
					prefix, (unsigned long long)f->cells, length);
	return AMQ_OK;
}

/* An empty filter (no items) has every slot zero, as amq writes it. */
static amq_status verify(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->items == 0 && amq_load32le(f->payload + 4) != 0)
		return amq_not_a_filter(err,
					"%san empty binary fuse filter with construction seed %u",
					prefix, amq_load32le(f->payload + 4));
	if (f->items == 0 && !amq_tail_is_zero(f, 8 * FUSE_PREFIX))
		return amq_not_a_filter(err, "%san empty binary fuse filter with fingerprints set",
					prefix);
	return AMQ_OK;
}

/* The fingerprint bits for fpr: the fewest whose rate 2^-bits meets it. */
static amq_status fingerprint_bits(double fpr, uint32_t *bits, amq_error *err)
{
	if (fpr >= 1.0 / 256)
		*bits = 8;
	else if (fpr >= 1.0 / 65536)
		*bits = 16;
	else
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"for a lower rate build a bloom filter (bloom_agg) or a cuckoo "
				"filter (cuckoo_agg)",
				"fpr %g is below the lowest rate of a binary fuse filter, %.3g "
				"(16-bit fingerprints)",
				fpr, 1.0 / 65536);
	return AMQ_OK;
}

static amq_status size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
		       amq_error *err)
{
	uint32_t length;
	geometry(capacity, &length, cells);
	return fingerprint_bits(fpr, hashes, err);
}

/* An all-zero filter for capacity values, its segment length in place. */
static amq_status create(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
			 uint64_t seed, const amq_allocator *a, amq_error *err)
{
	if (expansion != 0)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"pass an expansion only with layout 'scalable'",
				"a binary fuse filter does not grow, so it takes no expansion");
	uint32_t length, bits = 0;
	uint64_t cells;
	geometry(capacity, &length, &cells);
	amq_status st = fingerprint_bits(fpr, &bits, err);
	if (st == AMQ_OK)
		st = amq_filter_allocate(f, FUSE_KIND, FUSE_LAYOUT_BINARY, bits, seed, cells, a,
					 err);
	if (st != AMQ_OK)
		return st;
	amq_store32le(f->payload, length);
	amq_filter_seal(f);
	return AMQ_OK;
}

/* The builder's 8 bytes per hash, the build's arrays and the filter (at
 * 16-bit fingerprints, the larger). */
static uint64_t build_memory(uint64_t n)
{
	uint32_t length;
	uint64_t cells;
	geometry(n, &length, &cells);
	return 8 * n + cells * (FUSE_BUILD_BYTES_PER_SLOT + 2);
}

/* The working arrays of one build, per slot: how many unpeeled hashes map
 * there (count >> 2) and the XOR of which of their three slots it is (the
 * low two bits); the XOR of those hashes; the queue of slots to peel, whose
 * front becomes the peeling order. */
typedef struct fuse_work {
	uint8_t *count;
	uint64_t *xor_hash;
	uint32_t *queue;
} fuse_work;

/* Peels keys[0..n) under s's construction seed: true, with queue[0..n) the
 * slots in peeling order, when every hash was peeled. *st is set when an
 * interrupt stops it. */
static bool peel(const fuse_shape *s, uint64_t cells, const uint64_t *keys, size_t n, fuse_work *w,
		 const amq_allocator *a, amq_status *st, amq_error *err)
{
	memset(w->count, 0, cells);
	memset(w->xor_hash, 0, cells * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		fuse_place p = place(s, keys[i]);
		for (uint32_t j = 0; j < 3; j++) {
			uint64_t slot = p.slot[j];
			if (w->count[slot] >= 252)
				return false; /* 63 hashes on one slot: no peeling */
			w->count[slot] = (uint8_t)((w->count[slot] + 4) ^ j);
			w->xor_hash[slot] ^= keys[i];
		}
		if (i % AMQ_INTERRUPT_EVERY == AMQ_INTERRUPT_EVERY - 1 &&
		    (*st = amq_poll(a, err)) != AMQ_OK)
			return false;
	}
	uint64_t tail = 0;
	for (uint64_t i = 0; i < cells; i++)
		if (w->count[i] >> 2 == 1)
			w->queue[tail++] = (uint32_t)i;
	uint64_t peeled = 0;
	for (uint64_t head = 0; head < tail; head++) {
		uint32_t slot = w->queue[head];
		if (w->count[slot] >> 2 != 1)
			continue; /* its hash was peeled through another slot */
		uint64_t h = w->xor_hash[slot];
		uint32_t which = w->count[slot] & 3;
		w->count[slot] = (uint8_t)which; /* kept for the assignment */
		w->queue[peeled++] = slot;	 /* never past head */
		fuse_place p = place(s, h);
		for (uint32_t j = 0; j < 3; j++) {
			if (j == which)
				continue;
			uint64_t other = p.slot[j];
			w->count[other] = (uint8_t)((w->count[other] - 4) ^ j);
			w->xor_hash[other] ^= h;
			if (w->count[other] >> 2 == 1)
				w->queue[tail++] = (uint32_t)other;
		}
		if (peeled % AMQ_INTERRUPT_EVERY == 0 && (*st = amq_poll(a, err)) != AMQ_OK)
			return false;
	}
	return peeled == n;
}

/* Sets the fingerprints of f from a complete peeling: in reverse order,
 * each slot gets what makes its hash's three slots XOR to its fingerprint
 * (its other two are final by then). */
static void assign(amq_filter *f, const fuse_shape *s, const fuse_work *w, size_t n)
{
	uint8_t *slots = f->payload + FUSE_PREFIX;
	for (size_t i = n; i-- > 0;) {
		uint32_t slot = w->queue[i];
		uint64_t h = w->xor_hash[slot];
		uint32_t which = w->count[slot];
		fuse_place p = place(s, h);
		uint32_t v = p.fingerprint ^ slot_get(s, p.slot[(which + 1) % 3]) ^
			     slot_get(s, p.slot[(which + 2) % 3]);
		slot_set(slots, s->bits, slot, v);
	}
}

/* Builds f (made by create for at least n values) from the sorted distinct
 * hashes keys[0..n), trying construction seeds 0, 1, ... in turn. */
static amq_status add_collected(amq_filter *f, const uint64_t *keys, size_t n,
				const amq_allocator *a, amq_error *err)
{
	f->items = n;
	if (n == 0)
		return AMQ_OK;
	uint64_t cells = f->cells;
	fuse_work w = {
	    .count = a->alloc(a->ctx, cells),
	    .xor_hash = a->alloc(a->ctx, cells * sizeof(uint64_t)),
	    .queue = a->alloc(a->ctx, cells * sizeof(uint32_t)),
	};
	amq_status st = AMQ_OK;
	if (w.count == NULL || w.xor_hash == NULL || w.queue == NULL)
		st =
		    amq_fail(err, AMQ_NO_MEMORY, "", "out of memory building a binary fuse filter");
	bool built = false;
	for (uint32_t seed = 0; st == AMQ_OK && !built && seed < FUSE_ATTEMPTS; seed++) {
		amq_store32le(f->payload + 4, seed);
		fuse_shape s = shape_of(f);
		built = peel(&s, cells, keys, n, &w, a, &st, err);
		if (built)
			assign(f, &s, &w, n);
	}
	a->free(a->ctx, w.count);
	a->free(a->ctx, w.xor_hash);
	a->free(a->ctx, w.queue);
	if (st == AMQ_OK && !built)
		st = amq_fail(err, AMQ_FILTER_FULL, "",
			      "no construction seed peels %zu values in %llu slots", n,
			      (unsigned long long)cells);
	return st;
}

static bool contains(const amq_filter *f, uint64_t hash)
{
	if (f->items == 0)
		return false;
	fuse_shape s = shape_of(f);
	fuse_place p = place(&s, hash);
	return (slot_get(&s, p.slot[0]) ^ slot_get(&s, p.slot[1]) ^ slot_get(&s, p.slot[2])) ==
	       p.fingerprint;
}

/* out[i] for hashes[0..n): the slots of a few hashes ahead are fetched
 * while the current one is compared. */
static void contains_many(const amq_filter *f, const uint64_t *hashes, size_t n, bool *out)
{
	if (f->items == 0) {
		memset(out, 0, n);
		return;
	}
	fuse_shape s = shape_of(f);
	uint32_t width = s.bits / 8;
	enum { AHEAD = 8 };
	for (size_t i = 0; i < n; i++) {
		if (i + AHEAD < n) {
			fuse_place ahead = place(&s, hashes[i + AHEAD]);
			for (int j = 0; j < 3; j++)
				__builtin_prefetch(s.slots + width * ahead.slot[j]);
		}
		fuse_place p = place(&s, hashes[i]);
		out[i] = (slot_get(&s, p.slot[0]) ^ slot_get(&s, p.slot[1]) ^
			  slot_get(&s, p.slot[2])) == p.fingerprint;
	}
}

static double expected_fpr(const amq_filter *f)
{
	return f->items == 0 ? 0.0 : ldexp(1.0, -(int)f->hashes);
}

static double estimate_items(const amq_filter *f)
{
	return (double)f->items;
}

static int info(const amq_filter *f, char *out, size_t cap)
{
	fuse_shape s = shape_of(f);
	return snprintf(out, cap,
			"{\"kind\":\"fuse\",\"layout\":\"binary\",\"fingerprint_bits\":%u,"
			"\"items\":%llu,\"slots\":%llu,\"segment_length\":%u,\"segments\":%llu,"
			"\"bits_per_item\":%.6g,\"bytes\":%zu,\"expected_fpr\":%.6g,"
			"\"construction_seed\":%u,\"seed\":%llu,\"format_version\":%u}",
			f->hashes, (unsigned long long)f->items, (unsigned long long)f->cells,
			s.segment_length, (unsigned long long)(f->cells / s.segment_length),
			f->items ? (double)(f->cells * f->hashes) / (double)f->items : 0.0, f->size,
			expected_fpr(f), s.seed, (unsigned long long)f->seed,
			amq_filter_format_version(f));
}

AMQ_VARIANT_ROW(amq_variant_fuse_binary) = {
    .kind = FUSE_KIND,
    .layout = FUSE_LAYOUT_BINARY,
    .kind_name = "fuse",
    .layout_name = "binary",
    .layouts_hint = "a fuse filter has one layout, 'binary'",
    .format_version = 5,
    .cell_name = "slots",
    .order_free = false,
    .cell_bits = cell_bits,
    .payload_size = payload_size,
    .check_header = check_header,
    .check_payload = check_payload,
    .verify = verify,
    .size = size,
    .create = create,
    .add_collected = add_collected,
    .build_memory = build_memory,
    .contains = contains,
    .contains_many = contains_many,
    .expected_fpr = expected_fpr,
    .estimate_items = estimate_items,
    .info = info,
};
