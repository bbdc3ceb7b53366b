/*
 * cuckoo_bench.c - the four cuckoo layouts side by side (GitHub issue #10):
 * for each n and p, buckets of 2, 4 and 8 fingerprints and semi-sorted b = 4
 * buckets are filled with n distinct values (each filter sized for capacity
 * n), then probed with present and absent values through the probe function
 * the SQL adapters call per row (amq_filter_probe_for). Prints payload bits
 * per item against the theory line (log2(1/p) + log2(2b)) / load, the
 * measured fpr, ns per add and per contains, and a second table of
 * semi-sorted against b4. Usage: cuckoo_bench [--runs R] [n ...] (default 3
 * runs, n = 1e6 1e8). Values are int64 keys hashed as SQL hashes them, and
 * the hashing is part of every time, as it is of every SQL row.
 * cuckoo_bench --against-go n prints one round of bench/go/run.sh's
 * comparison with seiflotfy/cuckoofilter instead (against_go).
 */
#include "amq.h"
#include "cuckoo/cuckoo_table.h"
#include "bench_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DEFAULT_RUNS 3
#define MAX_RUNS 15
#define MAX_SIZES 8
/* Absent values probed per filter: at p = 0.1% about 7,000 false hits, so
 * the measured rate is good to about 1%. */
#define ABSENT_PROBES 10000000
/* Present values probed per filter, in a scattered order (all of them when
 * n is smaller). */
#define PRESENT_PROBES 10000000

static const double FPRS[] = {0.01, 0.001};
#define NFPRS (sizeof(FPRS) / sizeof(FPRS[0]))

typedef enum { B2, B4, B8, SEMISORTED, NLAYOUTS } layout_index;
static const amq_layout LAYOUTS[NLAYOUTS] = {AMQ_LAYOUT_CUCKOO_B2, AMQ_LAYOUT_CLASSIC,
					     AMQ_LAYOUT_CUCKOO_B8, AMQ_LAYOUT_SEMISORTED};
static const char *const NAMES[NLAYOUTS] = {"b2", "b4", "b8", "semisorted"};

static const amq_allocator *A = &amq_malloc_allocator;

/* One filled and probed filter. */
typedef struct measurement {
	double add_ns, present_ns, absent_ns;
	double fpr, bits_per_item, load;
	uint32_t fingerprint_bits;
	uint64_t failed_adds, false_negatives;
} measurement;

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* A step near range / golden ratio that is coprime with range, so that
 * v -> v + step (mod range) visits every value of [0, range) once, in a
 * scattered order. */
static uint64_t scatter_step(uint64_t range)
{
	uint64_t step = ((uint64_t)((double)range * 0.6180339887) | 1) % range;
	while (gcd(step, range) != 1)
		step++;
	return step;
}

/* ns per probe of count distinct values base + (i * step mod range), and how
 * many of them the filter reported present. */
static double probe_ns(amq_probe probe, const amq_filter *f, int64_t base, uint64_t range,
		       uint64_t count, uint64_t *hits)
{
	uint64_t step = scatter_step(range), v = 0, found = 0;
	double t0 = now();
	for (uint64_t i = 0; i < count; i++) {
		found += probe(f, amq_hash_int(base + (int64_t)v, 0));
		v += step;
		v = v >= range ? v - range : v; /* a conditional move, not a branch */
	}
	double ns = (now() - t0) * 1e9 / (double)count;
	*hits = found;
	return ns;
}

/* Fills f with the values 0..n-1, then probes present values and
 * ABSENT_PROBES values from n up. */
static measurement fill_and_probe(amq_filter *f, uint64_t n, const amq_allocator *a)
{
	measurement m = {0};
	amq_error err;
	double t0 = now();
	for (int64_t v = 0; v < (int64_t)n; v++)
		m.failed_adds += amq_filter_add_to(f, amq_hash_int(v, 0), a, &err) != AMQ_OK;
	m.add_ns = (now() - t0) * 1e9 / (double)n;

	amq_probe probe = amq_filter_probe_for(f);
	uint64_t present = n < PRESENT_PROBES ? n : PRESENT_PROBES, hits;
	m.present_ns = probe_ns(probe, f, 0, n, present, &hits);
	m.false_negatives = present - hits;
	m.absent_ns = probe_ns(probe, f, (int64_t)n, ABSENT_PROBES, ABSENT_PROBES, &hits);
	m.fpr = (double)hits / ABSENT_PROBES;

	m.bits_per_item = (double)f->payload_size * 8.0 / (double)n;
	m.load = amq_cuckoo_load(f);
	m.fingerprint_bits = f->hashes;
	return m;
}

/* A layout's filter sized for n at fpr, filled and probed. */
static measurement measure(amq_layout layout, uint64_t n, double fpr)
{
	amq_filter f;
	amq_error err;
	if (amq_cuckoo_create(&f, layout, n, fpr, 0, A, &err) != AMQ_OK) {
		fprintf(stderr, "cuckoo_bench: %s\n", err.message);
		exit(1);
	}
	measurement m = fill_and_probe(&f, n, A);
	amq_filter_free(&f, A);
	return m;
}

/* Bits per item the layout would take with fractional fingerprints of
 * exactly log2(2b/p) bits at its target load; a semi-sorted bucket saves one
 * bit per slot, so 1/load less than b4. */
static double theory_bits(layout_index l, double fpr)
{
	double b = l == B2 ? 2 : l == B8 ? 8 : 4;
	return (log2(1.0 / fpr) + log2(2 * b) - (l == SEMISORTED)) /
	       amq_cuckoo_target_load(LAYOUTS[l]);
}

/* Bits per item with whole-bit fingerprints at the target load, before
 * spare buckets: bits per slot / load. */
static double whole_bit_bits(layout_index l, double fpr)
{
	uint32_t f = amq_cuckoo_fingerprint_bits(LAYOUTS[l], fpr);
	return (f - (l == SEMISORTED)) / amq_cuckoo_target_load(LAYOUTS[l]);
}

/* The medians of one (n, p) cell, and of semisorted's per-round ratios to b4. */
typedef struct cell {
	measurement med[NLAYOUTS];
	double ratio_add, ratio_present, ratio_absent;
} cell;

/* Runs every layout at n and fpr, round after round (so a noisy neighbour
 * slows them alike), and takes medians. */
static cell run_cell(uint64_t n, double fpr, int runs, uint64_t *errors)
{
	cell c;
	double add[NLAYOUTS][MAX_RUNS], present[NLAYOUTS][MAX_RUNS], absent[NLAYOUTS][MAX_RUNS];
	double r_add[MAX_RUNS], r_present[MAX_RUNS], r_absent[MAX_RUNS];
	for (int r = 0; r < runs; r++) {
		for (int l = 0; l < NLAYOUTS; l++) {
			measurement m = measure(LAYOUTS[l], n, fpr);
			add[l][r] = m.add_ns;
			present[l][r] = m.present_ns;
			absent[l][r] = m.absent_ns;
			c.med[l] = m; /* the sizes and the fpr are the same every round */
			if (m.failed_adds != 0 || m.false_negatives != 0) {
				fprintf(stderr,
					"cuckoo_bench: %s n=%llu p=%g: %llu failed adds, %llu "
					"false negatives\n",
					NAMES[l], (unsigned long long)n, fpr,
					(unsigned long long)m.failed_adds,
					(unsigned long long)m.false_negatives);
				++*errors;
			}
		}
		r_add[r] = add[SEMISORTED][r] / add[B4][r];
		r_present[r] = present[SEMISORTED][r] / present[B4][r];
		r_absent[r] = absent[SEMISORTED][r] / absent[B4][r];
	}
	for (int l = 0; l < NLAYOUTS; l++) {
		c.med[l].add_ns = median(add[l], runs);
		c.med[l].present_ns = median(present[l], runs);
		c.med[l].absent_ns = median(absent[l], runs);
	}
	c.ratio_add = median(r_add, runs);
	c.ratio_present = median(r_present, runs);
	c.ratio_absent = median(r_absent, runs);
	return c;
}

static void print_cell_rows(uint64_t n, double fpr, const cell *c)
{
	for (int l = 0; l < NLAYOUTS; l++) {
		const measurement *m = &c->med[l];
		double theory = theory_bits((layout_index)l, fpr);
		printf(
		    "| %.0e | %g | %s | %u | %.4f | %.2f | %.2f | %.2f | %+.1f%% | %.5f | %.1f | "
		    "%.1f | %.1f |\n",
		    (double)n, fpr, NAMES[l], m->fingerprint_bits, m->load, theory,
		    whole_bit_bits((layout_index)l, fpr), m->bits_per_item,
		    100.0 * (m->bits_per_item / theory - 1.0), m->fpr, m->add_ns, m->present_ns,
		    m->absent_ns);
	}
	fflush(stdout);
}

/* Prints m as bench/go/run.sh reads it: one line of name=value pairs. */
static void print_row(const char *name, uint64_t n, const measurement *m)
{
	printf("row name=%s n=%llu bytes=%.0f load=%.4f add_ns=%.2f present_ns=%.2f "
	       "absent_ns=%.2f fpr=%.5f failed_adds=%llu false_negatives=%llu\n",
	       name, (unsigned long long)n, m->bits_per_item * (double)n / 8.0, m->load, m->add_ns,
	       m->present_ns, m->absent_ns, m->fpr, (unsigned long long)m->failed_adds,
	       (unsigned long long)m->false_negatives);
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Blocks aligned to and rounded up to 2 MiB, given to transparent huge pages
 * (madvise), as the Go runtime backs its heap: against_go's "-thp" rows. */
static void *huge_alloc(void *ctx, size_t size)
{
	(void)ctx;
	size_t rounded = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p = aligned_alloc(HUGE_PAGE, rounded);
	if (p != NULL)
		madvise(p, rounded, MADV_HUGEPAGE);
	return p;
}

static void huge_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const amq_allocator huge_allocator = {.alloc = huge_alloc, .free = huge_free};

/* A b4 filter from allocator a, at p = 1% sized for n (buckets 0) or with
 * `buckets` buckets of `bits`-bit fingerprints, filled with n values, probed
 * and printed as name. */
static int go_row(const char *name, uint64_t n, uint64_t buckets, uint32_t bits,
		  const amq_allocator *a)
{
	amq_filter f;
	amq_error err;
	amq_status st =
	    buckets == 0
		? amq_cuckoo_create(&f, AMQ_LAYOUT_CLASSIC, n, 0.01, 0, a, &err)
		: amq_cuckoo_create_exact(&f, AMQ_LAYOUT_CLASSIC, buckets, bits, 0, a, &err);
	if (st != AMQ_OK) {
		fprintf(stderr, "cuckoo_bench: %s\n", err.message);
		return 1;
	}
	measurement m = fill_and_probe(&f, n, a);
	amq_filter_free(&f, a);
	print_row(name, n, &m);
	return 0;
}

/* One round of bench/go/run.sh at n: b4 at p = 1% sized as SQL sizes it (95%
 * load), then with the bucket count seiflotfy/cuckoofilter's NewFilter(n)
 * takes (n rounded up to a power of two, over 4), so at its load; each on 4
 * KiB pages and on huge pages; and last with Go's buckets and its 8-bit
 * fingerprints, so in the same bytes. */
static int against_go(uint64_t n)
{
	uint64_t pow2 = 1;
	while (pow2 < n)
		pow2 <<= 1;
	uint64_t go_buckets = pow2 >= 8 ? pow2 / 4 : 1;
	uint32_t bits = amq_cuckoo_fingerprint_bits(AMQ_LAYOUT_CLASSIC, 0.01);
	const amq_allocator *huge = &huge_allocator;
	return go_row("amq-b4", n, 0, 0, A) | go_row("amq-b4-thp", n, 0, 0, huge) |
	       go_row("amq-b4-go-load", n, go_buckets, bits, A) |
	       go_row("amq-b4-go-load-thp", n, go_buckets, bits, huge) |
	       go_row("amq-b4-go-bytes", n, go_buckets, 8, A);
}

int main(int argc, char **argv)
{
	uint64_t sizes[MAX_SIZES] = {1000000, 100000000};
	int nsizes = 2, runs = DEFAULT_RUNS, first = 1;
	if (argc == 3 && strcmp(argv[1], "--against-go") == 0) {
		double n = strtod(argv[2], NULL);
		if (!(n >= 1 && n <= 1e10)) {
			fprintf(stderr, "cuckoo_bench: n must be 1 to 1e10, got %s\n", argv[2]);
			return 2;
		}
		return against_go((uint64_t)n);
	}
	if (argc > 2 && strcmp(argv[1], "--runs") == 0) {
		runs = atoi(argv[2]);
		first = 3;
	}
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "cuckoo_bench: --runs must be 1 to %d\n", MAX_RUNS);
		return 2;
	}
	if (argc > first) {
		nsizes = 0;
		for (int i = first; i < argc && nsizes < MAX_SIZES; i++) {
			double n = strtod(argv[i], NULL);
			if (!(n >= 1 && n <= 1e10)) {
				fprintf(stderr, "cuckoo_bench: n must be 1 to 1e10, got %s\n",
					argv[i]);
				return 2;
			}
			sizes[nsizes++] = (uint64_t)n;
		}
	}

	printf("Each filter sized for capacity n and filled with n distinct int64 values; "
	       "%d present (or n) and %d absent values probed in scattered order through "
	       "amq_filter_probe_for; medians of %d rounds, the layouts taking turns in "
	       "each.\n\n",
	       PRESENT_PROBES, ABSENT_PROBES, runs);
	printf("| n | p | layout | f | load | theory bits/item | whole-bit f/load | bits/item | "
	       "vs theory | measured fpr | ns/add | ns/contains present | ns/contains absent "
	       "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	cell cells[MAX_SIZES][NFPRS];
	uint64_t errors = 0;
	for (int i = 0; i < nsizes; i++)
		for (size_t p = 0; p < NFPRS; p++) {
			cells[i][p] = run_cell(sizes[i], FPRS[p], runs, &errors);
			print_cell_rows(sizes[i], FPRS[p], &cells[i][p]);
		}

	printf("\nSemisorted against b4, measured in the same rounds (median of the per-round "
	       "ratios):\n\n| n | p | bits/item | ns/add | ns/contains present | ns/contains "
	       "absent |\n|---|---|---|---|---|---|\n");
	for (int i = 0; i < nsizes; i++)
		for (size_t p = 0; p < NFPRS; p++) {
			const cell *c = &cells[i][p];
			printf("| %.0e | %g | %.3fx | %.2fx | %.2fx | %.2fx |\n", (double)sizes[i],
			       FPRS[p], c->med[SEMISORTED].bits_per_item / c->med[B4].bits_per_item,
			       c->ratio_add, c->ratio_present, c->ratio_absent);
		}
	return errors == 0 ? 0 : 1;
}
