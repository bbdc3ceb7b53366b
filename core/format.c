/*
 * format.c - the portable serialized form of docs/FORMAT.md: a 64-byte
 * little-endian header followed by the payload. Opening checks every header
 * field against the buffer length before anything reads the payload, so any
 * byte sequence is either a valid filter or an error that names the fault.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>

static const uint8_t MAGIC[4] = {'A', 'M', 'Q', 'F'};

enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_KIND = 5,
	OFF_LAYOUT = 6,
	OFF_HASHES = 7,
	OFF_SEED = 8,
	OFF_CELLS = 16,
	OFF_ITEMS = 24,
	OFF_PAYLOAD_SIZE = 32,
	OFF_SLOTS = 40,
	OFF_RESERVED = 44,
	OFF_CHECKSUM = 56
};

/* Bloom bits or cuckoo buckets above this cannot fit in 1 GiB. */
#define MAX_CELLS ((uint64_t)1 << 36)

static const char *const NOT_A_FILTER_HINT =
    "pass a value built by bloom_agg, bloom_new, cuckoo_agg or cuckoo_new";

uint64_t amq_payload_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells)
{
	if (cells == 0 || cells > MAX_CELLS)
		return 0;
	if (kind == AMQ_KIND_BLOOM && layout == AMQ_LAYOUT_CLASSIC)
		return (cells + 63) / 64 * 8;
	if (kind == AMQ_KIND_BLOOM && layout == AMQ_LAYOUT_BLOCKED)
		return cells % 512 == 0 ? cells / 8 : 0;
	if (kind == AMQ_KIND_CUCKOO && layout == AMQ_LAYOUT_CLASSIC) {
		uint64_t slot_bits = cells * AMQ_CUCKOO_SLOTS * hashes;
		/* One spare word lets every slot be read with one 64-bit load. */
		return 8 * ((slot_bits + 63) / 64 + 1);
	}
	return 0;
}

amq_status amq_filter_open(amq_filter *f, const void *buf, size_t size, amq_error *err)
{
	const uint8_t *b = buf;
	if (b == NULL || size < AMQ_HEADER_BYTES)
		return amq_fail(
		    err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
		    "invalid amq filter: a %zu-byte value is shorter than the %d-byte header",
		    b == NULL ? (size_t)0 : size, AMQ_HEADER_BYTES);
	if (memcmp(b + OFF_MAGIC, MAGIC, sizeof(MAGIC)) != 0)
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: bad magic bytes");
	/* Every version ever written stays readable; one from the future is
	 * named as such, so the fix (a newer amq) is plain. */
	if (b[OFF_VERSION] > AMQ_FORMAT_VERSION)
		return amq_fail(
		    err, AMQ_INVALID_FILTER,
		    "upgrade amq here to read it, or rebuild the filter with this version",
		    "amq filter format version %u was written by a newer amq (this build "
		    "reads versions 1 to %d)",
		    b[OFF_VERSION], AMQ_FORMAT_VERSION);
	if (b[OFF_VERSION] < 1)
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: format version 0 does not exist");

	uint8_t kind = b[OFF_KIND], layout = b[OFF_LAYOUT], hashes = b[OFF_HASHES];
	uint64_t cells = amq_load64le(b + OFF_CELLS);
	uint64_t items = amq_load64le(b + OFF_ITEMS);
	uint64_t payload_size = amq_load64le(b + OFF_PAYLOAD_SIZE);
	uint32_t slots = amq_load32le(b + OFF_SLOTS);

	if (kind == AMQ_KIND_BLOOM) {
		if (layout != AMQ_LAYOUT_CLASSIC && layout != AMQ_LAYOUT_BLOCKED)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: unknown bloom layout %u", layout);
		uint32_t max_hashes = layout == AMQ_LAYOUT_BLOCKED ? AMQ_BLOOM_BLOCKED_MAX_HASHES
								   : AMQ_BLOOM_MAX_HASHES;
		if (hashes < 1 || hashes > max_hashes || hashes > cells)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: %u hash functions for %llu bits",
					hashes, (unsigned long long)cells);
		if (slots != 0)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: bloom header has a bucket size");
	} else if (kind == AMQ_KIND_CUCKOO) {
		if (layout != AMQ_LAYOUT_CLASSIC)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: unknown cuckoo layout %u", layout);
		if (hashes < AMQ_CUCKOO_MIN_FINGERPRINT || hashes > AMQ_CUCKOO_MAX_FINGERPRINT)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: %u-bit fingerprints", hashes);
		if (slots != AMQ_CUCKOO_SLOTS)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: %u slots per bucket", slots);
		if (cells <= MAX_CELLS && items > cells * AMQ_CUCKOO_SLOTS)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: %llu items in %llu slots",
					(unsigned long long)items,
					(unsigned long long)(cells * AMQ_CUCKOO_SLOTS));
	} else {
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: unknown kind %u", kind);
	}
	for (int i = OFF_RESERVED; i < OFF_CHECKSUM; i++)
		if (b[i] != 0)
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: reserved header bytes are not zero");

	uint64_t expected = amq_payload_size(kind, layout, hashes, cells);
	if (expected == 0)
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: impossible size of %llu %s",
				(unsigned long long)cells,
				kind == AMQ_KIND_BLOOM ? "bits" : "buckets");
	if (payload_size != expected)
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: header gives %llu payload bytes where its "
				"parameters need %llu",
				(unsigned long long)payload_size, (unsigned long long)expected);
	if (size - AMQ_HEADER_BYTES != payload_size)
		return amq_fail(err, AMQ_INVALID_FILTER,
				"the value was truncated or padded; rebuild it",
				"invalid amq filter: %zu bytes where the header needs %llu", size,
				(unsigned long long)(payload_size + AMQ_HEADER_BYTES));

	f->bytes = (uint8_t *)b;
	f->size = size;
	f->kind = (amq_kind)kind;
	f->layout = (amq_layout)layout;
	f->hashes = hashes;
	f->seed = amq_load64le(b + OFF_SEED);
	f->cells = cells;
	f->items = items;
	f->payload = f->bytes + AMQ_HEADER_BYTES;
	f->payload_size = payload_size;
	return AMQ_OK;
}

/* Reads cuckoo slot number `slot` (bucket * 4 + index) of f bits. */
static uint32_t cuckoo_slot(const amq_filter *f, uint64_t slot)
{
	uint64_t bit = slot * f->hashes;
	uint64_t word = amq_load64le(f->payload + bit / 8) >> (bit % 8);
	return (uint32_t)(word & ((1ULL << f->hashes) - 1));
}

/* True when no payload bit at or past `from` is set. */
static bool tail_is_zero(const amq_filter *f, uint64_t from)
{
	uint64_t byte = from / 8;
	if (from % 8 != 0) {
		if (f->payload[byte] >> (from % 8) != 0)
			return false;
		byte++;
	}
	for (; byte < f->payload_size; byte++)
		if (f->payload[byte] != 0)
			return false;
	return true;
}

amq_status amq_filter_verify(const amq_filter *f, amq_error *err)
{
	if (amq_checksum(f->bytes, f->payload_size) != amq_load64le(f->bytes + OFF_CHECKSUM))
		return amq_fail(err, AMQ_INVALID_FILTER,
				"the stored bytes were damaged or edited; rebuild the filter",
				"invalid amq filter: checksum mismatch");
	if (f->kind == AMQ_KIND_BLOOM) {
		if (!tail_is_zero(f, f->cells))
			return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
					"invalid amq filter: bits set past the end of the filter");
		return AMQ_OK;
	}
	uint64_t slots = f->cells * AMQ_CUCKOO_SLOTS, occupied = 0;
	if (!tail_is_zero(f, slots * f->hashes))
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: bits set past the last cuckoo slot");
	for (uint64_t s = 0; s < slots; s++)
		occupied += cuckoo_slot(f, s) != 0;
	if (occupied != f->items)
		return amq_fail(err, AMQ_INVALID_FILTER, NOT_A_FILTER_HINT,
				"invalid amq filter: header counts %llu items, slots hold %llu",
				(unsigned long long)f->items, (unsigned long long)occupied);
	return AMQ_OK;
}

void amq_filter_seal(amq_filter *f)
{
	uint8_t *b = f->bytes;
	memcpy(b + OFF_MAGIC, MAGIC, sizeof(MAGIC));
	b[OFF_VERSION] = AMQ_FORMAT_VERSION;
	b[OFF_KIND] = (uint8_t)f->kind;
	b[OFF_LAYOUT] = (uint8_t)f->layout;
	b[OFF_HASHES] = (uint8_t)f->hashes;
	amq_store64le(b + OFF_SEED, f->seed);
	amq_store64le(b + OFF_CELLS, f->cells);
	amq_store64le(b + OFF_ITEMS, f->items);
	amq_store64le(b + OFF_PAYLOAD_SIZE, f->payload_size);
	amq_store32le(b + OFF_SLOTS, f->kind == AMQ_KIND_CUCKOO ? AMQ_CUCKOO_SLOTS : 0);
	memset(b + OFF_RESERVED, 0, OFF_CHECKSUM - OFF_RESERVED);
	amq_store64le(b + OFF_CHECKSUM, amq_checksum(b, f->payload_size));
}

amq_status amq_filter_expect(const amq_filter *f, amq_kind kind, amq_error *err)
{
	if (f->kind == kind)
		return AMQ_OK;
	if (kind == AMQ_KIND_BLOOM)
		return amq_fail(err, AMQ_WRONG_KIND,
				"use the cuckoo_* functions for cuckoo filters",
				"expected a bloom filter, got a cuckoo filter");
	return amq_fail(err, AMQ_WRONG_KIND, "use the bloom_* functions for bloom filters",
			"expected a cuckoo filter, got a bloom filter");
}

amq_status amq_check_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells,
			  uint64_t *payload_size, amq_error *err)
{
	*payload_size = amq_payload_size(kind, layout, hashes, cells);
	if (*payload_size != 0 && *payload_size <= AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES)
		return AMQ_OK;
	/* The payload size is 0 when the cell count alone is past any limit. */
	double bits =
	    kind == AMQ_KIND_BLOOM ? (double)cells : (double)cells * AMQ_CUCKOO_SLOTS * hashes;
	return amq_fail(err, AMQ_TOO_LARGE, "lower the capacity or raise the fpr",
			"%s filter would need %.0f bytes, more than the 1 GiB limit",
			kind == AMQ_KIND_BLOOM ? "bloom" : "cuckoo", bits / 8.0 + AMQ_HEADER_BYTES);
}

amq_status amq_filter_allocate(amq_filter *f, amq_kind kind, amq_layout layout, uint32_t hashes,
			       uint64_t seed, uint64_t cells, const amq_allocator *a,
			       amq_error *err)
{
	uint64_t payload_size;
	amq_status st = amq_check_size(kind, layout, hashes, cells, &payload_size, err);
	if (st != AMQ_OK)
		return st;
	size_t size = AMQ_HEADER_BYTES + (size_t)payload_size;
	uint8_t *bytes = a->alloc(a->ctx, size);
	if (bytes == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "",
				"out of memory allocating a %zu-byte filter", size);
	memset(bytes, 0, size);
	f->bytes = bytes;
	f->size = size;
	f->kind = kind;
	f->layout = layout;
	f->hashes = hashes;
	f->seed = seed;
	f->cells = cells;
	f->items = 0;
	f->payload = bytes + AMQ_HEADER_BYTES;
	f->payload_size = payload_size;
	amq_filter_seal(f);
	return AMQ_OK;
}

amq_status amq_filter_clone(amq_filter *dst, const amq_filter *src, const amq_allocator *a,
			    amq_error *err)
{
	uint8_t *bytes = a->alloc(a->ctx, src->size);
	if (bytes == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "", "out of memory copying a %zu-byte filter",
				src->size);
	memcpy(bytes, src->bytes, src->size);
	*dst = *src;
	dst->bytes = bytes;
	dst->payload = bytes + AMQ_HEADER_BYTES;
	return AMQ_OK;
}

void amq_filter_free(amq_filter *f, const amq_allocator *a)
{
	if (f->bytes != NULL)
		a->free(a->ctx, f->bytes);
	f->bytes = NULL;
	f->payload = NULL;
}

size_t amq_filter_info_json(const amq_filter *f, char *out, size_t cap)
{
	int n;
	if (f->kind == AMQ_KIND_BLOOM) {
		double estimate = amq_bloom_estimate_items(f);
		n = snprintf(
		    out, cap,
		    "{\"kind\":\"bloom\",\"layout\":\"%s\",\"bits\":%llu,\"hashes\":%u,"
		    "\"items\":%llu,\"bytes\":%zu,\"bits_set\":%llu,\"estimated_items\":%.0f,"
		    "\"expected_fpr\":%.6g,\"seed\":%llu,\"format_version\":%d}",
		    f->layout == AMQ_LAYOUT_BLOCKED ? "blocked" : "classic",
		    (unsigned long long)f->cells, f->hashes, (unsigned long long)f->items, f->size,
		    (unsigned long long)amq_bloom_bits_set(f), estimate, amq_bloom_expected_fpr(f),
		    (unsigned long long)f->seed, AMQ_FORMAT_VERSION);
	} else {
		n = snprintf(
		    out, cap,
		    "{\"kind\":\"cuckoo\",\"buckets\":%llu,\"slots\":%d,\"fingerprint_bits\":%u,"
		    "\"total_slots\":%llu,\"items\":%llu,\"load_factor\":%.6g,\"bytes\":%zu,"
		    "\"expected_fpr\":%.6g,\"seed\":%llu,\"format_version\":%d}",
		    (unsigned long long)f->cells, AMQ_CUCKOO_SLOTS, f->hashes,
		    (unsigned long long)(f->cells * AMQ_CUCKOO_SLOTS), (unsigned long long)f->items,
		    amq_cuckoo_load(f), f->size, amq_cuckoo_expected_fpr(f),
		    (unsigned long long)f->seed, AMQ_FORMAT_VERSION);
	}
	if (n < 0)
		n = 0;
	return cap == 0 ? (size_t)n : ((size_t)n < cap ? (size_t)n : cap - 1);
}
