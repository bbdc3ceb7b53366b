/*
 * fuse_bench.c - the binary fuse filter against the blocked Bloom filter at
 * the rates fuse's 8- and 16-bit fingerprints give (1/256, 1/65536), side by
 * side in one run: bits per key, measured false-positive rate, build ns per
 * key (amq_builder_add of every hash plus the finish, as fuse_agg and
 * bloom_agg run it), and ns per probe, one at a time and batched
 * (amq_filter_contains_many), half present and half absent, at each n and
 * at 1e5 keys (in the caches). Prints a markdown table of medians of RUNS
 * runs. Usage: fuse_bench [--smoke] [n ...] (default 1e6 1e7).
 */
#include "amq.h"
#include "bench_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 3
#define IN_CACHE 100000

static int runs = RUNS;

typedef struct {
	double bits, fpr, build_ns, probe_ns, batch_ns;
} result;

/* One build of keys [0, n) of kind/layout at fpr, and its probes. */
static result run_once(amq_kind kind, amq_layout layout, double fpr, uint64_t n)
{
	result r = {0};
	amq_builder b;
	amq_filter f;
	amq_error err;
	double t0 = now();
	if (amq_builder_init(&b, kind, layout, fpr, 0, 0, &amq_malloc_allocator, &err) != AMQ_OK)
		goto failed;
	for (uint64_t v = 0; v < n; v++)
		if (amq_builder_add(&b, amq_hash_int((int64_t)v, 0), &err) != AMQ_OK)
			goto failed;
	if (amq_builder_finish(&b, &f, &err) != AMQ_OK)
		goto failed;
	amq_builder_free(&b);
	r.build_ns = (now() - t0) * 1e9 / (double)n;
	r.bits = 8.0 * (double)f.payload_size / (double)n;

	enum { CHUNK = 1024 };
	uint64_t probes = 2 * n < 4000000 ? 4000000 : 2 * n, hits = 0, positives = 0;
	amq_probe probe = amq_filter_probe_for(&f);
	t0 = now();
	for (uint64_t i = 0; i < probes; i++) {
		uint64_t v = i % 2 ? (i / 2) % n : n + i;
		bool in = probe(&f, amq_hash_int((int64_t)v, 0));
		hits += in;
		positives += (uint64_t)in & (uint64_t)(i % 2 == 0);
	}
	r.probe_ns = (now() - t0) * 1e9 / (double)probes;
	r.fpr = (double)positives / (double)(probes / 2);
	uint64_t hashes[CHUNK];
	bool out[CHUNK];
	t0 = now();
	for (uint64_t i = 0; i < probes; i += CHUNK) {
		for (uint64_t j = 0; j < CHUNK; j++) {
			uint64_t k = i + j;
			hashes[j] = amq_hash_int((int64_t)(k % 2 ? (k / 2) % n : n + k), 0);
		}
		amq_filter_contains_many(&f, hashes, CHUNK, out);
		for (uint64_t j = 0; j < CHUNK; j++)
			hits += out[j];
	}
	r.batch_ns = (now() - t0) * 1e9 / (double)probes + (hits == 0 ? 1e-9 : 0.0);
	amq_filter_free(&f, &amq_malloc_allocator);
	return r;
failed:
	fprintf(stderr, "fuse_bench: %s\n", err.message);
	exit(1);
}

/* The medians of runs builds and probes. */
static result median_of(amq_kind kind, amq_layout layout, double fpr, uint64_t n)
{
	double build[RUNS], probe[RUNS], batch[RUNS];
	result r = {0};
	for (int k = 0; k < runs; k++) {
		r = run_once(kind, layout, fpr, n);
		build[k] = r.build_ns;
		probe[k] = r.probe_ns;
		batch[k] = r.batch_ns;
	}
	r.build_ns = median(build, runs);
	r.probe_ns = median(probe, runs);
	r.batch_ns = median(batch, runs);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t sizes[8] = {1000000, 10000000};
	int nsizes = 2, first = 1;
	if (argc > first && strcmp(argv[first], "--smoke") == 0) {
		runs = 1;
		first++;
	}
	if (argc > first) {
		nsizes = 0;
		for (int i = first; i < argc && nsizes < 8; i++)
			sizes[nsizes++] = (uint64_t)strtod(argv[i], NULL);
	}
	amq_kind fuse = amq_kind_named("fuse");
	printf("Medians of %d runs; probes half present, half absent; build = amq_builder_add of "
	       "every hash + finish.\n\n",
	       runs);
	printf("| keys | filter | bits/key | measured fpr | build ns/key | probe ns | probe ns "
	       "(in cache, 1e5 keys) | batched probe ns | fuse probe / blocked |\n"
	       "|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nsizes; i++) {
		for (int w = 0; w < 2; w++) {
			double fpr = w == 0 ? 1.0 / 256 : 1.0 / 65536;
			result fz = median_of(fuse, (amq_layout)0, fpr, sizes[i]);
			result bl = median_of(AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, fpr, sizes[i]);
			uint64_t small = sizes[i] < IN_CACHE ? sizes[i] : IN_CACHE;
			result fz_small = median_of(fuse, (amq_layout)0, fpr, small);
			result bl_small = median_of(AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, fpr, small);
			printf("| %.0e | fuse %d-bit | %.2f | %.5f | %.1f | %.1f | %.1f | %.1f | "
			       "%.2fx |\n",
			       (double)sizes[i], w == 0 ? 8 : 16, fz.bits, fz.fpr, fz.build_ns,
			       fz.probe_ns, fz_small.probe_ns, fz.batch_ns,
			       fz.probe_ns / bl.probe_ns);
			printf("| %.0e | blocked bloom at p = 2^-%d | %.2f | %.5f | %.1f | %.1f | "
			       "%.1f | "
			       "%.1f | |\n",
			       (double)sizes[i], w == 0 ? 8 : 16, bl.bits, bl.fpr, bl.build_ns,
			       bl.probe_ns, bl_small.probe_ns, bl.batch_ns);
			fflush(stdout);
		}
	}
	return 0;
}
