/*
 * fuzz_reader.c - libFuzzer target for everything that reads untrusted bytes:
 * the filter reader (open, verify, every read-only operation, and the
 * mutating ones on a private copy, bulk adds and deletes and add-if-absent)
 * and the aggregate-state reader. Any crash,
 * out-of-bounds access or undefined behaviour is a bug.
 */
#include "amq.h"

#include <string.h>

static const amq_allocator *A = &amq_malloc_allocator;

/* A bulk aggregate's pass over f: two values, and the input bytes checked as
 * a later row's filter (the same bytes, then a shorter prefix). */
static void bulk(const amq_filter *f, const uint8_t *data, size_t size, uint64_t h, amq_bulk_op op)
{
	amq_bulk b;
	amq_filter out;
	amq_error err;
	if (amq_bulk_start(&b, op, "fuzz_agg", f, A, &err) == AMQ_OK) {
		amq_bulk_apply(&b, h, &err);
		amq_bulk_check_same(&b, data, size, size, &err);
		amq_bulk_check_same(&b, data, size / 2, size, &err);
		amq_bulk_apply(&b, h ^ 4, &err);
		amq_bulk_finish(&b, &out);
		amq_filter_free(&out, A);
	}
	amq_bulk_free(&b);
}

static void read_filter(const uint8_t *data, size_t size)
{
	amq_filter f, copy;
	amq_error err;
	if (amq_filter_open(&f, data, size, &err) != AMQ_OK)
		return;
	char json[512];
	amq_filter_info_json(&f, json, sizeof(json));
	bool verified = amq_filter_verify(&f, &err) == AMQ_OK;
	uint64_t h = size >= 8 ? (uint64_t)data[size - 1] * 0x9E3779B97F4A7C15ULL : 1;
	/* Every operation through the variant table, whatever the kind. */
	uint64_t count;
	bool removed;
	(void)amq_filter_contains(&f, h);
	(void)amq_filter_probe_for (&f)(&f, h);
	(void)amq_filter_estimate_items(&f);
	(void)amq_filter_expected_fpr(&f);
	(void)amq_filter_frequency(&f, h, &count, &err);
	if (amq_filter_clone(&copy, &f, A, &err) == AMQ_OK) {
		amq_filter_add(&copy, h, &err);
		/* A scalable chain may grow here: a new, larger buffer. */
		amq_filter_add_to(&copy, h ^ 2, A, &err);
		amq_filter_union_into(&copy, &f, &err);
		amq_filter_intersect_into(&copy, &f, &err);
		/* Deletes keep the item count in step with the payload, so they
		 * are only meaningful (and only promised safe) once verified. */
		if (verified) {
			amq_filter_remove(&copy, h, &removed, &err);
			amq_filter_remove(&copy, h ^ 1, &removed, &err);
		}
		amq_filter_seal(&copy);
		amq_filter_free(&copy, A);
	}
	bulk(&f, data, size, h, AMQ_BULK_ADD);
	if (verified) {
		bulk(&f, data, size, h, AMQ_BULK_DELETE);
		amq_filter out;
		bool added;
		if (amq_filter_add_unique(&f, h, AMQ_FAMILY_NUMBER, &out, &added, A, &err) ==
			AMQ_OK &&
		    added)
			amq_filter_free(&out, A);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_filter(data, size);
	amq_builder b;
	amq_error err;
	if (amq_builder_deserialize(&b, data, size, A, &err) == AMQ_OK) {
		amq_filter f;
		/* A state's capacity legitimately sizes the finished filter (up to
		 * 1 GiB); keep the fuzzer's allocations small. */
		if (b.capacity <= 100000 && amq_builder_finish(&b, &f, &err) == AMQ_OK)
			amq_filter_free(&f, A);
		amq_builder_free(&b);
	}
	return 0;
}
