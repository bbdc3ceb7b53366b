/*
 * core_bench.c - ns per add and per contains for amq's classic Bloom, blocked
 * Bloom and cuckoo filters, side by side with Debian's libbloom at the same n
 * and p, plus bits per item against theory. Prints a markdown table; each
 * time is the median of RUNS runs. Usage: core_bench [--smoke] [--hugepages] [n ...]
 * (default 1e6 1e8); --hugepages asks for transparent huge pages
 * (madvise) for every filter, amq's and libbloom's alike; --smoke (for make
 * test, which only checks that it runs) times one run of everything and the
 * builder at the first n instead of BUILD_N. A second table
 * gives ns per probe of a scalable chain grown to 1x, 10x and 100x its first
 * capacity against a blocked filter sized for the final n,
 * and a third times the aggregate builder at BUILD_N distinct values: sized at the end
 * for the distinct values seen against streaming into a filter with a
 * capacity, for both Bloom layouts.
 */
#include "amq.h"
#include "cuckoo/cuckoo_table.h"
#include "bench_clock.h"
#include "bloom/bloom_internal.h"

#include <bloom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define RUNS 3
#define FPR 0.01

static bool hugepages;
/* RUNS, or 1 under --smoke. */
static int runs = RUNS;

/* Page-aligned memory, with huge pages requested when --hugepages is given. */
static void advise(void *p, size_t size)
{
	if (hugepages && size >= ((size_t)2 << 20))
		madvise((void *)((uintptr_t)p & ~(uintptr_t)4095), size, MADV_HUGEPAGE);
}

static void *bench_alloc(void *ctx, size_t size)
{
	(void)ctx;
	void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (p != NULL)
		advise(p, size);
	return p;
}

static void bench_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const amq_allocator bench_allocator = {.alloc = bench_alloc, .free = bench_free};
static const amq_allocator *A = &bench_allocator;

/* BLOCKED probes through amq_filter_contains (AVX2 where the CPU has it);
 * BLOCKED_PORTABLE is the same filter probed by the loop other CPUs run. */
typedef enum { CLASSIC, BLOCKED, BLOCKED_PORTABLE, CUCKOO, LIBBLOOM, STRUCTURES } structure;
static const char *const NAMES[] = {"amq classic", "amq blocked", "amq blocked, portable probe",
				    "amq cuckoo", "libbloom 1.6"};

typedef struct {
	double add_ns, contains_ns, bits_per_item, fpr;
} result;

/* One run: build with n values, probe n present and n absent ones. Values
 * reach every structure as int64 keys, each hashing them its own way. */
static result run_once(structure s, uint64_t n)
{
	result r = {0};
	amq_filter f;
	struct bloom lb;
	amq_error err;
	if (s == LIBBLOOM) {
		bloom_init(&lb, (int)n, FPR);
		advise(lb.bf, (size_t)lb.bytes); /* calloc'd, not yet touched */
	} else if (s == CUCKOO)
		amq_cuckoo_create(&f, AMQ_LAYOUT_CLASSIC, n, FPR, 0, A, &err);
	else
		amq_bloom_create(&f, n, FPR, s == CLASSIC ? AMQ_LAYOUT_CLASSIC : AMQ_LAYOUT_BLOCKED,
				 0, A, &err);

	double t0 = now();
	for (int64_t v = 0; v < (int64_t)n; v++) {
		if (s == LIBBLOOM)
			bloom_add(&lb, &v, sizeof(v));
		else if (s == CUCKOO)
			amq_cuckoo_add(&f, amq_hash_int(v, 0), &err);
		else
			amq_bloom_add(&f, amq_hash_int(v, 0));
	}
	r.add_ns = (now() - t0) * 1e9 / (double)n;

	uint64_t hits = 0, false_hits = 0;
	t0 = now();
	for (int64_t v = 0; v < 2 * (int64_t)n; v++) {
		bool hit;
		if (s == LIBBLOOM)
			hit = bloom_check(&lb, &v, sizeof(v)) == 1;
		else if (s == CUCKOO)
			hit = amq_filter_contains(&f, amq_hash_int(v, 0));
		else if (s == BLOCKED_PORTABLE)
			hit = amq_blocked_contains_portable(&f, amq_hash_int(v, 0));
		else
			hit = amq_filter_contains(&f, amq_hash_int(v, 0));
		hits += hit;
		/* No branch on the answer: a mispredicted branch on a loaded
		 * value would serialize the cache misses of successive probes. */
		false_hits += (uint64_t)hit & (uint64_t)(v >= (int64_t)n);
	}
	r.contains_ns = (now() - t0) * 1e9 / (2.0 * (double)n);
	r.fpr = (double)false_hits / (double)n;
	if (hits - false_hits != n)
		fprintf(stderr, "%s: false negatives!\n", NAMES[s]);
	if (s == LIBBLOOM) {
		r.bits_per_item = (double)lb.bits / (double)n;
		bloom_free(&lb);
	} else {
		r.bits_per_item =
		    (s == CUCKOO ? (double)f.cells * 4 * f.hashes : (double)f.cells) / (double)n;
		amq_filter_free(&f, A);
	}
	return r;
}

/* ns per probe (half present, half absent) of f over values [0, n). */
static double probe_ns(const amq_filter *f, uint64_t n, double *fpr)
{
	amq_probe probe = amq_filter_probe_for(f);
	uint64_t probes = 2000000, hits = 0, positives = 0;
	double start = now();
	for (uint64_t i = 0; i < probes; i++) {
		uint64_t v = i % 2 ? (i / 2) % n : n + i;
		bool in = probe(f, amq_hash_int((int64_t)v, 0));
		hits += in;
		positives += in && i % 2 == 0;
	}
	double ns = (now() - start) * 1e9 / (double)probes;
	*fpr = (double)positives / (double)(probes / 2);
	return ns + (hits == 0 ? 1e-9 : 0.0); /* keeps the probes from being elided */
}

/* The scalable table: a chain from `first` grown by adds to 1x, 10x and
 * 100x, each probed against a blocked filter sized for the chain's n. */
static void scalable_table(uint64_t first)
{
	printf("\n| n | chain links | scalable ns/probe | blocked ns/probe (sized for n) | ratio | "
	       "scalable fpr | blocked fpr | scalable bits/item | blocked bits/item |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	amq_error err;
	for (uint64_t times = 1; times <= 100; times *= 10) {
		uint64_t n = first * times;
		double chain[RUNS], plain[RUNS], chain_fpr = 0, plain_fpr = 0;
		amq_filter f, b;
		amq_scalable_create(&f, first, FPR, 2, 0, A, &err);
		for (uint64_t i = 0; i < n; i++)
			amq_filter_add_to(&f, amq_hash_int((int64_t)i, 0), A, &err);
		amq_bloom_create(&b, n, FPR, AMQ_LAYOUT_BLOCKED, 0, A, &err);
		for (uint64_t i = 0; i < n; i++)
			amq_bloom_add(&b, amq_hash_int((int64_t)i, 0));
		for (int k = 0; k < runs; k++) {
			chain[k] = probe_ns(&f, n, &chain_fpr);
			plain[k] = probe_ns(&b, n, &plain_fpr);
		}
		char json[AMQ_INFO_MAX];
		amq_filter_info_json(&f, json, sizeof(json));
		int links = 0;
		for (const char *p = json; (p = strstr(p, "\"error\"")) != NULL; p++)
			links++;
		double c = median(chain, runs), pl = median(plain, runs);
		printf("| %.0e (%llux) | %d | %.1f | %.1f | %.2fx | %.4f | %.4f | %.2f | %.2f |\n",
		       (double)n, (unsigned long long)times, links, c, pl, c / pl, chain_fpr,
		       plain_fpr, (double)f.size * 8.0 / (double)n,
		       (double)b.size * 8.0 / (double)n);
		fflush(stdout);
		amq_filter_free(&f, A);
		amq_filter_free(&b, A);
	}
}

#define BUILD_N 10000000
#define BUILD_RUNS 5

typedef enum { HASH_ONLY, DISTINCT_SIZED, WITH_CAPACITY, BUILD_MODES } build_mode;

/* Seconds to build one filter from n distinct int64 values, hashing included
 * as an aggregate does; HASH_ONLY times the hashing alone. */
static double build_once(build_mode mode, amq_layout layout, uint64_t n)
{
	amq_builder b;
	amq_filter f;
	amq_error err;
	uint64_t sum = 0;
	double t0 = now();
	if (mode == HASH_ONLY) {
		for (int64_t v = 0; v < (int64_t)n; v++)
			sum += amq_hash_int(v, 0);
	} else {
		amq_builder_init(&b, AMQ_KIND_BLOOM, layout, FPR, mode == WITH_CAPACITY ? n : 0, 0,
				 A, &err);
		for (int64_t v = 0; v < (int64_t)n; v++)
			amq_builder_add(&b, amq_hash_int(v, 0), &err);
		if (amq_builder_finish(&b, &f, &err) != AMQ_OK)
			fprintf(stderr, "build failed: %s\n", err.message);
		else
			amq_filter_free(&f, A);
		amq_builder_free(&b);
	}
	double seconds = now() - t0;
	if (sum == 1) /* keeps the hashing loop */
		fprintf(stderr, "!");
	return seconds;
}

/* The builder table at n values: for each layout, the modes run in turn,
 * round after round, so a noisy neighbour slows them alike; medians of
 * build_runs (at most BUILD_RUNS). */
static void builder_table(uint64_t n, int build_runs)
{
	static const char *const MODE_NAMES[] = {"hashing alone", "sized for the distinct values",
						 "with a capacity (streaming)"};
	printf("\nBuilder (amq_builder_add + finish, int64 values hashed as SQL does) at %.0e "
	       "distinct values, p = %g; medians of %d interleaved runs.\n\n",
	       (double)n, FPR, build_runs);
	printf(
	    "| layout | build | ns/row | M rows/s | vs with a capacity |\n|---|---|---|---|---|\n");
	for (int layout = AMQ_LAYOUT_CLASSIC; layout <= AMQ_LAYOUT_BLOCKED; layout++) {
		double t[BUILD_MODES][BUILD_RUNS], med[BUILD_MODES];
		for (int r = 0; r < build_runs; r++)
			for (int m = 0; m < BUILD_MODES; m++)
				t[m][r] = build_once((build_mode)m, (amq_layout)layout, n);
		for (int m = 0; m < BUILD_MODES; m++)
			med[m] = median(t[m], build_runs);
		for (int m = 0; m < BUILD_MODES; m++)
			printf("| %s | %s | %.1f | %.2f | %.2fx |\n",
			       layout == AMQ_LAYOUT_BLOCKED ? "blocked" : "classic", MODE_NAMES[m],
			       med[m] * 1e9 / (double)n, (double)n / med[m] / 1e6,
			       med[m] / med[WITH_CAPACITY]);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	uint64_t sizes[8] = {1000000, 100000000};
	int nsizes = 2, first = 1;
	bool smoke = argc > first && strcmp(argv[first], "--smoke") == 0;
	if (smoke) {
		runs = 1;
		first++;
	}
	if (argc > first && strcmp(argv[first], "--hugepages") == 0) {
		hugepages = true;
		first++;
	}
	if (argc > first) {
		nsizes = 0;
		for (int i = first; i < argc && nsizes < 8; i++)
			sizes[nsizes++] = (uint64_t)strtod(argv[i], NULL);
	}
	double classic_theory = 1.44 * log2(1.0 / FPR);
	double cuckoo_theory = (log2(1.0 / FPR) + 3.0) / 0.95;
	printf("p = %g; medians of %d runs; contains probes half present, half absent; %s.\n", FPR,
	       runs, hugepages ? "transparent huge pages requested" : "4 KiB pages");
#ifdef AMQ_HAVE_AVX2_PROBE
	printf("Blocked probe: %s.\n", amq_cpu_has_avx2() ? "AVX2" : "portable (no AVX2)");
#else
	printf("Blocked probe: portable.\n");
#endif
	printf(
	    "Theory: classic %.2f bits/item (1.44 log2 1/p), cuckoo %.2f ((log2 1/p + 3)/0.95)\n\n",
	    classic_theory, cuckoo_theory);
	printf("| n | structure | ns/add | ns/contains | contains vs libbloom | bits/item | "
	       "measured fpr |\n|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nsizes; i++) {
		result med[STRUCTURES];
		for (int s = 0; s < STRUCTURES; s++) {
			double add[RUNS], contains[RUNS];
			result r = {0};
			for (int k = 0; k < runs; k++) {
				r = run_once((structure)s, sizes[i]);
				add[k] = r.add_ns;
				contains[k] = r.contains_ns;
			}
			med[s] = r;
			med[s].add_ns = median(add, runs);
			med[s].contains_ns = median(contains, runs);
		}
		for (int s = 0; s < STRUCTURES; s++)
			printf("| %.0e | %s | %.1f | %.1f | %.2fx | %.2f | %.4f |\n",
			       (double)sizes[i], NAMES[s], med[s].add_ns, med[s].contains_ns,
			       med[s].contains_ns / med[LIBBLOOM].contains_ns, med[s].bits_per_item,
			       med[s].fpr);
		fflush(stdout);
	}
	scalable_table(sizes[0] / 10 > 0 ? sizes[0] / 10 : 1);
	builder_table(smoke ? sizes[0] : BUILD_N, smoke ? 1 : BUILD_RUNS);
	return 0;
}
