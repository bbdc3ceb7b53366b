/*
 * hashset.c - the bag of hashes an aggregate collects when it does not know
 * how many distinct values it will see.
 *
 * The buffer holds a sorted, distinct prefix, then the hashes added since
 * (the tail). When the buffer is full, only the tail is sorted (an
 * out-of-place MSD radix sort into a scratch buffer of the tail's size, whose
 * buckets stay in cache after the first pass), deduplicated, and merged into
 * the prefix in one backward pass: every hash is sorted once, and later
 * compactions only merge, in linear time. Sorted runs from other builders
 * merge the same way. The buffer doubles only when the set fills more than
 * half of it, so duplicate-heavy input stays near its distinct hashes.
 *
 * Memory: the buffer stays under 4 x 8 bytes per distinct hash (at least
 * INITIAL_CAPACITY hashes); a compaction adds a scratch buffer of at most
 * the tail's size, and growing holds the old buffer next to the new one. So
 * the peak stays under 64 bytes per distinct hash, and under 24 bytes per row
 * when all rows differ (tests/core/test_builder.c checks both).
 */
#include "base/internal.h"

#define INITIAL_CAPACITY 1024
#define INSERTION_SORT_MAX 16
/* A radix pass aims at about this many hashes per bucket. */
#define PER_BUCKET 8
#define MAX_DIGIT_BITS 8
/* What to do when the hashes do not fit in memory. */
#define STREAM_HINT "pass a capacity so the filter streams instead"

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

/* Digit width for n hashes: about n / 8 buckets, at most 2^MAX_DIGIT_BITS,
 * so small buckets are not swamped by the cost of empty ones. */
static int digit_bits(size_t n, int bits_left)
{
	int bits = 1;
	while (bits < MAX_DIGIT_BITS && ((size_t)PER_BUCKET << bits) < n)
		bits++;
	return bits < bits_left ? bits : bits_left;
}

/* True when a's interrupt check says stop: polled every AMQ_INTERRUPT_EVERY
 * hashes a pass reads. */
static bool interrupted(const amq_allocator *a)
{
	return a->interrupted != NULL && a->interrupted(a->ctx);
}

/*
 * Counts data[0..n) by the `bits`-bit digit just below bit `top` into
 * count[d + 1], first skipping down past digits every hash shares (equal top
 * bits, one repeated hash). Returns the new top, or 0 when the hashes are
 * all equal.
 */
static int count_first_split(const uint64_t *data, size_t n, int top, int *bits, size_t *count)
{
	for (; top > 0; top -= *bits) {
		*bits = digit_bits(n, top);
		int shift = top - *bits;
		uint64_t mask = ((uint64_t)1 << *bits) - 1;
		memset(count, 0, (((size_t)1 << *bits) + 1) * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			count[((data[i] >> shift) & mask) + 1]++;
		if (count[((data[0] >> shift) & mask) + 1] != n)
			return top;
	}
	return 0;
}

/*
 * Sorts data[0..n) by its bits below bit `top`, MSD first. Each level
 * scatters the hashes into spare[] by one digit and sorts each bucket there,
 * with the matching stretch of data[] as its own spare (so after the first
 * pass a bucket's work stays in cache); the sorted hashes end in spare[]
 * when to_spare, else in data[]. False, both arrays in no order, when a's
 * interrupt check said stop.
 */
static bool radix_sort(uint64_t *data, uint64_t *spare, size_t n, int top, bool to_spare,
		       const amq_allocator *a)
{
	size_t end[(1 << MAX_DIGIT_BITS) + 1];
	int bits = 0;
	if (n >= AMQ_INTERRUPT_EVERY && interrupted(a))
		return false;
	if (n > INSERTION_SORT_MAX)
		top = count_first_split(data, n, top, &bits, end);
	if (n <= INSERTION_SORT_MAX || top == 0) {
		insertion_sort(data, n); /* linear when all are equal */
		if (to_spare && n > 0)
			memcpy(spare, data, n * sizeof(uint64_t));
		return true;
	}
	int shift = top - bits;
	size_t buckets = (size_t)1 << bits;
	uint64_t mask = buckets - 1;
	/* end[d] starts as bucket d's first slot and ends past its last. */
	for (size_t d = 1; d < buckets; d++)
		end[d] += end[d - 1];
	for (size_t i = 0; i < n; i++) {
		uint64_t v = data[i];
		spare[end[(v >> shift) & mask]++] = v;
		if (i % AMQ_INTERRUPT_EVERY == AMQ_INTERRUPT_EVERY - 1 && interrupted(a))
			return false;
	}
	if (shift == 0) {
		/* Each bucket holds one hash value: spare[] is sorted. */
		if (!to_spare)
			memcpy(data, spare, n * sizeof(uint64_t));
		return true;
	}
	for (size_t d = 0, first = 0; d < buckets; first = end[d++])
		if (end[d] > first &&
		    !radix_sort(spare + first, data + first, end[d] - first, shift, !to_spare, a))
			return false;
	return true;
}

bool amq_sort_hashes(uint64_t *hashes, uint64_t *scratch, size_t n, const amq_allocator *a)
{
	return radix_sort(hashes, scratch, n, 64, false, a);
}

/* Drops repeats from the sorted a[0..n); returns how many remain. */
static size_t unique(uint64_t *a, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (kept == 0 || a[kept - 1] != a[i])
			a[kept++] = a[i];
	return kept;
}

/*
 * Merges the sorted, distinct run[0..n) and hashes[0..count) into
 * dst[0..), which has room for count + n and is either another buffer or
 * hashes itself (run is never inside it). Writing from the top down never
 * overwrites a hash not yet read; a hash in both is kept once, and the gap
 * that leaves is closed at the end. Returns the merged count.
 */
static size_t merge_into(uint64_t *dst, const uint64_t *hashes, size_t count, const uint64_t *run,
			 size_t n)
{
	size_t i = count, j = n, top = count + n, out = top;
	while (i > 0 && j > 0) {
		uint64_t a = hashes[i - 1], b = run[j - 1];
		dst[--out] = a > b ? a : b;
		i -= a >= b;
		j -= b >= a;
	}
	out -= j;
	if (j > 0)
		memcpy(dst + out, run, j * sizeof(uint64_t));
	if (dst != hashes && i > 0)
		memcpy(dst, hashes, i * sizeof(uint64_t));
	/* dst[0..i) then dst[out..top) are the merged set. */
	if (out > i)
		memmove(dst + i, dst + out, (top - out) * sizeof(uint64_t));
	return i + (top - out);
}

/* A new *buffer for at least `need` hashes, its *capacity doubled from the
 * current one until the set fills at most half of it. */
static amq_status larger_buffer(amq_hashset *s, size_t need, uint64_t **buffer, size_t *capacity,
				amq_error *err)
{
	if (need > SIZE_MAX / sizeof(uint64_t) / 2)
		return amq_fail(err, AMQ_NO_MEMORY, STREAM_HINT,
				"too many distinct values to collect");
	*capacity = s->capacity ? s->capacity : INITIAL_CAPACITY;
	while (*capacity < need || s->count > *capacity / 2)
		*capacity *= 2;
	*buffer = s->alloc.alloc(s->alloc.ctx, *capacity * sizeof(uint64_t));
	if (*buffer == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, STREAM_HINT,
				"out of memory collecting %zu distinct hashes", s->count);
	return AMQ_OK;
}

/* Makes buffer (of capacity hashes, holding count) the set's buffer. */
static void replace_buffer(amq_hashset *s, uint64_t *buffer, size_t capacity, size_t count)
{
	if (s->hashes != NULL)
		s->alloc.free(s->alloc.ctx, s->hashes);
	s->hashes = buffer;
	s->capacity = capacity;
	s->count = s->sorted = count;
}

/* Moves the set to a larger buffer (see larger_buffer). */
static amq_status grow(amq_hashset *s, size_t need, amq_error *err)
{
	size_t capacity;
	uint64_t *grown;
	amq_status st = larger_buffer(s, need, &grown, &capacity, err);
	if (st != AMQ_OK)
		return st;
	if (s->count > 0)
		memcpy(grown, s->hashes, s->count * sizeof(uint64_t));
	replace_buffer(s, grown, capacity, s->count);
	return AMQ_OK;
}

void amq_hashset_init(amq_hashset *s, const amq_allocator *a)
{
	s->hashes = NULL;
	s->count = 0;
	s->capacity = 0;
	s->sorted = 0;
	s->alloc = *a;
}

amq_status amq_hashset_compact(amq_hashset *s, amq_error *err)
{
	size_t tail = s->count - s->sorted;
	if (tail == 0)
		return AMQ_OK;
	uint64_t *run = s->alloc.alloc(s->alloc.ctx, tail * sizeof(uint64_t));
	if (run == NULL)
		return amq_fail(err, AMQ_NO_MEMORY, STREAM_HINT,
				"out of memory sorting %zu collected hashes", tail);
	if (!radix_sort(s->hashes + s->sorted, run, tail, 64, true, &s->alloc)) {
		/* The tail is scrambled: the caller frees the set. */
		s->alloc.free(s->alloc.ctx, run);
		return amq_fail(err, AMQ_INTERRUPTED, "", "interrupted");
	}
	s->count = s->sorted = merge_into(s->hashes, s->hashes, s->sorted, run, unique(run, tail));
	s->alloc.free(s->alloc.ctx, run);
	return AMQ_OK;
}

amq_status amq_hashset_reserve(amq_hashset *s, size_t extra, amq_error *err)
{
	if (s->capacity - s->count >= extra)
		return AMQ_OK;
	/* Compacting may free enough; grow only if it leaves the buffer more
	 * than half full, so duplicate-heavy input never grows it. */
	amq_status st = amq_hashset_compact(s, err);
	if (st != AMQ_OK || (s->capacity - s->count >= extra && s->count <= s->capacity / 2))
		return st;
	if (extra > SIZE_MAX / sizeof(uint64_t) - s->count)
		return amq_fail(err, AMQ_NO_MEMORY, STREAM_HINT,
				"too many distinct values to collect");
	return grow(s, s->count + extra, err);
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

amq_status amq_hashset_union(amq_hashset *s, const uint64_t *run, size_t n, amq_error *err)
{
	amq_status st = amq_hashset_compact(s, err);
	if (st != AMQ_OK || n == 0)
		return st;
	if (s->capacity - s->count >= n) {
		s->count = s->sorted = merge_into(s->hashes, s->hashes, s->count, run, n);
		return AMQ_OK;
	}
	/* Growing anyway: merge straight into the new buffer. */
	if (n > SIZE_MAX / sizeof(uint64_t) - s->count)
		return amq_fail(err, AMQ_NO_MEMORY, STREAM_HINT,
				"too many distinct values to collect");
	size_t capacity;
	uint64_t *merged;
	st = larger_buffer(s, s->count + n, &merged, &capacity, err);
	if (st != AMQ_OK)
		return st;
	replace_buffer(s, merged, capacity, merge_into(merged, s->hashes, s->count, run, n));
	return AMQ_OK;
}

void amq_hashset_free(amq_hashset *s)
{
	if (s->hashes != NULL)
		s->alloc.free(s->alloc.ctx, s->hashes);
	s->hashes = NULL;
	s->count = s->capacity = s->sorted = 0;
}
