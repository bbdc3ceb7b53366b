/*
 * helpers.h - what several core tests share: freeing filters, stand-in
 * hashes, the fills and reads of the cuckoo tests, the probe tally of the
 * Bloom placement tests, the two-builder aggregate of the counting and
 * scalable tests, and the counting allocator of the interrupt and spill
 * tests. Every function is static inline, so each test takes only what it
 * uses.
 */
#ifndef AMQ_TEST_HELPERS_H
#define AMQ_TEST_HELPERS_H

#include "amq.h"
#include "cuckoo/cuckoo_table.h"
#include "check.h"
#include "spec.h"

#include <stdlib.h>
#include <string.h>

/* Frees each filter named, all made with the malloc allocator, in order. */
#define free_filters(...)                                                                          \
	free_filter_list((amq_filter *[]){__VA_ARGS__},                                            \
			 sizeof((amq_filter *[]){__VA_ARGS__}) / sizeof(amq_filter *))

static inline void free_filter_list(amq_filter *const *filters, size_t n)
{
	for (size_t i = 0; i < n; i++)
		amq_filter_free(filters[i], &amq_malloc_allocator);
}

/* Whether f's bytes, with format version `version` written into their
 * header, are refused as invalid with exactly `message` (*err says what was
 * said); f's own version is put back. */
static inline bool refused_as_version(amq_filter *f, uint8_t version, const char *message,
				      amq_error *err)
{
	uint8_t own = f->bytes[4];
	amq_filter g;
	f->bytes[4] = version;
	bool refused = amq_filter_open(&g, f->bytes, f->size, err) == AMQ_INVALID_FILTER &&
		       strcmp(err->message, message) == 0;
	f->bytes[4] = own;
	return refused;
}

/* The version one past the newest this build reads (the registry's newest),
 * and in want the message a filter of that version is refused with. */
static inline unsigned newer_version(char *want, size_t cap)
{
	unsigned newer = amq_format_version() + 1;
	snprintf(want, cap,
		 "amq filter format version %u was written by a newer amq (this build reads "
		 "versions 1 to %u)",
		 newer, newer - 1);
	return newer;
}

/* ---- stand-in hashes ---- */

/* Hash number i of stream s: distinct (s, i) give distinct hashes. */
static inline uint64_t key(uint64_t s, uint64_t i)
{
	uint64_t x = (s << 40) + i;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* splitmix64: test inputs that are not themselves value hashes. */
static inline uint64_t next_random(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return spec_mix64(*state);
}

/* ---- cuckoo filters ---- */

/* Adds hashes (s, 0..) until one fails or `limit` succeed; returns the number added. */
static inline uint64_t fill(amq_filter *f, uint64_t s, uint64_t limit)
{
	amq_error err;
	uint64_t i = 0;
	while (i < limit && amq_cuckoo_add(f, key(s, i), &err) == AMQ_OK)
		i++;
	return i;
}

/* How many of hashes (s, 0..n) f does not hold. */
static inline uint64_t missing_of(const amq_filter *f, uint64_t s, uint64_t n)
{
	uint64_t missing = 0;
	for (uint64_t i = 0; i < n; i++)
		missing += !amq_filter_contains(f, key(s, i));
	return missing;
}

/* A copy of f's buffer, to compare against after an operation. */
static inline uint8_t *snapshot(const amq_filter *f)
{
	uint8_t *copy = malloc(f->size);
	memcpy(copy, f->bytes, f->size);
	return copy;
}

/* FNV-1a of f's payload: a known answer for the bytes adds leave. */
static inline uint64_t payload_fnv1a(const amq_filter *f)
{
	uint64_t digest = 0xcbf29ce484222325ULL;
	for (uint64_t b = 0; b < f->payload_size; b++)
		digest = (digest ^ f->payload[b]) * 0x100000001b3ULL;
	return digest;
}

/* ---- Bloom probes against a reference answer ---- */

/* The answers a reference gave, and how often a probe disagreed with it. */
struct probe_tally {
	int differ, positive, negative;
};

/* Counts the reference answer for h, and whether amq_filter_contains and
 * probe disagree with it on f. */
static inline void tally_probe(struct probe_tally *t, const amq_filter *f, amq_probe probe,
			       uint64_t h, bool answer)
{
	t->positive += answer;
	t->negative += !answer;
	t->differ += amq_filter_contains(f, h) != answer;
	t->differ += probe(f, h) != answer;
}

/* ---- aggregates ---- */

/* An aggregate of Bloom layout `layout` at fpr 0.01 for capacity, over n rows
 * whose values are ((r * step) % n) % distinct for r in [0, n), hashed as
 * integers: with split, the odd rows go to a second builder. The second is
 * merged into the first through serialization: when checked, always, and the
 * deserialization and the merge are CHECKed; else, unchecked, only when
 * split. The finish is CHECKed. */
static inline void aggregate(amq_layout layout, uint64_t capacity, int64_t n, int64_t distinct,
			     int64_t step, bool split, bool checked, amq_filter *out)
{
	const amq_allocator *alloc = &amq_malloc_allocator;
	amq_builder b[2];
	amq_error err;
	for (int i = 0; i < 2; i++)
		amq_builder_init(&b[i], AMQ_KIND_BLOOM, layout, 0.01, capacity, 0, alloc, &err);
	for (int64_t r = 0; r < n; r++)
		amq_builder_add(&b[split && r % 2], amq_hash_int(((r * step) % n) % distinct, 0),
				&err);
	if (checked || split) {
		uint8_t *state;
		size_t len;
		amq_builder copy;
		amq_builder_serialize(&b[1], &state, &len, &err);
		amq_status st = amq_builder_deserialize(&copy, state, len, alloc, &err);
		if (checked)
			CHECK(st == AMQ_OK, "deserialize: %s", err.message);
		free(state);
		st = amq_builder_merge(&b[0], &copy, &err);
		if (checked)
			CHECK(st == AMQ_OK, "merge: %s", err.message);
		amq_builder_free(&copy);
	}
	CHECK(amq_builder_finish(&b[0], out, &err) == AMQ_OK, "finish: %s", err.message);
	amq_builder_free(&b[0]);
	amq_builder_free(&b[1]);
}

/* A malloc allocator that counts its live blocks, and an interrupt hook
 * that says stop at its stop_at-th poll (0: never): what the tests of
 * interrupts and spills check every path against. A test that keeps more
 * puts a struct probe first in a struct of its own. */
struct probe {
	long live;
	long polls;
	long stop_at;
};

static inline void *probe_alloc(void *ctx, size_t size)
{
	struct probe *p = ctx;
	void *ptr = amq_malloc_allocator.alloc(NULL, size);
	p->live += ptr != NULL;
	return ptr;
}

static inline void probe_free(void *ctx, void *ptr)
{
	struct probe *p = ctx;
	p->live -= ptr != NULL;
	amq_malloc_allocator.free(NULL, ptr);
}

static inline bool probe_interrupted(void *ctx)
{
	struct probe *p = ctx;
	p->polls++;
	return p->stop_at != 0 && p->polls >= p->stop_at;
}

static inline amq_allocator probe_allocator(struct probe *p, long stop_at)
{
	*p = (struct probe){.stop_at = stop_at};
	return (amq_allocator){
	    .alloc = probe_alloc, .free = probe_free, .ctx = p, .interrupted = probe_interrupted};
}

#endif
