/*
 * hashbag.c - the multiset of hashes a counting Bloom aggregate collects when
 * it does not know how many distinct values it will see. Unlike the hash set
 * it keeps every duplicate, since a counting filter counts each row as an add
 * (bloom_frequency must not fall below the rows of a value): 8 bytes per row.
 * Sorted at the end (the hash set's radix sort, with a scratch copy), so the
 * filter built from it depends only on the multiset, never on row order or
 * on how workers split the rows.
 */
#include "base/internal.h"

#define INITIAL_CAPACITY 1024

void amq_hashbag_init(amq_hashbag *b, const amq_allocator *a)
{
	b->hashes = NULL;
	b->count = 0;
	b->capacity = 0;
	b->alloc = *a;
}

amq_status amq_hashbag_reserve(amq_hashbag *b, size_t extra, amq_error *err)
{
	if (b->capacity - b->count >= extra)
		return AMQ_OK;
	if (extra > SIZE_MAX / sizeof(uint64_t) / 2 - b->count)
		return amq_fail(err, AMQ_NO_MEMORY, "", "too many rows to collect");
	size_t capacity = b->capacity ? b->capacity : INITIAL_CAPACITY;
	while (capacity < b->count + extra)
		capacity *= 2;
	uint64_t *grown = b->alloc.alloc(b->alloc.ctx, capacity * sizeof(uint64_t));
	if (grown == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "pass a capacity so the filter streams instead",
				"out of memory collecting %zu hashes", b->count);
	if (b->count > 0)
		memcpy(grown, b->hashes, b->count * sizeof(uint64_t));
	if (b->hashes != NULL)
		b->alloc.free(b->alloc.ctx, b->hashes);
	b->hashes = grown;
	b->capacity = capacity;
	return AMQ_OK;
}

amq_status amq_hashbag_add(amq_hashbag *b, uint64_t hash, amq_error *err)
{
	amq_status st = amq_hashbag_reserve(b, 1, err);
	if (st == AMQ_OK)
		b->hashes[b->count++] = hash;
	return st;
}

amq_status amq_hashbag_append(amq_hashbag *b, const uint64_t *hashes, size_t n, amq_error *err)
{
	amq_status st = amq_hashbag_reserve(b, n, err);
	if (st == AMQ_OK && n > 0) {
		memcpy(b->hashes + b->count, hashes, n * sizeof(uint64_t));
		b->count += n;
	}
	return st;
}

amq_status amq_hashbag_sort(amq_hashbag *b, uint64_t *distinct, amq_error *err)
{
	*distinct = 0;
	if (b->count > 1) {
		uint64_t *scratch = b->alloc.alloc(b->alloc.ctx, b->count * sizeof(uint64_t));
		if (scratch == NULL)
			return amq_fail(err, AMQ_NO_MEMORY,
					"pass a capacity so the filter streams instead",
					"out of memory sorting %zu collected hashes", b->count);
		bool sorted = amq_sort_hashes(b->hashes, scratch, b->count, &b->alloc);
		b->alloc.free(b->alloc.ctx, scratch);
		if (!sorted)
			return amq_fail(err, AMQ_INTERRUPTED, "", "interrupted");
	}
	for (size_t i = 0; i < b->count; i++)
		*distinct += i == 0 || b->hashes[i] != b->hashes[i - 1];
	return AMQ_OK;
}

void amq_hashbag_free(amq_hashbag *b)
{
	if (b->hashes != NULL)
		b->alloc.free(b->alloc.ctx, b->hashes);
	b->hashes = NULL;
	b->count = b->capacity = 0;
}
