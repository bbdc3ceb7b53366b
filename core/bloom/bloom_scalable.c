/*
 * bloom_scalable.c - the scalable Bloom filter (Almeida et al., "Scalable
 * Bloom Filters", 2007; RedisBloom's chain): the 'scalable' layout of kind
 * bloom, for a filter that must grow without knowing n.
 *
 * A chain of blocked Bloom links. Link 0 holds `capacity` values; when the
 * newest link holds its capacity, an add appends link i + 1, `expansion` times
 * larger. Link i is sized for the rate p_i = p (1 - r) r^i with r = 1/2, so
 * p/2, p/4, p/8, ... and the compound rate of any chain, 1 - prod(1 - p_i) <=
 * sum p_i < p, stays below the p asked at every size (RedisBloom's fixed 0.5
 * tightening with p_0 = p summed to 2p, and dablooms' 0.9 to 10p: the bugs
 * this schedule avoids). Each link is a blocked filter, so a probe costs one
 * cache line per link. An add of a value the chain may already hold adds
 * nothing (as RedisBloom's BF.ADD), so a chain depends only on the sequence
 * of distinct values added. An aggregate adds the distinct hashes it
 * collected in the order of a second hash of each (scalable_add_collected):
 * the chain is then the same for any row order, and grows from the capacity
 * given as it would under bloom_add.
 *
 * Payload (docs/FORMAT.md): a 64-byte chain header (p as IEEE-754 bits, the
 * first link's capacity, expansion, link count), a table of one 64-byte
 * descriptor per link (capacity, bits, hashes, items), then the links' bits in
 * order. The table stays in cache across probes, so a probe reads one line
 * per link. Everything is 64-byte aligned; the header's cells field counts the
 * payload's 64-byte lines.
 */
#include "bloom/bloom_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* Salt of the order an aggregate adds hashes in (insertion_key). */
#define INSERTION_SALT 0x5851f42d4c957f2dULL
#define LINE 64
/* Chain header fields, from the start of the payload. */
#define CHAIN_FPR 0
#define CHAIN_CAPACITY 8
#define CHAIN_EXPANSION 16
#define CHAIN_LINKS 20
/* Link descriptor fields, from the start of the descriptor. */
#define LINK_CAPACITY 0
#define LINK_BITS 8
#define LINK_HASHES 16
#define LINK_ITEMS 24

/* One link: its descriptor and a blocked-filter view of its bits. */
typedef struct link {
	uint8_t *descriptor;
	uint64_t capacity;
	amq_filter bits;
} link;

/* The IEEE-754 double stored little-endian at p. */
static double load_double(const uint8_t *p)
{
	uint64_t u = amq_load64le(p);
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Stores d little-endian at p as its IEEE-754 bits. */
static void store_double(uint8_t *p, double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	amq_store64le(p, u);
}

/* The number of links, from the chain header. */
static uint32_t link_count(const amq_filter *f)
{
	return amq_load32le(f->payload + CHAIN_LINKS);
}

/* Link i, whose bits start at payload offset `at` (checked at open). */
static link link_at(const amq_filter *f, uint32_t i, uint64_t at)
{
	link l;
	l.descriptor = f->payload + LINE * (1 + (uint64_t)i);
	l.capacity = amq_load64le(l.descriptor + LINK_CAPACITY);
	memset(&l.bits, 0, sizeof(l.bits));
	l.bits.kind = AMQ_KIND_BLOOM;
	l.bits.layout = AMQ_LAYOUT_BLOCKED;
	l.bits.cells = amq_load64le(l.descriptor + LINK_BITS);
	l.bits.hashes = amq_load32le(l.descriptor + LINK_HASHES);
	l.bits.items = amq_load64le(l.descriptor + LINK_ITEMS);
	l.bits.seed = f->seed;
	l.bits.payload = f->payload + at;
	l.bits.payload_size = l.bits.cells / 8;
	return l;
}

/* Where the first link's bits start: after the header and the table. */
static uint64_t first_bits(uint32_t links)
{
	return LINE * (1 + (uint64_t)links);
}

/* Where the bits of the link after l start. */
static uint64_t next_link(const link *l, uint64_t at)
{
	return at + l->bits.payload_size;
}

/* The rate link i is sized for: p (1 - r) r^i with r = 1/2. */
static double link_rate(double p, uint32_t i)
{
	return ldexp(p, -(int)i - 1);
}

/* Payload bits per cell: a cell is one 64-byte line. */
static double line_bits(uint32_t hashes)
{
	(void)hashes;
	return 8.0 * LINE;
}

/* Bytes of a payload of cells 64-byte lines. */
static uint64_t scalable_payload_size(uint32_t hashes, uint64_t cells)
{
	(void)hashes;
	return cells * LINE;
}

/* Header rules: no hashes (the links keep them) and at least the chain
 * header and one descriptor. */
static amq_status scalable_check_header(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (f->hashes != 0)
		return amq_not_a_filter(
		    err, "%sa scalable bloom header has %u hashes where its links keep them",
		    prefix, f->hashes);
	if (f->cells < 2)
		return amq_not_a_filter(err, "%sa scalable bloom filter of %llu lines has no link",
					prefix, (unsigned long long)f->cells);
	return AMQ_OK;
}

/* The chain's structure, in O(links): its header, then every descriptor,
 * ending exactly at the end of the payload; the header's items are the sum. */
static amq_status scalable_check_payload(const amq_filter *f, const char *prefix, amq_error *err)
{
	const uint8_t *p = f->payload;
	double fpr = load_double(p + CHAIN_FPR);
	uint64_t capacity = amq_load64le(p + CHAIN_CAPACITY);
	uint32_t expansion = amq_load32le(p + CHAIN_EXPANSION), links = link_count(f);
	bool reserved_zero = true;
	for (int i = CHAIN_LINKS + 4; i < LINE; i++)
		reserved_zero &= p[i] == 0;
	if (!(fpr > 0.0 && fpr < 1.0) || capacity == 0 || expansion < 1 ||
	    expansion > AMQ_SCALABLE_MAX_EXPANSION || links < 1 || links > AMQ_SCALABLE_MAX_LINKS ||
	    !reserved_zero)
		return amq_not_a_filter(
		    err,
		    "%sbad scalable chain header (fpr %g, capacity %llu, expansion %u, "
		    "%u links)",
		    prefix, fpr, (unsigned long long)capacity, expansion, links);
	if (f->payload_size < first_bits(links))
		return amq_not_a_filter(
		    err, "%sthe table of %u scalable links lies past the end of the filter", prefix,
		    links);
	uint64_t at = first_bits(links), items = 0;
	for (uint32_t i = 0; i < links; i++) {
		link l = link_at(f, i, at);
		bool zero = true;
		for (int b = LINK_ITEMS + 8; b < LINE; b++)
			zero &= l.descriptor[b] == 0;
		if (l.capacity == 0 || l.bits.cells == 0 || l.bits.cells % AMQ_BLOCK_BITS != 0 ||
		    l.bits.hashes < 1 || l.bits.hashes > AMQ_BLOOM_BLOCKED_MAX_HASHES ||
		    l.bits.payload_size > f->payload_size - at || !zero)
			return amq_not_a_filter(
			    err, "%sbad scalable link %u (%llu bits, %u hashes)", prefix, i,
			    (unsigned long long)l.bits.cells, l.bits.hashes);
		items = items + l.bits.items < items ? UINT64_MAX : items + l.bits.items;
		at = next_link(&l, at);
	}
	if (at != f->payload_size)
		return amq_not_a_filter(
		    err, "%sscalable links end at byte %llu of a %llu-byte payload", prefix,
		    (unsigned long long)at, (unsigned long long)f->payload_size);
	if (items != f->items)
		return amq_not_a_filter(err, "%sheader counts %llu items, links hold %llu", prefix,
					(unsigned long long)f->items, (unsigned long long)items);
	return AMQ_OK;
}

/* Bits and hashes of link i of a chain for p, holding capacity values. */
static amq_status size_link(uint64_t capacity, double p, uint32_t i, uint64_t *bits,
			    uint32_t *hashes, amq_error *err)
{
	return amq_blocked_size(capacity, link_rate(p, i), bits, hashes, err);
}

/* amq_bloom_size of a chain: the bits of its first link. */
static const amq_bloom_shape first_link_shape = {.size_bits = amq_blocked_size};

/* A one-link chain: the header's fields count 64-byte lines. */
static amq_status scalable_size(uint64_t capacity, double fpr, uint32_t *hashes, uint64_t *cells,
				amq_error *err)
{
	uint64_t bits;
	uint32_t k;
	amq_status st = size_link(capacity, fpr, 0, &bits, &k, err);
	if (st != AMQ_OK)
		return st;
	*hashes = 0;
	*cells = 2 + bits / AMQ_BLOCK_BITS;
	return AMQ_OK;
}

/* Writes link i's descriptor at payload offset `at`. */
static void write_link(amq_filter *f, uint64_t at, uint64_t capacity, uint64_t bits, uint32_t k)
{
	uint8_t *d = f->payload + at;
	memset(d, 0, LINE);
	amq_store64le(d + LINK_CAPACITY, capacity);
	amq_store64le(d + LINK_BITS, bits);
	amq_store32le(d + LINK_HASHES, k);
}

amq_status amq_scalable_create(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
			       uint64_t seed, const amq_allocator *a, amq_error *err)
{
	if (expansion < 1 || expansion > AMQ_SCALABLE_MAX_EXPANSION)
		return amq_fail(err, AMQ_INVALID_ARGUMENT,
				"use an expansion from 1 to 32 (default 2)",
				"expansion must be between 1 and %d, got %u",
				AMQ_SCALABLE_MAX_EXPANSION, expansion);
	uint64_t bits;
	uint32_t k, zero;
	uint64_t cells;
	amq_status st = scalable_size(capacity, fpr, &zero, &cells, err);
	if (st == AMQ_OK)
		st = size_link(capacity, fpr, 0, &bits, &k, err);
	if (st == AMQ_OK)
		st = amq_filter_allocate(f, AMQ_KIND_BLOOM, AMQ_LAYOUT_SCALABLE, 0, seed, cells, a,
					 err);
	if (st != AMQ_OK)
		return st;
	store_double(f->payload + CHAIN_FPR, fpr);
	amq_store64le(f->payload + CHAIN_CAPACITY, capacity);
	amq_store32le(f->payload + CHAIN_EXPANSION, expansion);
	amq_store32le(f->payload + CHAIN_LINKS, 1);
	write_link(f, LINE, capacity, bits, k); /* the first descriptor */
	amq_filter_seal(f);
	return AMQ_OK;
}

/* The row's create: expansion 0 is the default one. */
static amq_status scalable_create(amq_filter *f, uint64_t capacity, double fpr, uint32_t expansion,
				  uint64_t seed, const amq_allocator *a, amq_error *err)
{
	return amq_scalable_create(
	    f, capacity, fpr, expansion ? expansion : AMQ_SCALABLE_DEFAULT_EXPANSION, seed, a, err);
}

/* The newest link. */
static link last_link(const amq_filter *f)
{
	uint32_t links = link_count(f);
	uint64_t at = first_bits(links);
	for (uint32_t i = 0; i + 1 < links; i++) {
		link l = link_at(f, i, at);
		at = next_link(&l, at);
	}
	return link_at(f, links - 1, at);
}

/* Whether any link holds hash, each tested by the blocked probe given: the
 * descriptors are read from the table, one line of bits per link. */
static inline bool chain_contains(const amq_filter *f, uint64_t hash, amq_probe probe)
{
	const uint8_t *p = f->payload;
	uint32_t links = amq_load32le(p + CHAIN_LINKS);
	amq_filter view = {.kind = AMQ_KIND_BLOOM, .layout = AMQ_LAYOUT_BLOCKED};
	uint64_t at = first_bits(links);
	for (uint32_t i = 0; i < links; i++) {
		const uint8_t *d = p + LINE * (1 + (uint64_t)i);
		view.cells = amq_load64le(d + LINK_BITS);
		view.hashes = amq_load32le(d + LINK_HASHES);
		view.payload = (uint8_t *)p + at;
		if (probe(&view, hash))
			return true;
		at += view.cells / 8;
	}
	return false;
}

/* chain_contains with the portable blocked probe. */
static bool scalable_contains_portable(const amq_filter *f, uint64_t hash)
{
	return chain_contains(f, hash, amq_blocked_contains_portable);
}

#ifdef AMQ_HAVE_AVX2_PROBE
/* chain_contains with the AVX2 blocked probe. */
static bool scalable_contains_avx2(const amq_filter *f, uint64_t hash)
{
	return chain_contains(f, hash, amq_blocked_contains_avx2);
}
#endif

/* The fastest chain probe this CPU runs, chosen once per filter. */
static amq_probe scalable_probe_for(const amq_filter *f)
{
	(void)f;
#ifdef AMQ_HAVE_AVX2_PROBE
	if (amq_cpu_has_avx2())
		return scalable_contains_avx2;
#endif
	return scalable_contains_portable;
}

/* Whether any link may hold hash. */
static bool scalable_contains(const amq_filter *f, uint64_t hash)
{
	return scalable_probe_for(f)(f, hash);
}

/* Appends link i = links with `expansion` times the newest one's capacity,
 * in a new buffer from a (f's old one is freed with a). */
static amq_status append_link(amq_filter *f, const amq_allocator *a, amq_error *err)
{
	uint32_t links = link_count(f);
	if (links == AMQ_SCALABLE_MAX_LINKS)
		return amq_fail(err, AMQ_TOO_LARGE, "build a filter with a larger capacity",
				"scalable bloom filter already has %d links",
				AMQ_SCALABLE_MAX_LINKS);
	link newest = last_link(f);
	uint32_t expansion = amq_load32le(f->payload + CHAIN_EXPANSION);
	if (newest.capacity > UINT64_MAX / expansion)
		return amq_fail(err, AMQ_TOO_LARGE, "build a filter with a larger capacity",
				"scalable bloom filter cannot grow past %llu values per link",
				(unsigned long long)newest.capacity);
	uint64_t capacity = newest.capacity * expansion, bits;
	uint32_t k;
	amq_status st =
	    size_link(capacity, load_double(f->payload + CHAIN_FPR), links, &bits, &k, err);
	if (st != AMQ_OK)
		return st;
	uint64_t cells = f->cells + 1 + bits / AMQ_BLOCK_BITS;
	if (cells > (AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES) / LINE)
		return amq_fail(err, AMQ_TOO_LARGE, "lower the capacity or raise the fpr",
				"scalable bloom filter would need %.0f bytes, more than the 1 GiB "
				"limit",
				(double)cells * LINE + AMQ_HEADER_BYTES);
	amq_filter grown;
	st = amq_filter_allocate(&grown, AMQ_KIND_BLOOM, AMQ_LAYOUT_SCALABLE, 0, f->seed, cells, a,
				 err);
	if (st != AMQ_OK)
		return st;
	/* The table gains a descriptor: the old links' bits move one line on,
	 * and the new link's bits (zero) come last. */
	uint64_t table = first_bits(links);
	memcpy(grown.payload, f->payload, table);
	memcpy(grown.payload + table + LINE, f->payload + table, f->payload_size - table);
	amq_store32le(grown.payload + CHAIN_LINKS, links + 1);
	write_link(&grown, table, capacity, bits, k);
	grown.items = f->items;
	grown.families = f->families;
	amq_filter_free(f, a);
	*f = grown;
	return AMQ_OK;
}

/* Sets hash's bits in the newest link l and counts it there and in f. */
static void add_to_link(amq_filter *f, link *l, uint64_t hash)
{
	amq_blocked_add(&l->bits, hash);
	amq_store64le(l->descriptor + LINK_ITEMS, l->bits.items + 1);
	f->items++;
}

/* Adds hash to the newest link, appending a link first (in a new buffer
 * from a) when it is full; a value the chain may hold already adds nothing. */
static amq_status scalable_add_grow(amq_filter *f, uint64_t hash, const amq_allocator *a,
				    amq_error *err)
{
	if (scalable_contains(f, hash))
		return AMQ_OK;
	link newest = last_link(f);
	if (newest.bits.items >= newest.capacity) {
		if (a == NULL)
			return amq_fail(
			    err, AMQ_FILTER_FULL, "",
			    "a full scalable link grows only through amq_filter_add_to");
		amq_status st = append_link(f, a, err);
		if (st != AMQ_OK)
			return st;
		newest = last_link(f);
	}
	add_to_link(f, &newest, hash);
	return AMQ_OK;
}

/* Adds hash to the newest link without growing the chain, past its capacity
 * when it is full (a higher rate there, never a false negative): the row's
 * add, for amq_bloom_add, which has no allocator and no status. */
static amq_status scalable_add_in_place(amq_filter *f, uint64_t hash, amq_error *err)
{
	(void)err;
	if (scalable_contains(f, hash))
		return AMQ_OK;
	link newest = last_link(f);
	add_to_link(f, &newest, hash);
	return AMQ_OK;
}

/* The order an aggregate adds a hash in (the row's collect_key): a
 * bijection of it unrelated to both the block (the hash's high bits) and the
 * bits in the block (mix64 of it); in sorted order link 0 would get only the
 * smallest hashes, all in its first blocks. */
static uint64_t insertion_key(uint64_t hash)
{
	return amq_mix64(hash ^ INSERTION_SALT);
}

/* The hash whose insertion_key is key: amq_mix64 undone step by step (each
 * x ^= x >> 33 is its own inverse, each multiplier has an inverse mod 2^64). */
static uint64_t hash_of_key(uint64_t key)
{
	key ^= key >> 33;
	key *= 0x9cb4b2f8129337dbULL; /* 0xc4ceb9fe1a85ec53^-1 */
	key ^= key >> 33;
	key *= 0x4f74430c22a54005ULL; /* 0xff51afd7ed558ccd^-1 */
	key ^= key >> 33;
	return key ^ INSERTION_SALT;
}

/* An aggregate's distinct hashes, as sorted insertion keys: each added in
 * that order (the chain is then a function of the set alone). */
static amq_status scalable_add_collected(amq_filter *f, const uint64_t *keys, size_t n,
					 const amq_allocator *a, amq_error *err)
{
	amq_status st = AMQ_OK;
	for (size_t i = 0; i < n && st == AMQ_OK; i++) {
		st = scalable_add_grow(f, hash_of_key(keys[i]), a, err);
		if (st == AMQ_OK && (i + 1) % AMQ_INTERRUPT_EVERY == 0)
			st = amq_poll(a, err);
	}
	return st;
}

/* AMQ_INCOMPATIBLE unless a and b have the same shape: p, first capacity,
 * expansion, seed, and every link's capacity, bits and hashes. */
static amq_status check_same_shape(const amq_filter *a, const amq_filter *b, amq_error *err)
{
	if (a->kind != b->kind || a->layout != b->layout)
		return amq_bloom_check_compatible(a, b, err);
	if (a->seed != b->seed || a->payload_size != b->payload_size ||
	    memcmp(a->payload, b->payload, CHAIN_LINKS + 4) != 0)
		return amq_fail(
		    err, AMQ_INCOMPATIBLE,
		    "build both with the same capacity, fpr and expansion, and let them grow to "
		    "the same number of links",
		    "cannot combine scalable bloom filters of different shapes (%u links of "
		    "%llu bytes, first capacity %llu vs %u links of %llu bytes, first capacity "
		    "%llu)",
		    link_count(a), (unsigned long long)a->payload_size,
		    (unsigned long long)amq_load64le(a->payload + CHAIN_CAPACITY), link_count(b),
		    (unsigned long long)b->payload_size,
		    (unsigned long long)amq_load64le(b->payload + CHAIN_CAPACITY));
	/* Open checks each link on its own, so two chains with the same header
	 * may still place bits apart: every link must match too. */
	for (uint32_t i = 0; i < link_count(a); i++) {
		const uint8_t *da = a->payload + LINE * (1 + (uint64_t)i);
		const uint8_t *db = b->payload + LINE * (1 + (uint64_t)i);
		if (memcmp(da, db, LINK_HASHES + 4) != 0)
			return amq_fail(
			    err, AMQ_INCOMPATIBLE,
			    "build both with the same capacity, fpr and expansion in one amq",
			    "cannot combine scalable bloom filters whose link %u differs (%llu "
			    "bits, %u hashes, capacity %llu vs %llu bits, %u hashes, capacity "
			    "%llu)",
			    i, (unsigned long long)amq_load64le(da + LINK_BITS),
			    amq_load32le(da + LINK_HASHES),
			    (unsigned long long)amq_load64le(da + LINK_CAPACITY),
			    (unsigned long long)amq_load64le(db + LINK_BITS),
			    amq_load32le(db + LINK_HASHES),
			    (unsigned long long)amq_load64le(db + LINK_CAPACITY));
	}
	return AMQ_OK;
}

/* Link by link: bits combined by `intersect` (AND) or not (OR), items summed
 * or the smaller kept. */
static amq_status combine(amq_filter *dst, const amq_filter *src, bool intersect, amq_error *err)
{
	amq_status st = check_same_shape(dst, src, err);
	if (st != AMQ_OK)
		return st;
	uint32_t links = link_count(dst);
	uint64_t at = first_bits(links), items = 0;
	for (uint32_t i = 0; i < links; i++) {
		link d = link_at(dst, i, at), s = link_at(src, i, at);
		for (uint64_t b = 0; b < d.bits.payload_size; b++)
			d.bits.payload[b] = intersect ? d.bits.payload[b] & s.bits.payload[b]
						      : d.bits.payload[b] | s.bits.payload[b];
		uint64_t n = amq_bloom_merged_items(d.bits.items, s.bits.items, intersect);
		amq_store64le(d.descriptor + LINK_ITEMS, n);
		items = amq_bloom_merged_items(items, n, false);
		at = next_link(&d, at);
	}
	dst->items = items;
	return AMQ_OK;
}

/* Link by link OR; the chains must have the same shape. */
static amq_status scalable_union(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return combine(dst, src, false, err);
}

/* Link by link AND; the chains must have the same shape. */
static amq_status scalable_intersect(amq_filter *dst, const amq_filter *src, amq_error *err)
{
	return combine(dst, src, true, err);
}

/* Over the chain's links: 1 - prod(1 - fpr_i) of their current rates
 * (rates), or the sum of their estimates. */
static double over_links(const amq_filter *f, bool rates)
{
	double acc = rates ? 1.0 : 0.0;
	uint32_t links = link_count(f);
	uint64_t at = first_bits(links);
	for (uint32_t i = 0; i < links; i++) {
		link l = link_at(f, i, at);
		if (rates)
			acc *= 1.0 - amq_blocked_expected_fpr(&l.bits);
		else
			acc += amq_bits_estimate_items(&l.bits);
		at = next_link(&l, at);
	}
	return rates ? 1.0 - acc : acc;
}

static double scalable_expected_fpr(const amq_filter *f)
{
	return over_links(f, true);
}

static double scalable_estimate_items(const amq_filter *f)
{
	return over_links(f, false);
}

/* Appends to out[*n..cap) as snprintf does, tracking the length needed. */
static void append(char *out, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *out, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(*n < cap ? out + *n : NULL, *n < cap ? cap - *n : 0, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n += (size_t)w;
}

/* The JSON of bloom_info: the chain's parameters, then each link. */
static int scalable_info(const amq_filter *f, char *out, size_t cap)
{
	size_t n = 0;
	double p = load_double(f->payload + CHAIN_FPR);
	append(out, cap, &n,
	       "{\"kind\":\"bloom\",\"layout\":\"scalable\",\"fpr\":%.6g,\"capacity\":%llu,"
	       "\"expansion\":%u,\"items\":%llu,\"bytes\":%zu,\"estimated_items\":%.0f,"
	       "\"expected_fpr\":%.6g,\"links\":[",
	       p, (unsigned long long)amq_load64le(f->payload + CHAIN_CAPACITY),
	       amq_load32le(f->payload + CHAIN_EXPANSION), (unsigned long long)f->items, f->size,
	       scalable_estimate_items(f), scalable_expected_fpr(f));
	uint64_t at = first_bits(link_count(f));
	for (uint32_t i = 0; i < link_count(f); i++) {
		link l = link_at(f, i, at);
		append(out, cap, &n,
		       "%s{\"capacity\":%llu,\"bits\":%llu,\"hashes\":%u,\"items\":%llu,"
		       "\"error\":%.6g,\"expected_fpr\":%.6g}",
		       i ? "," : "", (unsigned long long)l.capacity,
		       (unsigned long long)l.bits.cells, l.bits.hashes,
		       (unsigned long long)l.bits.items, link_rate(p, i),
		       amq_blocked_expected_fpr(&l.bits));
		at = next_link(&l, at);
	}
	append(out, cap, &n, "],\"seed\":%llu,\"format_version\":%u}", (unsigned long long)f->seed,
	       amq_filter_format_version(f));
	return (int)n;
}

AMQ_VARIANT_ROW(amq_variant_bloom_scalable) = AMQ_BLOOM_ROW(
    AMQ_LAYOUT_SCALABLE, "scalable", .format_version = 2, .cell_name = "lines", .order_free = false,
    .shape = &first_link_shape, .cell_bits = line_bits, .payload_size = scalable_payload_size,
    .check_header = scalable_check_header, .check_payload = scalable_check_payload,
    .size = scalable_size, .create = scalable_create, .collect_key = insertion_key,
    .add_collected = scalable_add_collected, .add = scalable_add_in_place,
    .add_grow = scalable_add_grow, .contains = scalable_contains, .probe_for = scalable_probe_for,
    .union_into = scalable_union, .intersect_into = scalable_intersect,
    .expected_fpr = scalable_expected_fpr, .estimate_items = scalable_estimate_items,
    .info = scalable_info);
