/*
 * test_fuse.c - the binary fuse filter's own edge cases, beyond what
 * test_variants.c checks of every row: probes against docs/FORMAT.md's
 * text (spec.h) at many sizes and both fingerprint widths, the measured
 * rate and bits per value, bytes that depend on the set alone (order,
 * duplicates, merged builders), construction seeds past the first, the
 * memory bound (in memory and after a spill), interrupts, the lowest fpr,
 * and damaged headers and payloads.
 */
#include "format/variant.h"
#include "helpers.h"

#include <math.h>
#include <stdio.h>

static const amq_allocator *const A = &amq_malloc_allocator;

static amq_kind fuse(void)
{
	return amq_kind_named("fuse");
}

/* The filter of keys[0..n) at fpr through a builder that never spills. */
static amq_status build_keys(const uint64_t *keys, size_t n, double fpr, const amq_allocator *a,
			     amq_filter *out, amq_error *err)
{
	amq_builder b;
	amq_status st = amq_builder_init(&b, fuse(), (amq_layout)0, fpr, 0, 0, a, err);
	for (size_t i = 0; st == AMQ_OK && i < n; i++)
		st = amq_builder_add(&b, keys[i], err);
	if (st == AMQ_OK)
		st = amq_builder_finish(&b, out, err);
	amq_builder_free(&b);
	return st;
}

static uint64_t *stream(uint64_t s, size_t n)
{
	uint64_t *keys = malloc((n + 1) * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		keys[i] = key(s, i);
	return keys;
}

/* Every key found; core, the batch probe and the spec agree on members and
 * on 100,000 other hashes; the rate is near 2^-c. */
static void test_spec(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 7, 30, 100, 1000, 9999, 100000};
	for (int w = 0; w < 2; w++) {
		double fpr = w == 0 ? 0.01 : 0.0001;
		uint32_t bits = w == 0 ? 8 : 16;
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t n = sizes[s];
			uint64_t *keys = stream(1, n);
			amq_filter f;
			amq_error err;
			CHECK(build_keys(keys, n, fpr, A, &f, &err) == AMQ_OK, "build %zu: %s", n,
			      err.message);
			CHECK(f.hashes == bits && f.items == n, "%zu: %u bits, %llu items", n,
			      f.hashes, (unsigned long long)f.items);
			CHECK(amq_filter_verify(&f, &err) == AMQ_OK, "%zu: verify: %s", n,
			      err.message);
			enum { OTHERS = 100000 };
			uint64_t *probes = stream(2, OTHERS);
			bool *many = malloc(OTHERS);
			amq_filter_contains_many(&f, probes, OTHERS, many);
			size_t missing = 0, disagree = 0, positives = 0;
			for (size_t i = 0; i < n; i++)
				missing += !amq_filter_contains(&f, keys[i]) ||
					   !spec_fuse_contains(f.payload, f.cells, f.hashes,
							       f.items, keys[i]);
			for (size_t i = 0; i < OTHERS; i++) {
				bool spec = spec_fuse_contains(f.payload, f.cells, f.hashes,
							       f.items, probes[i]);
				disagree +=
				    spec != amq_filter_contains(&f, probes[i]) || spec != many[i];
				positives += spec;
			}
			CHECK(missing == 0, "%zu at %u bits: %zu members missing", n, bits,
			      missing);
			CHECK(disagree == 0, "%zu at %u bits: core and spec disagree on %zu", n,
			      bits, disagree);
			double want = ldexp(1.0, -(int)bits) * OTHERS;
			CHECK(n < 10000 || fabs((double)positives - want) < 4 * sqrt(want) + 3,
			      "%zu at %u bits: %zu false positives, expected %.1f", n, bits,
			      positives, want);
			CHECK(n > 0 || positives == 0, "the empty filter holds nothing");
			free(keys);
			free(probes);
			free(many);
			amq_filter_free(&f, A);
		}
	}
}

/* At a million values, 8 bits: within 3% of the paper's 9.04 bits a value. */
static void test_bits_per_value(void)
{
	size_t n = 1000000;
	uint64_t *keys = stream(3, n);
	amq_filter f;
	amq_error err;
	CHECK(build_keys(keys, n, 0.01, A, &f, &err) == AMQ_OK, "build: %s", err.message);
	double bits = 8.0 * (double)f.payload_size / (double)n;
	CHECK(fabs(bits - 9.04) < 9.04 * 0.03, "%.3f bits a value", bits);
	free(keys);
	amq_filter_free(&f, A);
}

/* The bytes depend on the set alone: shuffled, repeated, or split over two
 * builders that merge (a parallel plan). */
static void test_set_alone(void)
{
	size_t n = 20000;
	uint64_t *keys = stream(4, n);
	amq_filter a, b, c;
	amq_error err;
	CHECK(build_keys(keys, n, 0.01, A, &a, &err) == AMQ_OK, "build: %s", err.message);
	uint64_t *mixed = malloc(2 * n * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++) {
		mixed[i] = keys[(i * 7919) % n];
		mixed[n + i] = keys[n - 1 - i];
	}
	CHECK(build_keys(mixed, 2 * n, 0.01, A, &b, &err) == AMQ_OK, "build: %s", err.message);
	CHECK(a.size == b.size && memcmp(a.bytes, b.bytes, a.size) == 0,
	      "shuffled and repeated: the same bytes");
	amq_builder p, q;
	CHECK(amq_builder_init(&p, fuse(), (amq_layout)0, 0.01, 0, 0, A, &err) == AMQ_OK &&
		  amq_builder_init(&q, fuse(), (amq_layout)0, 0.01, 0, 0, A, &err) == AMQ_OK,
	      "init");
	for (size_t i = 0; i < n; i++)
		amq_builder_add(i % 3 ? &p : &q, mixed[i], &err);
	CHECK(amq_builder_merge(&p, &q, &err) == AMQ_OK &&
		  amq_builder_finish(&p, &c, &err) == AMQ_OK,
	      "merged: %s", err.message);
	CHECK(c.size == a.size && memcmp(c.bytes, a.bytes, a.size) == 0, "merged: the same bytes");
	amq_builder_free(&p);
	amq_builder_free(&q);
	free(keys);
	free(mixed);
	free_filters(&a, &b, &c);
}

/* Small sets often need a second construction seed: every size up to 400
 * builds, some with a seed past 0, each found whole by the spec. */
static void test_seeds(void)
{
	size_t retried = 0;
	for (size_t n = 1; n <= 400; n++) {
		uint64_t *keys = stream(100 + n, n);
		amq_filter f;
		amq_error err;
		CHECK(build_keys(keys, n, 0.01, A, &f, &err) == AMQ_OK, "%zu: %s", n, err.message);
		uint32_t seed = (uint32_t)f.payload[4] | (uint32_t)f.payload[5] << 8;
		retried += seed > 0;
		size_t missing = 0;
		for (size_t i = 0; i < n; i++)
			missing +=
			    !spec_fuse_contains(f.payload, f.cells, f.hashes, f.items, keys[i]);
		CHECK(missing == 0, "%zu values, construction seed %u: %zu missing", n, seed,
		      missing);
		free(keys);
		amq_filter_free(&f, A);
	}
	CHECK(retried > 0, "no size up to 400 needed a second construction seed");
}

/* Memory files for a builder that spills. */
struct file {
	uint8_t *data;
	size_t len;
};

static void *file_create(void *ctx, amq_error *err)
{
	(void)ctx;
	(void)err;
	return calloc(1, sizeof(struct file));
}

static amq_status file_write(void *ctx, void *file, const void *buf, size_t len, amq_error *err)
{
	(void)ctx;
	(void)err;
	struct file *f = file;
	f->data = realloc(f->data, f->len + len);
	memcpy(f->data + f->len, buf, len);
	f->len += len;
	return AMQ_OK;
}

static amq_status file_read(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			    amq_error *err)
{
	(void)ctx;
	(void)err;
	memcpy(buf, ((struct file *)file)->data + offset, len);
	return AMQ_OK;
}

static void file_close(void *ctx, void *file)
{
	(void)ctx;
	free(((struct file *)file)->data);
	free(file);
}

/* Memory files for a builder that could spill, counted: a fuse build never
 * writes one. */
static long files_made;

static void *counted_create(void *ctx, amq_error *err)
{
	files_made++;
	return file_create(ctx, err);
}

/* A build within the working memory is made; past it, refused before any
 * peeling with the memory it needs: at the end (n values whose set never
 * filled), or while the values are read, as soon as the build of those held
 * cannot fit ("more than"), never spilling a run; every block freed. */
static void test_memory(void)
{
	amq_spill spill = {
	    .create = counted_create, .write = file_write, .read = file_read, .close = file_close};
	const amq_variant *row = amq_variant_first_of(fuse());
	uint64_t need = row->build_memory(5000);
	static const char *const refused = "a binary fuse filter of %s distinct values needs ";
	const struct {
		size_t n, memory;
		const char *count; /* refused with "of <count> distinct values", or NULL: built */
	} cases[] = {
	    {5000, (size_t)need - 1, "5000"},
	    {100000, 1 << 16, "more than 4096"},
	    {5000, (size_t)need, NULL},
	    {10000, 1 << 20, NULL},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct probe p;
		amq_allocator a = probe_allocator(&p, 0);
		spill.memory = cases[c].memory;
		a.spill = &spill;
		files_made = 0;
		uint64_t *keys = stream(5, cases[c].n);
		amq_filter f;
		amq_error err;
		amq_status st = build_keys(keys, cases[c].n, 0.01, &a, &f, &err);
		if (cases[c].count == NULL) {
			CHECK(st == AMQ_OK, "%zu values in %zu bytes: %s", cases[c].n,
			      cases[c].memory, err.message);
			if (st == AMQ_OK)
				amq_filter_free(&f, &a);
		} else {
			char want[200];
			snprintf(want, sizeof(want), refused, cases[c].count);
			CHECK(st == AMQ_TOO_LARGE &&
				  strncmp(err.message, want, strlen(want)) == 0 &&
				  strstr(err.message, "MB of memory to build, more than the") &&
				  strstr(err.hint, "bloom_agg") != NULL,
			      "%zu values in %zu bytes: %s: %s", cases[c].n, cases[c].memory,
			      err.message, err.hint);
		}
		CHECK(files_made == 0, "%zu values in %zu bytes: %ld runs spilled", cases[c].n,
		      cases[c].memory, files_made);
		CHECK(p.live == 0, "%ld blocks left", p.live);
		free(keys);
	}
}

/* An interrupt at any poll of a large build stops it, every block freed. */
static void test_interrupt(void)
{
	size_t n = 600000;
	uint64_t *keys = stream(6, n);
	for (long stop = 1; stop < 40; stop += 3) {
		struct probe p;
		amq_allocator a = probe_allocator(&p, stop);
		amq_filter f;
		amq_error err;
		amq_status st = build_keys(keys, n, 0.01, &a, &f, &err);
		if (st == AMQ_OK) {
			amq_filter_free(&f, &a);
			break;
		}
		CHECK(st == AMQ_INTERRUPTED, "stop at poll %ld: %s", stop, err.message);
		CHECK(p.live == 0, "stop at poll %ld: %ld blocks left", stop, p.live);
	}
	free(keys);
}

/* Below 16 bits' rate: refused when the builder is made, naming the kinds
 * that go lower. */
static void test_lowest_fpr(void)
{
	amq_builder b;
	amq_error err;
	CHECK(amq_builder_init(&b, fuse(), (amq_layout)0, 1e-5, 0, 0, A, &err) ==
		      AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message, "fpr 1e-05 is below the lowest rate of a binary fuse "
				      "filter, 1.53e-05 (16-bit fingerprints)") == 0 &&
		  strstr(err.hint, "bloom_agg") && strstr(err.hint, "cuckoo_agg"),
	      "fpr 1e-5: %s: %s", err.message, err.hint);
	CHECK(amq_builder_init(&b, fuse(), (amq_layout)0, 1.0 / 65536, 0, 0, A, &err) == AMQ_OK,
	      "fpr 2^-16: %s", err.message);
	amq_builder_free(&b);
}

/* Damaged headers and payloads are refused with what is wrong. */
static void test_damaged(void)
{
	uint64_t *keys = stream(7, 500);
	amq_filter good, f, empty;
	amq_error err;
	CHECK(build_keys(keys, 500, 0.01, A, &good, &err) == AMQ_OK, "build");
	CHECK(build_keys(keys, 0, 0.01, A, &empty, &err) == AMQ_OK, "build empty");
	static const struct {
		int what;
		const char *message;
	} cases[] = {
	    {0, "12-bit fingerprints where a binary fuse filter has 8 or 16"},
	    {1, "segment length 3 is not a power of two up to 262144"},
	    {2, "segment length 524288 is not a power of two up to 262144"},
	    {3, NULL},
	    {4, "an empty binary fuse filter with fingerprints set"},
	    {5, "an empty binary fuse filter with construction seed 2"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const amq_filter *from = cases[c].what >= 4 ? &empty : &good;
		uint8_t *copy = malloc(from->size);
		memcpy(copy, from->bytes, from->size);
		CHECK(amq_filter_open(&f, copy, from->size, &err) == AMQ_OK, "open copy");
		switch (cases[c].what) {
		case 0:
			f.hashes = 12;
			break;
		case 1:
			f.payload[0] = 3;
			f.payload[1] = f.payload[2] = 0;
			break;
		case 2:
			f.payload[0] = f.payload[1] = 0;
			f.payload[2] = 8;
			break;
		case 3:
			f.items = f.cells + 1;
			break;
		case 4:
			f.payload[8 + 5] = 1;
			break;
		case 5:
			f.payload[4] = 2;
			break;
		}
		amq_filter_seal(&f);
		char want[96];
		snprintf(want, sizeof(want), "%llu items in %llu slots",
			 (unsigned long long)f.items, (unsigned long long)f.cells);
		amq_filter g;
		amq_status st = amq_filter_check(&g, copy, from->size, &err);
		CHECK(st == AMQ_INVALID_FILTER &&
			  strcmp(err.message, cases[c].message ? cases[c].message : want) == 0,
		      "case %d: %s", cases[c].what, err.message);
		free(copy);
	}
	free(keys);
	free_filters(&good, &empty);
}

int main(void)
{
	test_spec();
	test_bits_per_value();
	test_set_alone();
	test_seeds();
	test_memory();
	test_interrupt();
	test_lowest_fpr();
	test_damaged();
	return check_summary();
}
