/*
 * format.c - the portable serialized form of docs/FORMAT.md: a 64-byte
 * little-endian header followed by the payload. Opening checks every header
 * field against the buffer length before anything reads the payload, so any
 * byte sequence is either a valid filter or an error that names the fault.
 */
#include "format/variant.h"

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
	OFF_FAMILIES = 44, /* format version 4 on; reserved (zero) before */
	OFF_RESERVED = 45,
	OFF_CHECKSUM = 56
};

/* Bloom bits or cuckoo buckets above this cannot fit in 1 GiB. */
#define MAX_CELLS ((uint64_t)1 << 36)

/* Every message of a filter that does not open starts with this, unless the
 * caller names the function and argument (amq_filter_read). */
static const char *const DEFAULT_PREFIX = "invalid amq filter: ";

uint64_t amq_payload_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells)
{
	const amq_variant *v = amq_variant_find(kind, layout);
	if (v == NULL || cells == 0 || cells > MAX_CELLS)
		return 0;
	return v->payload_size(hashes, cells);
}

/* True when kind is one this build knows: some row of the registry has it. */
static bool known_kind(amq_kind kind)
{
	return amq_variant_first_of(kind) != NULL;
}

/* The variant a header names, or the error that says why there is none. */
static amq_status header_variant(const uint8_t *b, const char *prefix, const amq_variant **out,
				 amq_error *err)
{
	uint8_t version = b[OFF_VERSION], kind = b[OFF_KIND], layout = b[OFF_LAYOUT];
	/* Every version ever written stays readable; one from the future is
	 * named as such, so the fix (a newer amq) is plain. */
	if (version > amq_format_version())
		return amq_fail(
		    err, AMQ_INVALID_FILTER,
		    "upgrade amq here to read it, or rebuild the filter with this version",
		    "%samq filter format version %u was written by a newer amq (this build "
		    "reads versions 1 to %u)",
		    prefix == DEFAULT_PREFIX ? "" : prefix, version, amq_format_version());
	if (version < 1)
		return amq_not_a_filter(err, "%sformat version 0 does not exist", prefix);
	if (!known_kind((amq_kind)kind))
		return amq_not_a_filter(err, "%sunknown kind %u", prefix, kind);
	const amq_variant *v = amq_variant_find((amq_kind)kind, (amq_layout)layout);
	if (v == NULL)
		return amq_not_a_filter(err, "%sunknown %s layout %u", prefix,
					amq_kind_name((amq_kind)kind), layout);
	/* A layout is written with the first format version that has it, so
	 * an older version naming it was not written by amq. */
	if (version < v->format_version)
		return amq_not_a_filter(err, "%sformat version %u has no %s %s layout", prefix,
					version, v->layout_name, v->kind_name);
	*out = v;
	return AMQ_OK;
}

/* amq_filter_open with every message starting with prefix. */
static amq_status open_filter(amq_filter *f, const void *buf, size_t size, const char *prefix,
			      amq_error *err)
{
	const uint8_t *b = buf;
	if (b == NULL || size < AMQ_HEADER_BYTES)
		return amq_not_a_filter(err,
					"%sa %zu-byte value is shorter than the %d-byte header",
					prefix, b == NULL ? (size_t)0 : size, AMQ_HEADER_BYTES);
	if (memcmp(b + OFF_MAGIC, MAGIC, sizeof(MAGIC)) != 0)
		return amq_not_a_filter(err, "%sbad magic bytes", prefix);
	const amq_variant *v = NULL;
	amq_status st = header_variant(b, prefix, &v, err);
	if (st != AMQ_OK)
		return st;

	amq_filter h = {
	    .bytes = (uint8_t *)b,
	    .size = size,
	    .kind = v->kind,
	    .layout = v->layout,
	    .hashes = b[OFF_HASHES],
	    .seed = amq_load64le(b + OFF_SEED),
	    .cells = amq_load64le(b + OFF_CELLS),
	    .items = amq_load64le(b + OFF_ITEMS),
	    .payload = (uint8_t *)b + AMQ_HEADER_BYTES,
	    .payload_size = amq_load64le(b + OFF_PAYLOAD_SIZE),
	    .families = AMQ_FAMILIES_UNKNOWN,
	};
	st = v->check_header(&h, prefix, err);
	if (st != AMQ_OK)
		return st;
	uint32_t slots = amq_load32le(b + OFF_SLOTS);
	if (slots != v->slots)
		return amq_not_a_filter(err, "%s%u slots per bucket where a %s %s filter has %u",
					prefix, slots, v->layout_name, v->kind_name, v->slots);
	if (b[OFF_VERSION] >= AMQ_FAMILIES_FORMAT_VERSION) {
		h.families = b[OFF_FAMILIES];
		if (h.families > AMQ_FAMILIES_ALL)
			return amq_not_a_filter(err, "%sunknown value families 0x%02x", prefix,
						h.families);
	} else if (b[OFF_FAMILIES] != 0) {
		return amq_not_a_filter(err, "%sreserved header bytes are not zero", prefix);
	}
	for (int i = OFF_RESERVED; i < OFF_CHECKSUM; i++)
		if (b[i] != 0)
			return amq_not_a_filter(err, "%sreserved header bytes are not zero",
						prefix);

	uint64_t expected = amq_payload_size(h.kind, h.layout, h.hashes, h.cells);
	if (expected == 0)
		return amq_not_a_filter(err, "%simpossible size of %llu %s", prefix,
					(unsigned long long)h.cells, v->cell_name);
	if (h.payload_size != expected)
		return amq_not_a_filter(
		    err, "%sheader gives %llu payload bytes where its parameters need %llu", prefix,
		    (unsigned long long)h.payload_size, (unsigned long long)expected);
	if (size - AMQ_HEADER_BYTES != h.payload_size)
		return amq_fail(err, AMQ_INVALID_FILTER,
				"the value was truncated or padded; rebuild it",
				"%s%zu bytes where the header needs %llu", prefix, size,
				(unsigned long long)(h.payload_size + AMQ_HEADER_BYTES));
	if (v->check_payload != NULL) {
		st = v->check_payload(&h, prefix, err);
		if (st != AMQ_OK)
			return st;
	}
	*f = h;
	return AMQ_OK;
}

amq_status amq_filter_open(amq_filter *f, const void *buf, size_t size, amq_error *err)
{
	return open_filter(f, buf, size, DEFAULT_PREFIX, err);
}

bool amq_tail_is_zero(const amq_filter *f, uint64_t from)
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

/* amq_filter_verify with every message starting with prefix. */
static amq_status verify_filter(const amq_filter *f, const char *prefix, amq_error *err)
{
	if (amq_checksum(f->bytes, f->payload_size) != amq_load64le(f->bytes + OFF_CHECKSUM))
		return amq_fail(err, AMQ_INVALID_FILTER,
				"the stored bytes were damaged or edited; rebuild the filter",
				"%schecksum mismatch", prefix);
	const amq_variant *v = amq_variant_of(f);
	return v->verify != NULL ? v->verify(f, prefix, err) : AMQ_OK;
}

amq_status amq_filter_verify(const amq_filter *f, amq_error *err)
{
	return verify_filter(f, DEFAULT_PREFIX, err);
}

amq_status amq_filter_check(amq_filter *f, const void *buf, size_t size, amq_error *err)
{
	amq_status st = open_filter(f, buf, size, "", err);
	return st != AMQ_OK ? st : verify_filter(f, "", err);
}

amq_status amq_filter_read(amq_filter *f, const void *buf, size_t size, amq_kind kind, bool trusted,
			   const char *function, const char *argument, amq_error *err)
{
	char prefix[96];
	snprintf(prefix, sizeof(prefix), "%s: %s: ", function, argument);
	amq_status st = open_filter(f, buf, size, prefix, err);
	if (st == AMQ_OK && f->kind != kind) {
		amq_error detail;
		amq_filter_expect(f, kind, &detail);
		st = amq_fail(err, detail.status, detail.hint, "%s%s", prefix, detail.message);
	}
	if (st == AMQ_OK && !trusted)
		st = verify_filter(f, prefix, err);
	return st;
}

void amq_filter_seal(amq_filter *f)
{
	/* Tests seal made-up kinds and layouts too, to see them refused: with
	 * no row, no slots, and the version of their families. */
	const amq_variant *v = amq_variant_of(f);
	uint8_t *b = f->bytes;
	memcpy(b + OFF_MAGIC, MAGIC, sizeof(MAGIC));
	b[OFF_VERSION] = (uint8_t)amq_filter_format_version(f);
	b[OFF_KIND] = (uint8_t)f->kind;
	b[OFF_LAYOUT] = (uint8_t)f->layout;
	b[OFF_HASHES] = (uint8_t)f->hashes;
	amq_store64le(b + OFF_SEED, f->seed);
	amq_store64le(b + OFF_CELLS, f->cells);
	amq_store64le(b + OFF_ITEMS, f->items);
	amq_store64le(b + OFF_PAYLOAD_SIZE, f->payload_size);
	amq_store32le(b + OFF_SLOTS, v ? v->slots : 0);
	b[OFF_FAMILIES] = f->families == AMQ_FAMILIES_UNKNOWN ? 0 : f->families;
	memset(b + OFF_RESERVED, 0, OFF_CHECKSUM - OFF_RESERVED);
	amq_store64le(b + OFF_CHECKSUM, amq_checksum(b, f->payload_size));
}

amq_status amq_filter_expect(const amq_filter *f, amq_kind kind, amq_error *err)
{
	if (f->kind == kind)
		return AMQ_OK;
	const char *want = amq_kind_name(kind), *got = amq_kind_name(f->kind);
	char hint[96];
	snprintf(hint, sizeof(hint), "use the %s_* functions for %s filters", got, got);
	return amq_fail(err, AMQ_WRONG_KIND, hint, "expected a %s filter, got a %s filter", want,
			got);
}

amq_status amq_check_size(amq_kind kind, amq_layout layout, uint32_t hashes, uint64_t cells,
			  uint64_t *payload_size, amq_error *err)
{
	*payload_size = amq_payload_size(kind, layout, hashes, cells);
	if (*payload_size != 0 && *payload_size <= AMQ_MAX_FILTER_BYTES - AMQ_HEADER_BYTES)
		return AMQ_OK;
	/* The payload size is 0 when the cell count alone is past any limit. */
	const amq_variant *v = amq_variant_find(kind, layout);
	double bits = (double)cells * v->cell_bits(hashes);
	return amq_fail(err, AMQ_TOO_LARGE, "lower the capacity or raise the fpr",
			"%s filter would need %.0f bytes, more than the 1 GiB limit", v->kind_name,
			bits / 8.0 + AMQ_HEADER_BYTES);
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
	/* A filter near 1 GiB takes a second to clear: in pieces, polling the
	 * caller's interrupt check between them. */
	const size_t piece = AMQ_INTERRUPT_EVERY * 64;
	for (size_t at = 0; at < size; at += piece) {
		memset(bytes + at, 0, size - at < piece ? size - at : piece);
		st = amq_poll(a, err);
		if (st != AMQ_OK) {
			a->free(a->ctx, bytes);
			return st;
		}
	}
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
	f->families = 0;
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
