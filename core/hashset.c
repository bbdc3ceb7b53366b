/*
 * hashset.c - the bag of hashes an aggregate collects when it does not know
 * how many distinct values it will see. When the buffer fills it is sorted
 * (in-place MSD radix sort) and deduplicated, and grows only if that did not
 * free half of it, so duplicate-heavy input stays small and memory never
 * exceeds 8 bytes per row plus the buffer's doubling slack.
 */
#include "internal.h"

#define INITIAL_CAPACITY 1024
#define INSERTION_SORT_MAX 48

static void insertion_sort(uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t v = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* American flag sort on the byte at `shift`, then each bucket on the next. */
static void radix_sort(uint64_t *a, size_t n, int shift)
{
	if (n <= INSERTION_SORT_MAX) {
		insertion_sort(a, n);
		return;
	}
	size_t start[257] = {0}, next[256];
	for (size_t i = 0; i < n; i++)
		start[((a[i] >> shift) & 0xff) + 1]++;
	for (int d = 0; d < 256; d++) {
		start[d + 1] += start[d];
		next[d] = start[d];
	}
	for (int d = 0; d < 256; d++) {
		while (next[d] < start[d + 1]) {
			uint64_t v = a[next[d]];
			int digit = (int)((v >> shift) & 0xff);
			while (digit != d) {
				uint64_t displaced = a[next[digit]];
				a[next[digit]++] = v;
				v = displaced;
				digit = (int)((v >> shift) & 0xff);
			}
			a[next[d]++] = v;
		}
	}
	if (shift == 0)
		return;
	for (int d = 0; d < 256; d++)
		if (start[d + 1] - start[d] > 1)
			radix_sort(a + start[d], start[d + 1] - start[d], shift - 8);
}

void amq_hashset_init(amq_hashset *s, const amq_allocator *a)
{
	s->hashes = NULL;
	s->count = 0;
	s->capacity = 0;
	s->sorted = 0;
	s->alloc = *a;
}

void amq_hashset_compact(amq_hashset *s)
{
	if (s->sorted == s->count)
		return;
	radix_sort(s->hashes, s->count, 56);
	size_t unique = 0;
	for (size_t i = 0; i < s->count; i++)
		if (unique == 0 || s->hashes[unique - 1] != s->hashes[i])
			s->hashes[unique++] = s->hashes[i];
	s->count = unique;
	s->sorted = unique;
}

amq_status amq_hashset_reserve(amq_hashset *s, size_t extra, amq_error *err)
{
	if (s->capacity - s->count >= extra)
		return AMQ_OK;
	/* Compacting may free enough; grow only if it leaves the buffer more
	 * than half full, so duplicate-heavy input never grows it. */
	amq_hashset_compact(s);
	if (s->capacity - s->count >= extra && s->count <= s->capacity / 2)
		return AMQ_OK;
	if (extra > SIZE_MAX / sizeof(uint64_t) - s->count)
		return amq_fail(err, AMQ_NO_MEMORY, "", "too many distinct values to collect");
	size_t need = s->count + extra;
	size_t capacity = s->capacity ? s->capacity : INITIAL_CAPACITY;
	while (capacity < need || s->count > capacity / 2)
		capacity = capacity > SIZE_MAX / sizeof(uint64_t) / 2 ? need : capacity * 2;
	uint64_t *grown = s->alloc.alloc(s->alloc.ctx, capacity * sizeof(uint64_t));
	if (grown == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, "pass a capacity so the filter streams instead",
				"out of memory collecting %zu distinct hashes", s->count);
	if (s->count > 0)
		memcpy(grown, s->hashes, s->count * sizeof(uint64_t));
	if (s->hashes != NULL)
		s->alloc.free(s->alloc.ctx, s->hashes);
	s->hashes = grown;
	s->capacity = capacity;
	return AMQ_OK;
}

amq_status amq_hashset_add(amq_hashset *s, uint64_t hash, amq_error *err)
{
	if (s->count == s->capacity) {
		amq_status st = amq_hashset_reserve(s, 1, err);
		if (st != AMQ_OK)
			return st;
	}
	s->hashes[s->count++] = hash;
	return AMQ_OK;
}

void amq_hashset_free(amq_hashset *s)
{
	if (s->hashes != NULL)
		s->alloc.free(s->alloc.ctx, s->hashes);
	s->hashes = NULL;
	s->count = s->capacity = s->sorted = 0;
}
