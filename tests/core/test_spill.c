/*
 * test_spill.c - a collecting builder past its working memory writes sorted
 * runs to its allocator's temporary files and gives the same bytes as one
 * that keeps everything in memory: for every variant, serial and merged
 * through parallel states, whatever the memory; every file is closed after
 * a finish, an error or an interrupt; and the aggregate's order for a scalable chain is still
 * 0.3.0's.
 */
#include "amq.h"
#include "check.h"
#include "helpers.h"
#include "format/variant.h"

#include <stdlib.h>
#include <string.h>

/* Temporary "files" in memory: the spill of these tests counts the open
 * ones and fails its fail_at-th create or write (0: never), beside the probe
 * allocator (helpers.h: live blocks, a stop at its stop_at-th poll). */
struct mem_file {
	uint8_t *data;
	size_t len, cap;
};

/* The most files handed over in one test and not yet swept. */
#define MAX_HANDED 4096

struct spill_probe {
	struct probe base; /* first: the allocator's ctx is either */
	long files, calls, fail_at, created;
	amq_spill spill;
	/* Files handed over, which the "engine" removes at its end (sweep)
	 * unless taken over. */
	struct mem_file *handed[MAX_HANDED];
	bool taken[MAX_HANDED];
	int nhanded;
};

static bool fails(struct spill_probe *p, amq_error *err)
{
	if (p->fail_at == 0 || ++p->calls < p->fail_at)
		return false;
	err->status = AMQ_SPILL_FAILED;
	snprintf(err->message, sizeof(err->message), "could not write a temporary file: test");
	err->hint[0] = '\0';
	return true;
}

static void *file_create(void *ctx, amq_error *err)
{
	struct spill_probe *p = ctx;
	if (fails(p, err))
		return NULL;
	struct mem_file *f = calloc(1, sizeof(*f));
	p->files++;
	p->created++;
	return f;
}

static amq_status file_write(void *ctx, void *file, const void *buf, size_t len, amq_error *err)
{
	struct mem_file *f = file;
	if (fails(ctx, err))
		return AMQ_SPILL_FAILED;
	if (f->len + len > f->cap) {
		f->cap = (f->len + len) * 2;
		f->data = realloc(f->data, f->cap);
	}
	memcpy(f->data + f->len, buf, len);
	f->len += len;
	return AMQ_OK;
}

static amq_status file_read(void *ctx, void *file, uint64_t offset, void *buf, size_t len,
			    amq_error *err)
{
	struct mem_file *f = file;
	(void)ctx;
	if (offset + len > f->len) {
		err->status = AMQ_SPILL_FAILED;
		snprintf(err->message, sizeof(err->message), "read past the end");
		return AMQ_SPILL_FAILED;
	}
	memcpy(buf, f->data + offset, len);
	return AMQ_OK;
}

static void file_close(void *ctx, void *file)
{
	struct spill_probe *p = ctx;
	struct mem_file *f = file;
	p->files--;
	free(f->data);
	free(f);
}

/* hand_over's token: "TOKEN", then the file's address. */
static amq_status file_hand_over(void *ctx, void *file, uint8_t token[AMQ_SPILL_TOKEN],
				 amq_error *err)
{
	struct spill_probe *p = ctx;
	struct mem_file *f = file;
	p->taken[p->nhanded] = false;
	p->handed[p->nhanded++] = f;
	memset(token, 0, AMQ_SPILL_TOKEN);
	memcpy(token, "TOKEN", 5);
	memcpy(token + 8, &f, sizeof(f));
	return fails(p, err) ? AMQ_SPILL_FAILED : AMQ_OK;
}

static void *file_take_over(void *ctx, const uint8_t token[AMQ_SPILL_TOKEN], amq_error *err)
{
	struct spill_probe *p = ctx;
	struct mem_file *f;
	memcpy(&f, token + 8, sizeof(f));
	for (int i = 0; memcmp(token, "TOKEN", 5) == 0 && i < p->nhanded; i++) {
		if (p->handed[i] == f && !p->taken[i]) {
			p->taken[i] = true;
			return f;
		}
	}
	amq_fail(err, AMQ_SPILL_FAILED, "", "no such file handed over");
	return NULL;
}

/* The end of the "query": files handed over and never taken go. */
static void sweep(struct spill_probe *p)
{
	for (int i = 0; i < p->nhanded; i++)
		if (!p->taken[i])
			file_close(p, p->handed[i]);
	p->nhanded = 0;
}

/* An allocator whose builders spill past memory bytes (0: never spill). */
static amq_allocator allocator(struct spill_probe *p, size_t memory)
{
	*p = (struct spill_probe){0};
	amq_allocator a = probe_allocator(&p->base, 0);
	p->spill = (amq_spill){.memory = memory,
			       .ctx = p,
			       .create = file_create,
			       .write = file_write,
			       .read = file_read,
			       .close = file_close,
			       .hand_over = file_hand_over,
			       .take_over = file_take_over};
	a.spill = memory ? &p->spill : NULL;
	return a;
}

/* The hashes of the test's rows: `rows` values, every fifth repeated. */
static uint64_t row_hash(size_t i)
{
	uint64_t x = (uint64_t)i;
	if (i % 5 == 4)
		x -= 3;
	return amq_hash_int((int64_t)(x * 2654435761u % 1000003u), 0);
}

/* The filter a builder of v's kind and layout gives over rows[from..to) of
 * a parts-way split (each part one builder, serialized and merged into the
 * first when parts > 1), with allocator a; sealed bytes in *out (malloc). */
static amq_status build(const amq_variant *v, uint64_t capacity, size_t rows, int parts,
			const amq_allocator *a, uint8_t **out, size_t *size, amq_error *err)
{
	amq_builder all;
	amq_status st = amq_builder_init(&all, v->kind, v->layout, 0.01, capacity, 0, a, err);
	for (int part = 0; st == AMQ_OK && part < parts; part++) {
		amq_builder b;
		st = amq_builder_init(&b, v->kind, v->layout, 0.01, capacity, 0, a, err);
		for (size_t i = part; st == AMQ_OK && i < rows; i += (size_t)parts)
			st = amq_builder_add(&b, row_hash(i), err);
		amq_builder_note_family(&b, AMQ_FAMILY_NUMBER);
		if (st == AMQ_OK && parts > 1) {
			uint8_t *state;
			size_t len;
			amq_builder other;
			st = amq_builder_serialize(&b, &state, &len, err);
			if (st == AMQ_OK) {
				st = amq_builder_deserialize(&other, state, len, a, err);
				a->free(a->ctx, state);
				if (st == AMQ_OK) {
					st = amq_builder_merge(&all, &other, err);
					amq_builder_free(&other);
				}
			}
		} else if (st == AMQ_OK) {
			st = amq_builder_merge(&all, &b, err);
		}
		amq_builder_free(&b);
	}
	amq_filter f;
	if (st == AMQ_OK)
		st = amq_builder_finish(&all, &f, err);
	amq_builder_free(&all);
	if (a->spill != NULL)
		sweep(a->spill->ctx);
	if (st != AMQ_OK)
		return st;
	*size = f.size;
	*out = malloc(f.size);
	memcpy(*out, f.bytes, f.size);
	amq_filter_free(&f, a);
	return AMQ_OK;
}

/* Every variant, collecting: the same bytes in memory and spilled at the
 * least memory, serial and in 3 parts, every file closed and block freed. */
static void test_same_bytes(void)
{
	const size_t rows = 120000;
	for (size_t i = 0; i < amq_variant_count(); i++) {
		const amq_variant *v = amq_variant_at(i);
		for (int c = 0; c < 2; c++) {
			uint64_t capacity = c ? 150000 : 0;
			if (capacity && v->order_free)
				continue; /* streams: never collects */
			struct spill_probe plain, tiny;
			amq_allocator pa = allocator(&plain, 0);
			uint8_t *want = NULL;
			size_t want_size = 0;
			amq_error err;
			CHECK(build(v, capacity, rows, 1, &pa, &want, &want_size, &err) == AMQ_OK,
			      "%s %s: in memory: %s", v->kind_name, v->layout_name, err.message);
			for (int parts = 1; parts <= 3; parts += 2) {
				amq_allocator ta = allocator(&tiny, AMQ_SPILL_MIN_MEMORY);
				uint8_t *got = NULL;
				size_t got_size = 0;
				amq_status st =
				    build(v, capacity, rows, parts, &ta, &got, &got_size, &err);
				/* A build from all the hashes in memory at once (binary
				 * fuse) never spills: refused while it reads, once its
				 * values cannot be built in the working memory. */
				if (v->build_memory != NULL) {
					CHECK(st == AMQ_TOO_LARGE &&
						  strstr(err.hint, "bloom_agg") &&
						  tiny.created == 0,
					      "%s %s: refused, %ld runs written: %s", v->kind_name,
					      v->layout_name, tiny.created, err.message);
				} else {
					CHECK(tiny.created > 3, "%s %s: %ld runs written",
					      v->kind_name, v->layout_name, tiny.created);
					CHECK(st == AMQ_OK, "%s %s: spilled: %s", v->kind_name,
					      v->layout_name, err.message);
					CHECK(got_size == want_size && want != NULL &&
						  got != NULL && memcmp(got, want, want_size) == 0,
					      "%s %s capacity %llu, %d parts: same bytes spilled",
					      v->kind_name, v->layout_name,
					      (unsigned long long)capacity, parts);
				}
				CHECK(tiny.files == 0 && tiny.base.live == 0,
				      "%s %s: %ld files open, %ld blocks live", v->kind_name,
				      v->layout_name, tiny.files, tiny.base.live);
				free(got);
			}
			free(want);
		}
	}
}

/* A worker whose memory differs from the leader's (a run copied, not
 * moved, between two spills) and a leader that keeps everything. */
static void test_mixed_spills(void)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC);
	struct spill_probe plain, worker, leader;
	amq_allocator pa = allocator(&plain, 0);
	amq_allocator wa = allocator(&worker, AMQ_SPILL_MIN_MEMORY);
	amq_allocator la = allocator(&leader, 1 << 20);
	amq_error err;
	uint8_t *want = NULL;
	size_t want_size = 0;
	CHECK(build(v, 0, 50000, 1, &pa, &want, &want_size, &err) == AMQ_OK, "plain: %s",
	      err.message);
	amq_builder b, w;
	amq_builder_init(&b, v->kind, v->layout, 0.01, 0, 0, &la, &err);
	amq_builder_init(&w, v->kind, v->layout, 0.01, 0, 0, &wa, &err);
	for (size_t i = 0; i < 50000; i++)
		amq_builder_add(&w, row_hash(i), &err);
	amq_builder_note_family(&w, AMQ_FAMILY_NUMBER);
	CHECK(w.nspilled > 0, "the worker spilled");
	CHECK(amq_builder_merge(&b, &w, &err) == AMQ_OK, "merge: %s", err.message);
	amq_builder_free(&w);
	CHECK(worker.files == 0, "the worker's runs copied and closed: %ld open", worker.files);
	amq_filter f;
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s", err.message);
	CHECK(f.size == want_size && memcmp(f.bytes, want, want_size) == 0,
	      "same bytes through a copied run");
	amq_filter_free(&f, &la);
	amq_builder_free(&b);
	CHECK(leader.files == 0 && leader.base.live == 0 && worker.base.live == 0,
	      "all closed and freed");
	free(want);
}

/* A failing create or write at each point, and an interrupt at each poll:
 * the status comes back, and once the builder is freed no file is open and
 * no block is live. */
static void test_failures(void)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED);
	for (long at = 1; at <= 60; at += 7) {
		for (int interrupt = 0; interrupt < 2; interrupt++) {
			struct spill_probe p;
			amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
			if (interrupt)
				p.base.stop_at = at;
			else
				p.fail_at = at;
			uint8_t *got = NULL;
			size_t size;
			amq_error err;
			amq_status st = build(v, 0, 300000, 2, &a, &got, &size, &err);
			CHECK(st == (interrupt ? AMQ_INTERRUPTED : AMQ_SPILL_FAILED) ||
				  (interrupt && st == AMQ_OK),
			      "%s at %ld: status %d (%s)", interrupt ? "interrupt" : "failure", at,
			      (int)st, err.message);
			CHECK(p.files == 0 && p.base.live == 0,
			      "%s at %ld: %ld files open, %ld blocks live",
			      interrupt ? "interrupt" : "failure", at, p.files, p.base.live);
			free(got);
		}
	}
}

/* Builders that spill many runs merge them 8 at a time and never hold more
 * than AMQ_SPILL_RUNS; a counting builder's runs keep every row. */
static void test_many_runs(void)
{
	struct spill_probe p;
	amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
	amq_builder b;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_COUNTING, 0.01, 0, 0, &a, &err);
	long most = 0;
	for (size_t i = 0; i < 400000; i++) {
		amq_builder_add(&b, amq_hash_int((int64_t)(i % 1000), 0), &err);
		most = p.files > most ? p.files : most;
	}
	CHECK(most <= AMQ_SPILL_RUNS && b.spilled_runs > AMQ_SPILL_RUNS,
	      "at most %d runs open (%ld), %llu written", AMQ_SPILL_RUNS, most,
	      (unsigned long long)b.spilled_runs);
	amq_filter f;
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s", err.message);
	uint64_t frequency = 0;
	amq_filter_frequency(&f, amq_hash_int(7, 0), &frequency, &err);
	CHECK(frequency >= 400, "a value of 400 rows counts at least 400: %llu",
	      (unsigned long long)frequency);
	CHECK(f.items == 400000, "every row an add: %llu", (unsigned long long)f.items);
	amq_filter_free(&f, &a);
	amq_builder_free(&b);
	CHECK(p.files == 0 && p.base.live == 0, "closed and freed");
}

/* The 0.3.0 fixtures' scalable chain (bloom_agg over 1..200 and 'k1'..'k50'):
 * the order an aggregate adds a chain's hashes in is still 0.3.0's, spilled
 * or not. */
static void test_scalable_order(void)
{
	FILE *in = fopen("tests/fixtures/amq-0.3.0.tsv", "r");
	CHECK(in != NULL, "tests/fixtures/amq-0.3.0.tsv opens (run from the repository root)");
	if (in == NULL)
		return;
	static char line[65536];
	while (fgets(line, sizeof(line), in) != NULL) {
		char *name = strtok(line, "\t");
		strtok(NULL, "\t");
		char *hex = strtok(NULL, "\t\n");
		if (name == NULL || hex == NULL || strcmp(name, "bloom scalable") != 0)
			continue;
		size_t size = strlen(hex) / 2;
		uint8_t *old = malloc(size);
		for (size_t i = 0; i < size; i++)
			sscanf(hex + 2 * i, "%2hhx", &old[i]);
		amq_builder b;
		amq_error err;
		amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_SCALABLE, 0.01, 0, 0,
				 &amq_malloc_allocator, &err);
		for (int64_t v = 1; v <= 200; v++)
			amq_builder_add(&b, amq_hash_int(v, 0), &err);
		for (int v = 1; v <= 50; v++) {
			char text[8];
			int n = snprintf(text, sizeof(text), "k%d", v);
			amq_builder_add(&b, amq_hash_text(text, (size_t)n, 0), &err);
		}
		amq_filter f;
		CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s", err.message);
		CHECK(f.size == size && memcmp(f.bytes + AMQ_HEADER_BYTES, old + AMQ_HEADER_BYTES,
					       size - AMQ_HEADER_BYTES) == 0,
		      "the chain's payload is 0.3.0's");
		amq_filter_free(&f, &amq_malloc_allocator);
		amq_builder_free(&b);
		free(old);
		fclose(in);
		return;
	}
	CHECK(false, "the fixtures hold a scalable chain");
	fclose(in);
}

/* A worker's state past its limit hands its keys over in files, in memory
 * or spilled, and the leader finishes the same bytes; a state within it
 * carries its keys itself. */
static void test_state_limit(void)
{
	const amq_variant *v = amq_variant_find(AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC);
	for (int spill = 0; spill < 2; spill++) {
		for (size_t rows = 15000; rows <= 60000; rows += 45000) {
			struct spill_probe plain, p;
			amq_allocator pa = allocator(&plain, 0);
			amq_allocator a = allocator(&p, spill ? AMQ_SPILL_MIN_MEMORY : 1 << 24);
			amq_error err;
			uint8_t *want = NULL, *state = NULL;
			size_t want_size = 0, len = 0;
			build(v, 0, rows, 1, &pa, &want, &want_size, &err);
			amq_builder b, leader;
			amq_builder_init(&b, v->kind, v->layout, 0.01, 0, 0, &a, &err);
			amq_builder_limit_state(&b, 100000);
			for (size_t i = 0; i < rows; i++)
				amq_builder_add(&b, row_hash(i), &err);
			amq_builder_note_family(&b, AMQ_FAMILY_NUMBER);
			amq_status st = amq_builder_serialize(&b, &state, &len, &err);
			/* 15000 distinct: about 60 KB of Rice code, within the limit. */
			bool inline_keys = rows == 15000 && !spill;
			CHECK(st == AMQ_OK &&
				  (inline_keys ? len > 50000 && len <= 100000 : len < 48 + 41 * 56),
			      "spill %d, %zu rows: a state of %zu bytes (%s)", spill, rows, len,
			      err.message);
			CHECK(inline_keys ||
				  (amq_builder_finish(&b, NULL, &err) == AMQ_INVALID_ARGUMENT &&
				   strcmp(err.message, "a filter aggregate state whose "
						       "runs were handed over is used "
						       "again") == 0),
			      "spill %d, %zu rows: a builder handed over is not finished", spill,
			      rows);
			amq_builder_free(&b);
			amq_filter f = {0};
			st = amq_builder_deserialize(&leader, state, len, &a, &err);
			if (st == AMQ_OK)
				st = amq_builder_finish(&leader, &f, &err);
			CHECK(st == AMQ_OK && f.size == want_size &&
				  memcmp(f.bytes, want, want_size) == 0,
			      "spill %d, %zu rows: the leader's bytes are the serial build's: %s",
			      spill, rows, err.message);
			amq_filter_free(&f, &a);
			amq_builder_free(&leader);
			a.free(a.ctx, state);
			sweep(&p);
			free(want);
			CHECK(p.files == 0 && p.base.live == 0, "closed and freed");
		}
	}
}

/* hand_over that fails at its second call (the count in handed_calls). */
static int handed_calls;
static amq_status second_hand_over_fails(void *ctx, void *file, uint8_t token[AMQ_SPILL_TOKEN],
					 amq_error *err)
{
	amq_status st = file_hand_over(ctx, file, token, err);
	if (st == AMQ_OK && ++handed_calls == 2)
		return amq_fail(err, AMQ_SPILL_FAILED, "", "could not hand over: test");
	return st;
}

/* A spilled state needs a spill that hands files over, a state of runs one
 * that takes them; damaged runs are refused; a hand over that fails midway
 * leaves the runs after it closed; nothing is left open. */
static void test_handed_states(void)
{
	struct spill_probe p;
	amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
	amq_error err;
	amq_builder b, other;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, &a, &err);
	for (size_t i = 0; i < 20000; i++)
		amq_builder_add(&b, row_hash(i), &err);
	p.spill.hand_over = NULL;
	uint8_t *state = NULL;
	size_t len = 0;
	CHECK(amq_builder_serialize(&b, &state, &len, &err) == AMQ_SPILL_FAILED &&
		  strcmp(err.message, "cannot pass a filter aggregate state of 20000 values to "
				      "another process: this engine's temporary files stay in "
				      "theirs") == 0,
	      "no hand over: %s", err.message);
	p.spill.hand_over = file_hand_over;
	CHECK(amq_builder_serialize(&b, &state, &len, &err) == AMQ_OK && state[41] > 0 &&
		  len == 48 + (size_t)state[41] * 56,
	      "%d runs handed over in %zu bytes", state[41], len);
	CHECK(amq_builder_serialize(&b, &state, &len, &err) == AMQ_INVALID_ARGUMENT,
	      "serialized once");
	amq_builder_free(&b);
	p.spill.take_over = NULL;
	CHECK(amq_builder_deserialize(&other, state, len, &a, &err) == AMQ_INVALID_ARGUMENT &&
		  strcmp(err.message, "invalid filter aggregate state: runs handed over to an "
				      "engine that cannot take them") == 0,
	      "no take over: %s", err.message);
	p.spill.take_over = file_take_over;
	uint8_t *copy = malloc(len);
	const struct {
		int at;
		uint8_t value;
		amq_status want;
		const char *message;
	} damage[] = {
	    {41, 41, AMQ_INVALID_ARGUMENT,
	     "invalid filter aggregate state: runs do not match their length"},
	    {41, 1, AMQ_INVALID_ARGUMENT,
	     "invalid filter aggregate state: runs do not match their length"},
	    {56, 'X', AMQ_SPILL_FAILED, "no such file handed over"},
	    {7, 1, AMQ_INVALID_ARGUMENT,
	     "invalid filter aggregate state: mode does not match parameters"},
	};
	for (size_t d = 0; d < sizeof(damage) / sizeof(damage[0]); d++) {
		memcpy(copy, state, len);
		copy[damage[d].at] = damage[d].value;
		amq_status st = amq_builder_deserialize(&other, copy, len, &a, &err);
		CHECK(st == damage[d].want && strcmp(err.message, damage[d].message) == 0,
		      "byte %d set to %d: %s", damage[d].at, damage[d].value, err.message);
	}
	free(copy);
	a.free(a.ctx, state);
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, &a, &err);
	for (size_t i = 0; i < 20000; i++)
		amq_builder_add(&b, row_hash(i), &err);
	p.spill.hand_over = second_hand_over_fails;
	handed_calls = 0;
	CHECK(b.nspilled >= 3 &&
		  amq_builder_serialize(&b, &state, &len, &err) == AMQ_SPILL_FAILED &&
		  strcmp(err.message, "could not hand over: test") == 0,
	      "a hand over failing at the second of %d runs: %s", b.nspilled, err.message);
	p.spill.hand_over = file_hand_over;
	amq_builder_free(&b);
	sweep(&p);
	CHECK(p.files == 0 && p.base.live == 0, "%ld files open, %ld blocks live", p.files,
	      p.base.live);
}

/* A spilling builder whose filter would pass the 1 GiB limit fails while it
 * reads, by the estimate from its runs' smallest keys, not at its finish: a
 * blocked filter at fpr 1e-15 cannot hold 1.5 million values (test_builder.c
 * fails it in memory; test_state_limit shows a state that fits passing). */
static void test_too_large_spilled(void)
{
	struct spill_probe p;
	amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
	amq_builder b;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 1e-15, 0, 0, &a, &err);
	b.room_from = 100000;
	amq_status st = AMQ_OK;
	uint64_t rows = 0;
	while (st == AMQ_OK && rows < 4000000)
		st = amq_builder_add(&b, amq_hash_int((int64_t)rows++, 0), &err);
	CHECK(st == AMQ_TOO_LARGE && rows < 1500000 &&
		  strstr(err.message,
			 " distinct values and more: a blocked bloom filter of them at "
			 "fpr 1e-15 would pass the 1 GiB limit") != NULL,
	      "failed after %llu rows: %s", (unsigned long long)rows, err.message);
	amq_builder_free(&b);
	CHECK(p.files == 0 && p.base.live == 0, "closed and freed");
}

/* A leader that decodes a large state (a worker's with more memory) straight
 * into a run refuses a state cut short with the reader's error; a flipped
 * byte is an error or another valid state (the state has no checksum: a
 * flipped low bit of a gap is another set of hashes). Either way no file
 * and no block is kept. */
static void test_damaged_state(void)
{
	struct spill_probe p, worker;
	amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
	amq_allocator wa = allocator(&worker, 1 << 24);
	amq_builder b;
	amq_error err;
	amq_builder_init(&b, AMQ_KIND_BLOOM, AMQ_LAYOUT_BLOCKED, 0.01, 0, 0, &wa, &err);
	for (size_t i = 0; i < 20000; i++)
		amq_builder_add(&b, row_hash(i), &err);
	uint8_t *state;
	size_t len;
	CHECK(amq_builder_serialize(&b, &state, &len, &err) == AMQ_OK, "serialize: %s",
	      err.message);
	amq_builder_free(&b);
	long refused = 0, tried = 0;
	for (size_t at = 48; at < len; at += 97) {
		for (int cut = 0; cut < 2; cut++) {
			uint8_t *copy = malloc(len);
			memcpy(copy, state, len);
			if (!cut)
				copy[at] ^= 0x5a;
			amq_builder other;
			amq_status st =
			    amq_builder_deserialize(&other, copy, cut ? at : len, &a, &err);
			bool invalid =
			    st == AMQ_INVALID_ARGUMENT &&
			    strncmp(err.message, "invalid filter aggregate state: ", 32) == 0;
			tried += cut;
			refused += cut && invalid;
			CHECK(invalid || st == AMQ_OK, "byte %zu: status %d", at, (int)st);
			if (st == AMQ_OK)
				amq_builder_free(&other);
			free(copy);
		}
	}
	CHECK(refused == tried && tried > 0, "%ld of %ld states cut short refused", refused, tried);
	wa.free(wa.ctx, state);
	CHECK(p.files == 0 && p.base.live == 0, "%ld files open, %ld blocks live", p.files,
	      p.base.live);
}

/* What the progress hook heard: phases in order, and keys done of total. */
struct heard {
	char phases[8][16];
	int count;
	bool ordered;
	uint64_t last_done, last_total;
};

static void hear(void *arg, const char *phase, uint64_t done, uint64_t total)
{
	struct heard *h = arg;
	if (h->count == 0 || strcmp(h->phases[h->count - 1], phase) != 0 || done < h->last_done) {
		if (h->count < 8)
			snprintf(h->phases[h->count++], sizeof(h->phases[0]), "%s", phase);
	} else {
		h->ordered &= done >= h->last_done && total == h->last_total;
	}
	h->last_done = done;
	h->last_total = total;
}

/* A spilled build's finish reports counting, then inserting, each from 0 to
 * all its keys; merging runs on the way when there are many. */
static void test_progress(void)
{
	struct spill_probe p;
	amq_allocator a = allocator(&p, AMQ_SPILL_MIN_MEMORY);
	amq_builder b;
	amq_error err;
	struct heard h = {.ordered = true};
	amq_builder_init(&b, AMQ_KIND_CUCKOO, AMQ_LAYOUT_CLASSIC, 0.01, 0, 0, &a, &err);
	b.progress = hear;
	b.progress_arg = &h;
	for (size_t i = 0; i < 600000; i++)
		amq_builder_add(&b, row_hash(i), &err);
	CHECK(h.count >= 1 && strcmp(h.phases[0], "merging runs") == 0, "merged runs: %s",
	      h.count ? h.phases[0] : "nothing");
	h.count = 0;
	amq_filter f;
	CHECK(amq_builder_finish(&b, &f, &err) == AMQ_OK, "finish: %s", err.message);
	CHECK(h.count >= 2 && strcmp(h.phases[h.count - 2], "counting") == 0 &&
		  strcmp(h.phases[h.count - 1], "inserting") == 0 && h.ordered &&
		  h.last_done == h.last_total && h.last_total > 0,
	      "counting then inserting, %llu of %llu at the end (%d phases)",
	      (unsigned long long)h.last_done, (unsigned long long)h.last_total, h.count);
	amq_filter_free(&f, &a);
	amq_builder_free(&b);
	CHECK(p.files == 0 && p.base.live == 0, "closed and freed");
}

int main(void)
{
	test_same_bytes();
	test_mixed_spills();
	test_failures();
	test_many_runs();
	test_scalable_order();
	test_state_limit();
	test_handed_states();
	test_progress();
	test_damaged_state();
	test_too_large_spilled();
	return check_summary();
}
