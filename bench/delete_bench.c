/*
 * delete_bench.c - the layouts that delete side by side (issue #34 item 6):
 * the counting Bloom filter, the d-left counting filter and the b4 cuckoo
 * filter, each sized for capacity n at p and filled with n distinct values,
 * then probed with present and absent values through amq_filter_probe_for
 * (the probe SQL calls per row), then emptied by deleting every value. Prints
 * bytes and bits per value (and d-left's bytes against counting's), the
 * measured fpr, and ns per add, probe and delete, medians of R rounds with
 * the layouts taking turns. Usage: delete_bench [--runs R] [n ...] (default
 * 3 rounds, n = 1e6). Values are int64 keys hashed as SQL hashes them, and
 * the hashing is part of every time.
 */
#include "amq.h"
#include "bench_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_RUNS 3
#define MAX_RUNS 15
#define MAX_SIZES 8
/* Absent values probed per filter: at p = 0.1% about 1,000 false hits. */
#define ABSENT_PROBES 1000000

static const double FPRS[] = {0.01, 0.001};
#define NFPRS (sizeof(FPRS) / sizeof(FPRS[0]))

typedef enum { COUNTING, DLEFT, B4, NLAYOUTS } layout_index;
static const amq_kind KINDS[NLAYOUTS] = {AMQ_KIND_BLOOM, AMQ_KIND_BLOOM, AMQ_KIND_CUCKOO};
static const amq_layout LAYOUTS[NLAYOUTS] = {AMQ_LAYOUT_COUNTING, AMQ_LAYOUT_DLEFT,
					     AMQ_LAYOUT_CLASSIC};
static const char *const NAMES[NLAYOUTS] = {"bloom counting", "bloom dleft", "cuckoo b4"};

static const amq_allocator *A = &amq_malloc_allocator;

/* One filled, probed and emptied filter. */
typedef struct measurement {
	double add_ns, present_ns, absent_ns, delete_ns, fpr;
	size_t bytes;
	uint64_t errors; /* failed adds, false negatives, deletes that found nothing */
} measurement;

/* The values 0..n-1 visited in a scattered order: i * step mod n with a step
 * near n / golden ratio that is coprime with n. */
static uint64_t scatter_step(uint64_t n)
{
	uint64_t step = ((uint64_t)((double)n * 0.6180339887) | 1) % n;
	for (;;) {
		uint64_t a = step, b = n;
		while (b != 0) {
			uint64_t t = a % b;
			a = b;
			b = t;
		}
		if (a == 1 || n == 1)
			return n == 1 ? 0 : step;
		step++;
	}
}

/* Fills, probes and empties the layout's filter for n at fpr. */
static measurement measure(layout_index l, uint64_t n, double fpr)
{
	measurement m = {0};
	amq_filter f;
	amq_error err;
	if (amq_filter_create(&f, KINDS[l], LAYOUTS[l], n, fpr, 0, A, &err) != AMQ_OK) {
		fprintf(stderr, "delete_bench: %s: %s\n", NAMES[l], err.message);
		exit(1);
	}
	m.bytes = f.size;
	double t0 = now();
	for (int64_t v = 0; v < (int64_t)n; v++)
		m.errors += amq_filter_add(&f, amq_hash_int(v, 0), &err) != AMQ_OK;
	m.add_ns = (now() - t0) * 1e9 / (double)n;

	amq_probe probe = amq_filter_probe_for(&f);
	uint64_t step = scatter_step(n), v = 0, hits = 0;
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		hits += probe(&f, amq_hash_int((int64_t)v, 0));
		v += step;
		v = v >= n ? v - n : v;
	}
	m.present_ns = (now() - t0) * 1e9 / (double)n;
	m.errors += n - hits;
	hits = 0;
	t0 = now();
	for (int64_t a = 0; a < ABSENT_PROBES; a++)
		hits += probe(&f, amq_hash_int((int64_t)n + a, 0));
	m.absent_ns = (now() - t0) * 1e9 / ABSENT_PROBES;
	m.fpr = (double)hits / ABSENT_PROBES;

	bool removed;
	v = 0;
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		amq_filter_remove(&f, amq_hash_int((int64_t)v, 0), &removed, &err);
		m.errors += !removed;
		v += step;
		v = v >= n ? v - n : v;
	}
	m.delete_ns = (now() - t0) * 1e9 / (double)n;
	amq_filter_free(&f, A);
	return m;
}

/* Every layout at n and fpr, round after round, and the medians. */
static void run_cell(uint64_t n, double fpr, int runs, measurement med[NLAYOUTS], uint64_t *errors)
{
	double add[NLAYOUTS][MAX_RUNS], present[NLAYOUTS][MAX_RUNS], absent[NLAYOUTS][MAX_RUNS],
	    del[NLAYOUTS][MAX_RUNS];
	for (int r = 0; r < runs; r++)
		for (int l = 0; l < NLAYOUTS; l++) {
			measurement m = measure((layout_index)l, n, fpr);
			add[l][r] = m.add_ns;
			present[l][r] = m.present_ns;
			absent[l][r] = m.absent_ns;
			del[l][r] = m.delete_ns;
			med[l] = m; /* sizes and rates are the same every round */
			*errors += m.errors;
			if (m.errors != 0)
				fprintf(stderr, "delete_bench: %s n=%llu p=%g: %llu errors\n",
					NAMES[l], (unsigned long long)n, fpr,
					(unsigned long long)m.errors);
		}
	for (int l = 0; l < NLAYOUTS; l++) {
		med[l].add_ns = median(add[l], runs);
		med[l].present_ns = median(present[l], runs);
		med[l].absent_ns = median(absent[l], runs);
		med[l].delete_ns = median(del[l], runs);
	}
}

int main(int argc, char **argv)
{
	uint64_t sizes[MAX_SIZES] = {1000000};
	int nsizes = 1, runs = DEFAULT_RUNS, first = 1;
	if (argc > 2 && strcmp(argv[1], "--runs") == 0) {
		runs = atoi(argv[2]);
		first = 3;
	}
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "delete_bench: --runs must be 1 to %d\n", MAX_RUNS);
		return 2;
	}
	if (argc > first) {
		nsizes = 0;
		for (int i = first; i < argc && nsizes < MAX_SIZES; i++) {
			double n = strtod(argv[i], NULL);
			if (!(n >= 1 && n <= 1e9)) {
				fprintf(stderr, "delete_bench: n must be 1 to 1e9, got %s\n",
					argv[i]);
				return 2;
			}
			sizes[nsizes++] = (uint64_t)n;
		}
	}
	printf("Each filter sized for capacity n at p and filled with n distinct int64 values; "
	       "n present values and %d absent ones probed through amq_filter_probe_for, then "
	       "every value deleted, in scattered order; medians of %d rounds, the layouts "
	       "taking turns.\n\n",
	       ABSENT_PROBES, runs);
	printf(
	    "| n | p | layout | bytes | bits/value | bytes vs counting | measured fpr | ns/add | "
	    "ns/probe present | ns/probe absent | ns/delete |\n"
	    "|---|---|---|---|---|---|---|---|---|---|---|\n");
	uint64_t errors = 0;
	for (int i = 0; i < nsizes; i++)
		for (size_t p = 0; p < NFPRS; p++) {
			measurement med[NLAYOUTS];
			run_cell(sizes[i], FPRS[p], runs, med, &errors);
			for (int l = 0; l < NLAYOUTS; l++)
				printf(
				    "| %.0e | %g | %s | %zu | %.2f | %.3fx | %.5f | %.1f | %.1f | "
				    "%.1f | %.1f |\n",
				    (double)sizes[i], FPRS[p], NAMES[l], med[l].bytes,
				    (double)med[l].bytes * 8.0 / (double)sizes[i],
				    (double)med[l].bytes / (double)med[COUNTING].bytes, med[l].fpr,
				    med[l].add_ns, med[l].present_ns, med[l].absent_ns,
				    med[l].delete_ns);
			fflush(stdout);
		}
	return errors == 0 ? 0 : 1;
}
