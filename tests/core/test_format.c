/*
 * test_format.c - the serialized form: byte-identical round trips, exact
 * messages for each fault, every truncation rejected, and 10,000 random
 * corruptions of valid buffers rejected or read safely (the ASan build makes
 * "safely" mean something).
 */
#include "amq.h"
#include "cuckoo/cuckoo_table.h"
#include "check.h"
#include "helpers.h"
#include "base/internal.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* Three small valid filters, one of each layout, with some items. */
static void make_filters(amq_filter out[3])
{
	amq_error err;
	amq_bloom_create(&out[0], 300, 0.01, AMQ_LAYOUT_CLASSIC, 0, A, &err);
	amq_bloom_create(&out[1], 300, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err);
	amq_cuckoo_create(&out[2], AMQ_LAYOUT_CLASSIC, 300, 0.01, 0, A, &err);
	for (int64_t i = 0; i < 200; i++) {
		amq_bloom_add(&out[0], amq_hash_int(i, 0));
		amq_bloom_add(&out[1], amq_hash_int(i, 0));
		amq_cuckoo_add(&out[2], amq_hash_int(i, 0), &err);
	}
	for (int i = 0; i < 3; i++)
		amq_filter_seal(&out[i]);
}

/* Every read-only operation, on a filter that opened (verified or not). */
static void exercise(const amq_filter *f)
{
	char json[512];
	amq_filter_info_json(f, json, sizeof(json));
	for (int64_t i = 0; i < 50; i++) {
		uint64_t h = amq_hash_int(i, f->seed);
		if (f->kind == AMQ_KIND_BLOOM) {
			(void)amq_filter_contains(f, h);
		} else {
			(void)amq_filter_contains(f, h);
			(void)amq_cuckoo_count(f, h);
		}
	}
	if (f->kind == AMQ_KIND_BLOOM) {
		(void)amq_filter_estimate_items(f);
		(void)amq_filter_expected_fpr(f);
	} else {
		(void)amq_cuckoo_load(f);
	}
}

static void round_trip(const amq_filter *src)
{
	uint8_t *copy = malloc(src->size);
	memcpy(copy, src->bytes, src->size);
	amq_filter f;
	amq_error err;
	CHECK(amq_filter_open(&f, copy, src->size, &err) == AMQ_OK, "open: %s", err.message);
	CHECK(amq_filter_verify(&f, &err) == AMQ_OK, "verify: %s", err.message);
	CHECK(f.kind == src->kind && f.layout == src->layout && f.hashes == src->hashes &&
		  f.cells == src->cells && f.items == src->items && f.seed == src->seed,
	      "header fields survive");
	amq_filter_seal(&f);
	CHECK(memcmp(copy, src->bytes, src->size) == 0, "re-sealing changes no byte");
	int missing = 0;
	for (int64_t i = 0; i < 200; i++)
		missing += f.kind == AMQ_KIND_BLOOM ? !amq_filter_contains(&f, amq_hash_int(i, 0))
						    : !amq_filter_contains(&f, amq_hash_int(i, 0));
	CHECK(missing == 0, "reopened filter lost %d items", missing);
	free(copy);
}

/* Opens buf; on success verifies and exercises it. Returns 1 if rejected. */
static int try_read(const uint8_t *buf, size_t size)
{
	amq_filter f;
	amq_error err;
	if (amq_filter_open(&f, buf, size, &err) != AMQ_OK)
		return 1;
	exercise(&f); /* unverified views must be safe too */
	return amq_filter_verify(&f, &err) != AMQ_OK;
}

static void truncations(const amq_filter *src)
{
	int accepted = 0;
	for (size_t n = 0; n < src->size; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, src->bytes, n);
		accepted += !try_read(cut, n);
		free(cut);
	}
	CHECK(accepted == 0, "%d truncations accepted", accepted);
	uint8_t *longer = calloc(1, src->size + 1);
	memcpy(longer, src->bytes, src->size);
	CHECK(try_read(longer, src->size + 1), "a trailing byte is rejected");
	free(longer);
}

static void corruptions(const amq_filter *src, unsigned seed)
{
	srand(seed);
	int accepted = 0;
	uint8_t *buf = malloc(src->size);
	for (int trial = 0; trial < 3400; trial++) {
		memcpy(buf, src->bytes, src->size);
		int flips = 1 + rand() % 4;
		for (int j = 0; j < flips; j++) {
			size_t at = (size_t)rand() % src->size;
			if (trial % 2)
				buf[at] ^= (uint8_t)(1u << (rand() % 8));
			else
				buf[at] = (uint8_t)rand();
		}
		if (memcmp(buf, src->bytes, src->size) == 0)
			continue;
		accepted += !try_read(buf, src->size);
	}
	CHECK(accepted == 0, "%d corruptions accepted", accepted);
	free(buf);
}

/* Headers with a valid checksum but impossible fields must still be refused. */
static void resealed_headers(const amq_filter *src)
{
	srand(7);
	uint8_t *buf = malloc(src->size);
	int inconsistent = 0;
	for (int trial = 0; trial < 3000; trial++) {
		memcpy(buf, src->bytes, src->size);
		buf[4 + rand() % 52] = (uint8_t)rand();
		amq_filter f;
		if (amq_filter_open(&f, buf, src->size, NULL) != AMQ_OK)
			continue;
		amq_filter_seal(&f);
		try_read(buf, src->size);
		/* Whatever open accepts must describe exactly this buffer. */
		inconsistent += f.payload_size + AMQ_HEADER_BYTES != src->size ||
				f.hashes > AMQ_CUCKOO_MAX_FINGERPRINT || f.hashes == 0 ||
				(f.kind == AMQ_KIND_BLOOM && f.hashes > f.cells);
	}
	CHECK(inconsistent == 0, "%d accepted headers disagree with their buffer", inconsistent);
	free(buf);
}

static void expect_message(const uint8_t *buf, size_t size, amq_status status, const char *msg)
{
	amq_filter f;
	amq_error err = {0};
	amq_status got = amq_filter_open(&f, buf, size, &err);
	if (got == AMQ_OK)
		got = amq_filter_verify(&f, &err);
	CHECK(got == status && strcmp(err.message, msg) == 0, "want '%s', got %d '%s'", msg, got,
	      err.message);
}

static void messages(const amq_filter *bloom)
{
	uint8_t *b = malloc(bloom->size);
	expect_message((const uint8_t *)"abc", 3, AMQ_INVALID_FILTER,
		       "invalid amq filter: a 3-byte value is shorter than the 64-byte header");
	memcpy(b, bloom->bytes, bloom->size);
	b[0] = 'X';
	expect_message(b, bloom->size, AMQ_INVALID_FILTER, "invalid amq filter: bad magic bytes");
	memcpy(b, bloom->bytes, bloom->size);
	char want[128];
	b[4] = (uint8_t)newer_version(want, sizeof(want));
	expect_message(b, bloom->size, AMQ_INVALID_FILTER, want);
	memcpy(b, bloom->bytes, bloom->size);
	b[4] = 0;
	expect_message(b, bloom->size, AMQ_INVALID_FILTER,
		       "invalid amq filter: format version 0 does not exist");
	memcpy(b, bloom->bytes, bloom->size);
	b[5] = 9;
	expect_message(b, bloom->size, AMQ_INVALID_FILTER, "invalid amq filter: unknown kind 9");
	memcpy(b, bloom->bytes, bloom->size);
	b[bloom->size - 1] ^= 1;
	expect_message(b, bloom->size, AMQ_INVALID_FILTER, "invalid amq filter: checksum mismatch");
	memcpy(b, bloom->bytes, bloom->size);
	expect_message(b, bloom->size - 8, AMQ_INVALID_FILTER,
		       "invalid amq filter: 416 bytes where the header needs 424");
	amq_filter f;
	amq_error err;
	amq_filter_open(&f, bloom->bytes, bloom->size, &err);
	CHECK(amq_filter_expect(&f, AMQ_KIND_CUCKOO, &err) == AMQ_WRONG_KIND &&
		  strcmp(err.message, "expected a cuckoo filter, got a bloom filter") == 0 &&
		  strcmp(err.hint, "use the bloom_* functions for bloom filters") == 0,
	      "wrong kind: %s / %s", err.message, err.hint);
	free(b);
}

static void info_json(const amq_filter *bloom)
{
	char json[512];
	size_t n = amq_filter_info_json(bloom, json, sizeof(json));
	CHECK(n == strlen(json) && strstr(json, "\"kind\":\"bloom\"") &&
		  strstr(json, "\"bits\":2876") && strstr(json, "\"hashes\":7") &&
		  strstr(json, "\"items\":200") && strstr(json, "\"format_version\":4") &&
		  strstr(json, "\"families\":[]}"),
	      "bloom info: %s", json);
	char tiny[8];
	n = amq_filter_info_json(bloom, tiny, sizeof(tiny));
	CHECK(n == 7 && tiny[7] == '\0', "info truncates safely");
}

/* The checksum is XXH3-64 of header bytes 0..55 and the payload, on every
 * path this CPU runs (AVX2 or not), for payloads shorter and longer than
 * XXH3's stripes and blocks and on unaligned buffers. */
static void checksum_paths_agree(void)
{
	const size_t sizes[] = {0, 8, 64, 192, 1024, 1088, 4096, 65536, 1048576 + 72};
	size_t largest = AMQ_HEADER_BYTES + sizes[sizeof(sizes) / sizeof(sizes[0]) - 1];
	uint8_t *buf = malloc(largest + 1), *flat = malloc(largest);
	for (size_t i = 0; i <= largest; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	int differ = 0;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t shift = 0; shift < 2; shift++) {
			const uint8_t *bytes = buf + shift;
			memcpy(flat, bytes, 56);
			memcpy(flat + 56, bytes + AMQ_HEADER_BYTES, sizes[s]);
			XXH64_hash_t expected = XXH3_64bits(flat, 56 + sizes[s]);
			differ += amq_checksum(bytes, sizes[s]) != expected;
			differ += amq_checksum_portable(bytes, sizes[s]) != expected;
		}
	}
	CHECK(differ == 0, "%d checksums differ from XXH3-64 of header and payload", differ);
	free(buf);
	free(flat);
}

int main(void)
{
	checksum_paths_agree();
	amq_filter filters[3];
	make_filters(filters);
	messages(&filters[0]);
	info_json(&filters[0]);
	for (int i = 0; i < 3; i++) {
		round_trip(&filters[i]);
		truncations(&filters[i]);
		corruptions(&filters[i], 100 + (unsigned)i);
		resealed_headers(&filters[i]);
	}
	for (int i = 0; i < 3; i++)
		amq_filter_free(&filters[i], A);
	return check_summary();
}
