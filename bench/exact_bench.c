/*
 * exact_bench.c - what a local join-filter probe should test a row with when
 * the build side is tiny (issue #33 item 3): the blocked Bloom filter the
 * probes use, against an exact set of the build's keys (their 64-bit key
 * hashes, sorted, searched branch-free; or scanned one by one up to 16
 * keys), and against a range check of integer keys before the filter. For
 * n build keys of 1 to 1,000, 10M probes of which 1% hit a key: ns per probe
 * (the membership test alone: the executor's work per row around it is the
 * same for each) and the rows each lets through. Usage: exact_bench [--runs
 * R] [--probes N] (3 runs of 1e7; make test smoke-runs it with --runs 1
 * --probes 1e5).
 */
#include "amq.h"
#include "bench_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 15

static const amq_allocator *A = &amq_malloc_allocator;
static const size_t SIZES[] = {1, 4, 16, 64, 256, 1000};
#define NSIZES (sizeof(SIZES) / sizeof(SIZES[0]))

/* splitmix64: the keys and the probes. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The join filter's hash of an integer key (joinfilter/keys.h: its value
 * through splitmix64's finalizer). */
static inline uint64_t key_hash(uint64_t value)
{
	value ^= value >> 30;
	value *= 0xbf58476d1ce4e5b9ULL;
	value ^= value >> 27;
	value *= 0x94d049bb133111ebULL;
	return value ^ (value >> 31);
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Whether key is among sorted[0..n): a branch-free lower bound. */
static inline bool sorted_contains(const uint64_t *sorted, size_t n, uint64_t key)
{
	const uint64_t *base = sorted;
	for (size_t len = n; len > 1; len -= len / 2)
		base += (base[len / 2 - 1] < key) * (len / 2);
	return *base == key;
}

/* Whether key is among keys[0..n), one by one. */
static inline bool linear_contains(const uint64_t *keys, size_t n, uint64_t key)
{
	bool found = false;
	for (size_t i = 0; i < n; i++)
		found |= keys[i] == key;
	return found;
}

typedef enum { BLOOM, SORTED, LINEAR, RANGE_BLOOM, NMETHODS } method;
static const char *const METHOD_NAMES[NMETHODS] = {"Bloom filter (blocked, 1%)",
						   "exact set, sorted hashes", "exact set, linear",
						   "range check, then Bloom"};

/* One timed pass over probes[0..m) with method; returns the rows let
 * through in *passed. Keys are integers: the range is of the values, the
 * filter and the sets hold their hashes (key_hash). */
static double run(method how, const amq_filter *f, amq_probe contains, const uint64_t *sorted,
		  size_t n, uint64_t lo, uint64_t hi, const uint64_t *probes, size_t m,
		  size_t *passed)
{
	size_t through = 0;
	double start = now();
	for (size_t i = 0; i < m; i++) {
		uint64_t value = probes[i], h;
		bool pass;
		switch (how) {
		case BLOOM:
			pass = contains(f, key_hash(value));
			break;
		case SORTED:
			pass = sorted_contains(sorted, n, key_hash(value));
			break;
		case LINEAR:
			pass = linear_contains(sorted, n, key_hash(value));
			break;
		default:
			h = value >= lo && value <= hi ? key_hash(value) : 0;
			pass = h != 0 && contains(f, h);
			break;
		}
		through += pass;
	}
	*passed = through;
	return (now() - start) * 1e9 / (double)m;
}

int main(int argc, char **argv)
{
	int runs = 3;
	size_t m = 10000000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--runs") == 0)
			runs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--probes") == 0)
			m = (size_t)atof(argv[i + 1]);
	}
	if (runs < 1 || runs > MAX_RUNS || m < 1000) {
		fprintf(stderr, "usage: exact_bench [--runs 1..%d] [--probes N >= 1000]\n",
			MAX_RUNS);
		return 2;
	}
	uint64_t *probes = malloc(m * sizeof(uint64_t)), *values = malloc(1000 * sizeof(uint64_t));
	uint64_t sorted[1000];
	printf("| build keys | method | ns per probe (median of %d) | rows through of %zu (1%% "
	       "hit) |\n|---:|---|---:|---:|\n",
	       runs, m);
	for (size_t s = 0; s < NSIZES; s++) {
		size_t n = SIZES[s];
		uint64_t state = 42 + n, lo = UINT64_MAX, hi = 0;
		amq_filter f;
		amq_error err;
		/* Build keys spread over a quarter of the values, probes over
		 * all of them: the range keeps about a quarter. */
		for (size_t i = 0; i < n; i++) {
			values[i] = next_random(&state) >> 2;
			lo = values[i] < lo ? values[i] : lo;
			hi = values[i] > hi ? values[i] : hi;
		}
		if (amq_bloom_create(&f, n, 0.01, AMQ_LAYOUT_BLOCKED, 0, A, &err) != AMQ_OK) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			sorted[i] = key_hash(values[i]);
			amq_bloom_add(&f, sorted[i]);
		}
		qsort(sorted, n, sizeof(uint64_t), by_key);
		for (size_t i = 0; i < m; i++)
			probes[i] = i % 100 == 0 ? values[i % n] : next_random(&state);
		amq_probe contains = amq_filter_probe_for(&f);
		for (int how = 0; how < NMETHODS; how++) {
			if (how == LINEAR && n > 16)
				continue;
			double t[MAX_RUNS];
			size_t passed = 0;
			for (int r = 0; r < runs; r++)
				t[r] = run((method)how, &f, contains, sorted, n, lo, hi, probes, m,
					   &passed);
			printf("| %zu | %s | %.2f | %zu |\n", n, METHOD_NAMES[how], median(t, runs),
			       passed);
		}
		amq_filter_free(&f, A);
	}
	free(probes);
	free(values);
	return 0;
}
